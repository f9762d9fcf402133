import CCourierSystem
import CourierLocking
import Foundation

/// The thread that watches a ``CurlTransport``'s raw connections (``CurlRawConnection``): one wait
/// set (`csystem_poller`, epoll) for all of them, started with the first, level-triggered, and each
/// ready connection's observer told on this thread.
///
/// The event loops' reactor watches libcurl's own sockets through libcurl's socket callback; a
/// connect-only connection leaves libcurl's hands once connected, so its socket is watched here,
/// by the same kind of wait set, without a multi handle.
final class CurlPoller: Sendable {
    /// An observer held weakly: a connection its owner dropped must not be kept alive by the poller
    /// (the owner's deinit closes it).
    private struct WeakObserver {
        weak var observer: (any RawConnectionObserver)?
    }

    private struct State {
        var observers: [UInt64: WeakObserver] = [:]
        var nextToken: UInt64 = 1
        var stopped = false
    }

    /// The wait set's address (a plain integer, so the value is Sendable): `csystem_poller` is
    /// thread-safe for watch, forget, wait and wake-up, and lives until this object goes.
    private let address: UInt
    private var pointer: OpaquePointer? { OpaquePointer(bitPattern: address) }
    // Guards the observers by token, the token counter and whether the poller stopped.
    private let state = Locked(State())
    private let thread: Locked<CurlThread?> = Locked(nil)

    /// Creates the wait set and starts its thread.
    init() throws(CourierError) {
        guard let created = csystem_poller_create() else {
            throw CourierError(.transportFailed, "The WebSocket poller could not be created (errno \(errno)).")
        }
        address = UInt(bitPattern: UnsafeRawPointer(created))
        do {
            let started = try CurlThread.start(name: "courier-ws-io") { [self] in run() }
            thread.withLock { $0 = started }
        } catch {
            throw CourierError(.transportFailed, "The WebSocket poller thread could not start (error \(error.code)).")
        }
    }

    deinit {
        // The thread holds this object while it runs, so no wait is in progress here.
        csystem_poller_destroy(pointer)
    }

    /// Registers `observer` for `socket`; returns its token, or nil once stopped.
    func register(socket: Int32, observer: any RawConnectionObserver) -> UInt64? {
        state.withLock { state -> UInt64? in
            guard !state.stopped else { return nil }
            let token = state.nextToken
            state.nextToken += 1
            guard csystem_poller_watch(pointer, socket, token, 0, 1) == 0 else { return nil }
            state.observers[token] = WeakObserver(observer: observer)
            return token
        }
    }

    /// Changes what `socket` is watched for; `first` puts it back in the wait set after ``pause(socket:)``.
    func watch(socket: Int32, token: UInt64, reading: Bool, writing: Bool, first: Bool = false) {
        let events = (reading ? CSYSTEM_POLLER_READ : 0) | (writing ? CSYSTEM_POLLER_WRITE : 0)
        _ = csystem_poller_watch(pointer, socket, token, Int32(events), first ? 1 : 0)
    }

    /// Takes `socket` out of the wait set while its owner wants neither reads nor writes (its
    /// observer stays registered): a socket in the wait set reports a hang-up whatever it is
    /// watched for, over and over while nobody reads it.
    func pause(socket: Int32) {
        csystem_poller_forget(pointer, socket)
    }

    /// Stops watching `socket`; its observer hears nothing more. Call before the socket closes.
    func forget(socket: Int32, token: UInt64) {
        state.withLock { state in
            guard state.observers.removeValue(forKey: token) != nil else { return }
            csystem_poller_forget(pointer, socket)
        }
    }

    /// Stops the thread and tells every observer the transport shut down. Idempotent.
    func shutdown() {
        failAll()
        csystem_poller_wakeup(pointer)
        guard
            let running = thread.withLock({ thread -> CurlThread? in
                defer { thread = nil }
                return thread
            })
        else { return }
        // From an observer's callback on the poller thread itself, it cannot wait for itself.
        if running.isCurrent { running.detach() } else { running.join() }
    }

    /// Marks the poller stopped and tells every observer the transport shut down.
    private func failAll() {
        let observers = state.withLock { state -> [any RawConnectionObserver] in
            guard !state.stopped else { return [] }
            state.stopped = true
            defer { state.observers.removeAll() }
            return state.observers.values.compactMap(\.observer)
        }
        for observer in observers { observer.transportDidShutDown() }
    }

    private func run() {
        let capacity = 64
        var tokens = [UInt64](repeating: 0, count: capacity)
        var events = [Int32](repeating: 0, count: capacity)
        while true {
            let count = csystem_poller_wait(pointer, &tokens, &events, Int32(capacity), -1)
            if count < 0 {
                // The wait set itself failed: nothing will be watched any more.
                failAll()
                break
            }
            var ready: [(any RawConnectionObserver, Int32)] = []
            let stopped = state.withLock { state -> Bool in
                for index in 0..<Int(count) {
                    if let observer = state.observers[tokens[index]]?.observer { ready.append((observer, events[index])) }
                }
                return state.stopped
            }
            if stopped { break }
            for (observer, bits) in ready {
                let hangUp = bits & CSYSTEM_POLLER_HANGUP != 0
                observer.connectionIsReady(readable: bits & CSYSTEM_POLLER_READ != 0 || hangUp, writable: bits & CSYSTEM_POLLER_WRITE != 0 || hangUp)
            }
        }
    }
}
