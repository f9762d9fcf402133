import CCurl
import CourierLocking
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request for the event loop, sent from any thread.
enum CurlCommand: Sendable {
    /// Pick up a new transfer.
    case start(CurlTransferHandle)
    /// `suspend()` or `resume()` was called; the loop reads the handle's latest wish.
    case updatePause(CurlTransferHandle)
    /// Acknowledgements may have reopened a full flow-control window.
    case reopenWindow(CurlTransferHandle)
    /// A stream body that had no bytes has some again.
    case bodyAvailable(CurlTransferHandle)
    /// `cancel()` was called.
    case cancel(CurlTransferHandle)
    /// Finish every transfer and stop the loop.
    case shutdown
    /// A test's ``ManualTransportClock`` moved: fire the timeouts now due, then call `done`.
    case clockAdvanced(done: @Sendable () -> Void)
}

/// The lock-protected queue through which other threads talk to the event loop, and the only
/// place that wakes it.
///
/// The loop takes the whole queue at once per iteration. A sender wakes the loop (an `eventfd`
/// write on Linux) only while the loop is in (or about to enter) its wait, at most once per wait, so
/// a busy loop, or a sink calling back into the transport from a pass, costs no system call. The
/// wake-up is claimed under the lock and written after it is released: the loop thread it wakes
/// may run at once, and its first step takes this lock. When
/// the loop sleeps without transfers, a new transfer's sender may run the pass itself instead of
/// waking it (``sendOfferingPass(_:passAllowed:)``).
final class CurlMailbox: Sendable {
    private struct State: Sendable {
        var commands: [CurlCommand] = []
        /// Whether new commands are taken; false from the moment `.shutdown` is queued.
        var accepting = true
        /// The loop has decided to wait and has not taken the queue since.
        var waiting = false
        /// The loop sleeps with no transfer of its own: a sender may run the next pass itself.
        var idle = false
        /// A wakeup was sent during the current wait.
        var woken = false
        /// The address of the loop's reactor; `nil` once the loop has closed it.
        /// `ccurl_reactor_wakeup` is safe from any thread, but not against `ccurl_reactor_destroy`:
        /// a wake-up is claimed under this lock only while this is set (and counted in
        /// `wakesInFlight` until written), and ``close()`` clears it under the lock, then waits for
        /// the count to reach zero, before the loop destroys the reactor. (Kept as an address: the
        /// reactor itself belongs to the loop thread.)
        var reactorAddress: Int?
    }

    // Protects the command queue, the wait handshake flags and the reactor address used for wakeups.
    private let state: Locked<State>
    /// Wake-ups claimed under the lock and not yet written (see `State.reactorAddress`).
    private let wakesInFlight = Atomic<Int>(0)
    // Protects the loop's unfinished transfers per origin (host and port); the transport reads them
    // to send a new transfer where its origin has the fewest.
    private let load = Locked([String: Int]())
    /// The transfers of every loop of the transport, counted with this loop's (``CurlLoopScheduling``).
    private let transportTransfers: CurlTransferGauge

    /// How many unfinished transfers the loop has to `origin`, and in all.
    func transfersInFlight(to origin: String) -> (origin: Int, total: Int) {
        load.withLock { ($0[origin] ?? 0, $0.values.reduce(0, +)) }
    }

    /// Counts a transfer to `origin` that the transport is about to send here.
    func transferAssigned(origin: String) {
        load.withLock { $0[origin, default: 0] += 1 }
        transportTransfers.transferStarted()
    }

    /// Called by the loop when a transfer to `origin` delivers `completed`.
    func transferEnded(origin: String) {
        load.withLock { load in
            let remaining = (load[origin] ?? 1) - 1
            load[origin] = remaining > 0 ? remaining : nil
        }
        transportTransfers.transferEnded()
    }

    /// Whether a sender may run a pass while the loop sleeps: the reactor sees new sockets then,
    /// and libcurl resolves host names asynchronously (a synchronous lookup would block the
    /// sender's thread, often one of Swift's few cooperative threads, for the whole lookup).
    /// Evaluated once, on first use, which is always after a transport has loaded libcurl.
    static let sendersMayRunPasses =
        ccurl_reactor_supports_foreign_passes() != 0
        && ccurl_library().features & CCURL_VERSION_ASYNCHDNS != 0

    /// Creates the mailbox for the loop that waits in `reactor`; its transfers count in `transportTransfers` too.
    init(reactor: OpaquePointer, transportTransfers: CurlTransferGauge) {
        state = Locked(State(reactorAddress: Int(bitPattern: reactor)))
        self.transportTransfers = transportTransfers
    }

    /// Queues `command`; returns false (and drops it) when the transport has shut down.
    @discardableResult
    func send(_ command: CurlCommand) -> Bool {
        let (accepted, wake) = state.withLock { state -> (Bool, Int?) in
            guard state.accepting else { return (false, nil) }
            if case .shutdown = command { state.accepting = false }
            state.commands.append(command)
            return (true, claimWake(&state))
        }
        sendWake(wake)
        return accepted
    }

    /// What became of a command sent with ``sendOfferingPass(_:passAllowed:)``.
    enum Offer {
        /// The transport has shut down; the command was dropped.
        case rejected
        /// Queued; the loop runs it (woken if it had to be).
        case queued
        /// Queued while the loop sleeps idle, and the loop was not woken: the sender should run the pass
        /// itself (``CurlEventLoop/runPassIfIdle()``) or, failing that, call ``wakeIfWaiting()``.
        case runPass
    }

    /// Queues `command` like ``send(_:)``; when `passAllowed` and the loop sleeps without transfers,
    /// offers the sender to run the pass instead of waking the loop (where the reactor allows
    /// passes on other threads).
    func sendOfferingPass(_ command: CurlCommand, passAllowed: Bool) -> Offer {
        let (offer, wake) = state.withLock { state -> (Offer, Int?) in
            guard state.accepting else { return (.rejected, nil) }
            if case .shutdown = command { state.accepting = false }
            state.commands.append(command)
            // Only an idle loop: a busy one wakes soon anyway, and passes run by the senders would
            // fight its thread for the lock. `idle` stays set after the offer: the pass may finish
            // the transfer before the loop wakes, and the next sender should get the offer too.
            if passAllowed, Self.sendersMayRunPasses, state.waiting, state.idle, !state.woken {
                return (.runPass, nil)
            }
            return (.queued, claimWake(&state))
        }
        sendWake(wake)
        return offer
    }

    /// Whether the loop sleeps (or is about to) without transfers, unwoken: the state in which a
    /// sender gets the offer to run the pass.
    var sleepsIdle: Bool {
        state.withLock { $0.waiting && $0.idle && !$0.woken }
    }

    /// Wakes the loop if it sleeps (or is about to) and nobody has woken it since.
    func wakeIfWaiting() {
        sendWake(state.withLock { claimWake(&$0) })
    }

    /// Under the lock: claims the wake-up of a loop that waits (or is about to) and that nobody
    /// has woken since, returning its reactor's address; the caller passes it to ``sendWake(_:)``
    /// after releasing the lock.
    private func claimWake(_ state: inout State) -> Int? {
        guard state.waiting, !state.woken, let address = state.reactorAddress else { return nil }
        state.woken = true
        wakesInFlight.add(1, ordering: .relaxed)
        return address
    }

    /// Writes a wake-up ``claimWake(_:)`` claimed, if any. Outside the lock: the woken loop thread
    /// may preempt its waker at once and then wait for the lock the waker still held (three thread
    /// switches per wake-up instead of one; Benchmarks/PROFILES.md, workload M at 8 in flight).
    private func sendWake(_ reactorAddress: Int?) {
        guard let reactorAddress else { return }
        ccurl_reactor_wakeup(OpaquePointer(bitPattern: reactorAddress))
        wakesInFlight.subtract(1, ordering: .releasing)
    }

    /// Called by the loop before it waits: returns false when commands are already queued
    /// (the wait would be a wasted sleep), otherwise marks the loop as waiting, and as `idle` when it
    /// has no transfer.
    func prepareToWait(idle: Bool) -> Bool {
        state.withLock { state in
            guard state.commands.isEmpty else { return false }
            state.waiting = true
            state.idle = idle
            return true
        }
    }

    /// Called by the loop: moves every queued command into `buffer` (which must be empty) and ends the wait.
    func takeCommands(into buffer: inout [CurlCommand]) {
        state.withLock { state in
            state.waiting = false
            state.idle = false
            state.woken = false
            swap(&state.commands, &buffer)
        }
    }

    /// Called by a pass on another thread while the loop thread sleeps: moves every queued command
    /// into `buffer` (which must be empty); the loop still counts as waiting.
    func takeCommandsDuringWait(into buffer: inout [CurlCommand]) {
        state.withLock { state in swap(&state.commands, &buffer) }
    }

    /// Called by the loop before it destroys the reactor: nothing will wake it or queue for it
    /// again, and no wake-up is still being written when this returns.
    func close() {
        state.withLock { state in
            state.accepting = false
            state.reactorAddress = nil
            state.commands.removeAll()
        }
        // No wake-up is claimed from here on; one claimed before may still be writing.
        while wakesInFlight.load(ordering: .acquiring) > 0 { sched_yield() }
    }
}
