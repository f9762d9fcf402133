import Courier
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierLocking

/// Turns SIGINT (Ctrl-C) and SIGTERM into an orderly stop.
///
/// The default handlers are ignored (`SIG_IGN`) and the signals are delivered to a dispatch
/// source, so no work ever runs in a raw signal handler. The first signal runs the handlers the
/// running command registered (cancel the requests: one per slot, so that transfers running in
/// parallel each have theirs); the command then cleans up, reports, and exits with 130. If it has
/// not done so after a grace period, or on a second signal, the process exits with 130 at once.
final class Interrupts: Sendable {
    private struct State {
        var received: Int32?
        var handlers: [Int: @Sendable () -> Void] = [:]
    }

    private let state = Locked(State())
    private let queue = DispatchQueue(label: "courier.interrupts")
    private let grace: Duration
    // Dispatch sources are not Sendable; these are created and resumed once in `init` and never touched again.
    private nonisolated(unsafe) let sources: [any DispatchSourceSignal]

    /// Installs the handling for SIGINT and SIGTERM (call once, early).
    init(grace: Duration = .seconds(3)) {
        self.grace = grace
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            sources.append(DispatchSource.makeSignalSource(signal: signalNumber, queue: queue))
        }
        self.sources = sources
        for source in sources {
            let number = Int32(source.handle)
            source.setEventHandler { [weak self] in self?.received(number) }
            source.resume()
        }
        // A closed pipe on standard output must not kill the process silently; writes report it.
        signal(SIGPIPE, SIG_IGN)
    }

    /// Whether SIGINT or SIGTERM has been received.
    var wasInterrupted: Bool {
        state.withLock { $0.received != nil }
    }

    /// Sets what the first signal does for `slot` (typically: cancel the request in flight there),
    /// replacing the slot's previous handler. If a signal already arrived, `handler` runs at once.
    func onInterrupt(slot: Int = 0, _ handler: @escaping @Sendable () -> Void) {
        let alreadyInterrupted = state.withLock { state -> Bool in
            state.handlers[slot] = handler
            return state.received != nil
        }
        if alreadyInterrupted { queue.async(execute: handler) }
    }

    /// Removes the handler of `slot`; a signal with no handler left exits at once.
    func clearHandler(slot: Int = 0) {
        state.withLock { _ = $0.handlers.removeValue(forKey: slot) }
    }

    private func received(_ signalNumber: Int32) {
        let (first, handlers) = state.withLock { state -> (Bool, [@Sendable () -> Void]) in
            let first = state.received == nil
            if first { state.received = signalNumber }
            return (first, state.handlers.sorted { $0.key < $1.key }.map(\.value))
        }
        guard first, !handlers.isEmpty else {
            Console.shared.message("courier: interrupted")
            exit(ExitCode.interrupted.rawValue)
        }
        handlers.forEach { $0() }
        let seconds = Int(grace.components.seconds)
        queue.asyncAfter(deadline: .now() + .seconds(seconds)) {
            Console.shared.message("courier: interrupted (did not stop within \(seconds) s)")
            exit(ExitCode.interrupted.rawValue)
        }
    }
}
