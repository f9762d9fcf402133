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
/// The loop takes the whole queue at once per iteration. A sender wakes the loop with
/// `curl_multi_wakeup` only while the loop is in (or about to enter) `curl_multi_poll`, at most once
/// per poll, so a busy loop, or a sink calling back into the transport on the loop thread, costs no
/// system call.
final class CurlMailbox: Sendable {
    private struct State: Sendable {
        var commands: [CurlCommand] = []
        /// Whether new commands are taken; false from the moment `.shutdown` is queued.
        var accepting = true
        /// The loop has decided to poll and has not taken the queue since.
        var polling = false
        /// A wakeup was sent during the current poll.
        var woken = false
        /// The address of the multi handle to wake; `nil` once the loop has closed it.
        /// `curl_multi_wakeup` is the one libcurl call that is safe from any thread, but not against
        /// `curl_multi_cleanup`: calling it only under this lock, and clearing this under the lock
        /// before cleanup, keeps the two apart. (Kept as an address: the handle itself belongs to
        /// the loop thread.)
        var multiAddress: Int?
    }

    // Protects the command queue, the poll handshake flags and the multi handle used for wakeups.
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

    /// Creates the mailbox for the loop that owns `multi`.
    init(multi: OpaquePointer) {
        state = Locked(State(multiAddress: Int(bitPattern: multi)))
    }

    /// Queues `command`; returns false (and drops it) when the transport has shut down.
    @discardableResult
    func send(_ command: CurlCommand) -> Bool {
        state.withLock { state in
            guard state.accepting else { return false }
            if case .shutdown = command { state.accepting = false }
            state.commands.append(command)
            if state.polling, !state.woken, let address = state.multiAddress {
                state.woken = true
                _ = ccurl_multi_wakeup(OpaquePointer(bitPattern: address))
            }
            return true
        }
    }

    /// Called by the loop before `curl_multi_poll`: returns false when commands are already waiting
    /// (poll would be a wasted sleep), otherwise marks the loop as polling.
    func preparePoll() -> Bool {
        state.withLock { state in
            guard state.commands.isEmpty else { return false }
            state.polling = true
            return true
        }
    }

    /// Called by the loop: moves every queued command into `buffer` (which must be empty) and ends the poll.
    func takeCommands(into buffer: inout [CurlCommand]) {
        state.withLock { state in
            state.polling = false
            state.woken = false
            swap(&state.commands, &buffer)
        }
    }

    /// Called by the loop before it cleans up the multi handle: nothing will wake it or queue for it again.
    func close() {
        state.withLock { state in
            state.accepting = false
            state.multiAddress = nil
            state.commands.removeAll()
        }
    }
}
