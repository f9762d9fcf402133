import Foundation
import CourierTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP server on 127.0.0.1 that plays the same script to every connection it accepts, for
/// hostile replies that ``RawReplyServer`` (one write, then close or hold) cannot express: a reply
/// in several writes, an endless head or body, a head held open half way, an upload left unread.
///
/// Each connection runs on its own thread; ``stop()`` shuts every connection down (which ends a
/// blocked read or write and every `hold`), waits for all threads and closes every descriptor, so
/// a test can count descriptors after it.
final class ScriptedReplyServer: Sendable {
    /// One thing the server does to a connection, in order.
    enum Step: Sendable {
        /// Reads until the end of the request head (CRLF CRLF), or until the client closes.
        case readHead
        /// Reads and discards up to this many bytes (of the request body), or until the client closes.
        case read(Int)
        /// Writes these bytes.
        case write(Data)
        /// Writes these bytes again and again until the client goes away or the server stops.
        case writeForever(Data)
        /// Neither reads nor writes: the connection stays open until the server stops.
        case hold
        /// Neither reads nor writes until `pause` is released (or the server stops), then goes on.
        case pause(Pause)
        /// Closes with a reset (RST, `SO_LINGER` 0) instead of a FIN; the script ends here.
        case reset
    }

    /// A point in a script where the connection waits for the test (see ``Step/pause(_:)``).
    final class Pause: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)
        private let reached = Mutex(false)

        init() {}

        /// Whether a connection has come to this pause.
        var isReached: Bool { reached.withLock { $0 } }

        /// Lets the connection waiting here (or the next to come) go on.
        func release() { semaphore.signal() }

        fileprivate func wait() {
            reached.withLock { $0 = true }
            semaphore.wait()
        }
    }

    let port: Int
    private let listener: Int32
    private let steps: [Step]
    private let state = Mutex(State())
    private let threads = DispatchGroup()

    private struct State {
        var stopping = false
        var connections: Set<Int32> = []
        var holds: [DispatchSemaphore] = []
        var pauses: [Pause] = []
        var accepted = 0
        var bytesWritten = 0
        var bytesRead = 0
    }

    /// `http://127.0.0.1:<port>/hostile`.
    var url: URL {
        // The port is a number this server bound, so the URL always parses.
        URL(string: "http://127.0.0.1:\(port)/hostile") ?? URL(fileURLWithPath: "/")
    }

    /// How many connections were accepted.
    var connectionCount: Int { state.withLock { $0.accepted } }
    /// Bytes written to all connections so far.
    var bytesWritten: Int { state.withLock { $0.bytesWritten } }
    /// Bytes read from all connections so far.
    var bytesRead: Int { state.withLock { $0.bytesRead } }

    /// Starts listening; every connection gets `steps`, then an orderly close (unless a step is `.reset`).
    init(_ steps: [Step]) throws {
        self.steps = steps
        let (descriptor, port) = try bindLoopbackSocket()
        guard listen(descriptor, 64) == 0 else {
            close(descriptor)
            throw RawServerError(description: "listen() failed: \(errno)")
        }
        listener = descriptor
        self.port = port
        threads.enter()
        let thread = Thread { [self] in
            acceptLoop()
            threads.leave()
        }
        thread.name = "ScriptedReplyServer"
        thread.start()
    }

    /// Reads the request head, writes `reply`, closes: ``RawReplyServer``'s script, with this
    /// server's clean stop.
    convenience init(reply: Data) throws {
        try self.init([.readHead, .write(reply)])
    }

    private func acceptLoop() {
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            let admitted = state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.accepted += 1
                state.connections.insert(connection)
                return true
            }
            guard admitted else {
                close(connection)
                return
            }
            threads.enter()
            let thread = Thread { [self] in
                serve(connection)
                threads.leave()
            }
            thread.name = "ScriptedReplyServer connection"
            thread.start()
        }
    }

    private func serve(_ connection: Int32) {
        var resets = false
        run: for step in steps {
            switch step {
            case .readHead:
                guard readHead(connection) else { break run }
            case .read(let count):
                guard read(connection, count: count) else { break run }
            case .write(let data):
                guard write(connection, data) else { break run }
            case .writeForever(let data):
                while write(connection, data) {}
                break run
            case .hold:
                let semaphore = DispatchSemaphore(value: 0)
                let stopping = state.withLock { state -> Bool in
                    if !state.stopping { state.holds.append(semaphore) }
                    return state.stopping
                }
                if !stopping { semaphore.wait() }
                break run
            case .pause(let pause):
                let stopping = state.withLock { state -> Bool in
                    if !state.stopping { state.pauses.append(pause) }
                    return state.stopping
                }
                if stopping { break run }
                pause.wait()
                if state.withLock({ $0.stopping }) { break run }
            case .reset:
                resets = true
                break run
            }
        }
        if resets {
            var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        }
        // Removed under the lock before closing, so `stop()` never shuts down a reused descriptor.
        state.withLock { _ = $0.connections.remove(connection) }
        close(connection)
    }

    private func readHead(_ connection: Int32) -> Bool {
        var tail = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 1)
        // One byte at a time so that nothing past the head (an upload's body) is consumed.
        while !(tail.count == 4 && tail == [13, 10, 13, 10]) {
            let count = recv(connection, &buffer, 1, 0)
            if count <= 0 { return false }
            state.withLock { $0.bytesRead += 1 }
            tail.append(buffer[0])
            if tail.count > 4 { tail.removeFirst() }
        }
        return true
    }

    private func read(_ connection: Int32, count: Int) -> Bool {
        var remaining = count
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while remaining > 0 {
            let received = recv(connection, &buffer, min(buffer.count, remaining), 0)
            if received <= 0 { return false }
            state.withLock { $0.bytesRead += received }
            remaining -= received
        }
        return true
    }

    private func write(_ connection: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { raw -> Bool in
            guard let base = raw.baseAddress else { return true }
            var offset = 0
            while offset < raw.count {
                let sent = send(connection, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { return false }
                state.withLock { $0.bytesWritten += sent }
                offset += sent
            }
            return true
        }
    }

    /// Stops accepting, ends every connection (blocked reads, writes and holds return), waits for
    /// every thread and closes every descriptor. Idempotent.
    func stop() {
        let (first, holds, pauses) = state.withLock { state -> (Bool, [DispatchSemaphore], [Pause]) in
            guard !state.stopping else { return (false, [], []) }
            state.stopping = true
            for connection in state.connections { shutdown(connection, Int32(SHUT_RDWR)) }
            return (true, state.holds, state.pauses)
        }
        guard first else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        for hold in holds { hold.signal() }
        for pause in pauses { pause.release() }
        threads.wait()
        close(listener)
    }
}
