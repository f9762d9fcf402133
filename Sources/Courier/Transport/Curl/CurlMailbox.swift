import CCurl

/// A request for the event loop, sent from any thread.
enum CurlCommand: Sendable {
    /// Pick up a new transfer.
    case start(CurlTransferHandle)
    /// `suspend()` or `resume()` was called; the loop reads the handle's latest wish.
    case updatePause(CurlTransferHandle)
    /// Acknowledgements may have reopened a full flow-control window.
    case reopenWindow(CurlTransferHandle)
    /// `cancel()` was called.
    case cancel(CurlTransferHandle)
    /// Finish every transfer and stop the loop.
    case shutdown
}

/// The lock-protected queue through which other threads talk to the event loop, and the only
/// place that wakes it.
///
/// The loop takes the whole queue at once per iteration. A sender wakes the loop (an `eventfd`
/// write on Linux) only while the loop is in (or about to enter) its wait, at most once per wait, so
/// a busy loop, or a sink calling back into the transport on the loop thread, costs no system call.
final class CurlMailbox: Sendable {
    private struct State: Sendable {
        var commands: [CurlCommand] = []
        /// Whether new commands are taken; false from the moment `.shutdown` is queued.
        var accepting = true
        /// The loop has decided to wait and has not taken the queue since.
        var waiting = false
        /// A wakeup was sent during the current wait.
        var woken = false
        /// The address of the loop's reactor; `nil` once the loop has closed it.
        /// `ccurl_reactor_wakeup` is safe from any thread, but not against `ccurl_reactor_destroy`:
        /// calling it only under this lock, and clearing this under the lock before the loop
        /// destroys the reactor, keeps the two apart. (Kept as an address: the reactor itself
        /// belongs to the loop thread.)
        var reactorAddress: Int?
    }

    // Protects the command queue, the wait handshake flags and the reactor address used for wakeups.
    private let state: Locked<State>
    // Protects the loop's unfinished transfers per origin (host and port); the transport reads them
    // to send a new transfer where its origin has the fewest.
    private let load = Locked([String: Int]())

    /// How many unfinished transfers the loop has to `origin`, and in all.
    func transfersInFlight(to origin: String) -> (origin: Int, total: Int) {
        load.withLock { ($0[origin] ?? 0, $0.values.reduce(0, +)) }
    }

    /// Counts a transfer to `origin` that the transport is about to send here.
    func transferAssigned(origin: String) {
        load.withLock { $0[origin, default: 0] += 1 }
    }

    /// Called by the loop when a transfer to `origin` delivers `completed`.
    func transferEnded(origin: String) {
        load.withLock { load in
            let remaining = (load[origin] ?? 1) - 1
            load[origin] = remaining > 0 ? remaining : nil
        }
    }

    /// Creates the mailbox for the loop that waits in `reactor`.
    init(reactor: OpaquePointer) {
        state = Locked(State(reactorAddress: Int(bitPattern: reactor)))
    }

    /// Queues `command`; returns false (and drops it) when the transport has shut down.
    @discardableResult
    func send(_ command: CurlCommand) -> Bool {
        state.withLock { state in
            guard state.accepting else { return false }
            if case .shutdown = command { state.accepting = false }
            state.commands.append(command)
            if state.waiting, !state.woken, let address = state.reactorAddress {
                state.woken = true
                ccurl_reactor_wakeup(OpaquePointer(bitPattern: address))
            }
            return true
        }
    }

    /// Called by the loop before it waits: returns false when commands are already queued
    /// (the wait would be a wasted sleep), otherwise marks the loop as waiting.
    func prepareToWait() -> Bool {
        state.withLock { state in
            guard state.commands.isEmpty else { return false }
            state.waiting = true
            return true
        }
    }

    /// Called by the loop: moves every queued command into `buffer` (which must be empty) and ends the wait.
    func takeCommands(into buffer: inout [CurlCommand]) {
        state.withLock { state in
            state.waiting = false
            state.woken = false
            swap(&state.commands, &buffer)
        }
    }

    /// Called by the loop before it destroys the reactor: nothing will wake it or queue for it again.
    func close() {
        state.withLock { state in
            state.accepting = false
            state.reactorAddress = nil
            state.commands.removeAll()
        }
    }
}
