import Synchronization

/// The caller's handle on one curl transfer: thread-safe, idempotent requests that the event loop
/// carries out, plus the few counters the loop's callbacks read without a lock.
final class CurlTransferHandle: TransportTransfer {
    /// The exchange to run.
    let request: TransportRequest
    /// Where the transfer's events go: called only inside the loop's passes (on the loop thread,
    /// or on the thread that started the transfer while the loop slept), or once on the caller's
    /// thread when the transport had already shut down.
    let sink: any TransportEventSink
    /// When the transfer was handed to the transport (the deadline message counts from here).
    let submitted: ContinuousClock.Instant
    /// The request's host and port, which the loops' transfer counts are kept by.
    let origin: String

    private let mailbox: CurlMailbox

    /// Latest `suspend()`/`resume()` wish. The loop reads it when it handles `.updatePause`, so
    /// concurrent suspend/resume calls settle on whichever stored last.
    let suspendRequested = Atomic<Bool>(false)
    /// Set once by `cancel()`; the write callback stops delivering as soon as it sees it.
    let cancelRequested = Atomic<Bool>(false)
    /// Body bytes the sink has acknowledged.
    let acknowledged = Atomic<Int>(0)
    /// Body bytes delivered to the sink; written only inside the loop's passes.
    let delivered = Atomic<Int>(0)
    /// Set by the loop when it paused for backpressure; `acknowledge` clears it and wakes the loop.
    let awaitingAcknowledgement = Atomic<Bool>(false)

    /// Whether the transfer may share an HTTP/2 connection: it waits for one being set up rather
    /// than open its own (CURLOPT_PIPEWAIT), and its response teaches the transport which version
    /// its origin speaks.
    let mayMultiplex: Bool

    init(
        request: TransportRequest, sink: any TransportEventSink, mailbox: CurlMailbox, origin: String, mayMultiplex: Bool = false,
        submitted: ContinuousClock.Instant = .now
    ) {
        self.request = request
        self.sink = sink
        self.mailbox = mailbox
        self.origin = origin
        self.mayMultiplex = mayMultiplex
        self.submitted = submitted
    }

    /// Pauses sending and receiving; the connection stays open.
    func suspend() {
        suspendRequested.store(true, ordering: .sequentiallyConsistent)
        mailbox.send(.updatePause(self))
    }

    /// Continues after `suspend()`.
    func resume() {
        suspendRequested.store(false, ordering: .sequentiallyConsistent)
        mailbox.send(.updatePause(self))
    }

    /// Ends the transfer with `.cancelled` unless it already completed.
    func cancel() {
        if !cancelRequested.exchange(true, ordering: .sequentiallyConsistent) {
            mailbox.send(.cancel(self))
        }
    }

    /// Tells the loop that a stream body which had no bytes has some (called by its reader thread).
    func bodyBecameAvailable() {
        mailbox.send(.bodyAvailable(self))
    }

    /// Records consumed body bytes and wakes the loop when that reopens a full window.
    func acknowledge(_ bytes: Int) {
        guard bytes > 0 else { return }
        let total = acknowledged.add(bytes, ordering: .sequentiallyConsistent).newValue
        // Pairs with the loop's store-then-recheck in CurlExchange.receiveBody: with both sides
        // sequentially consistent, either this load sees the flag or the loop sees this add.
        guard awaitingAcknowledgement.load(ordering: .sequentiallyConsistent),
            backlog(acknowledged: total) <= request.flowControlWindow / 2,
            awaitingAcknowledgement.compareExchange(
                expected: true, desired: false,
                ordering: .sequentiallyConsistent
            ).exchanged
        else { return }
        mailbox.send(.reopenWindow(self))
    }

    /// Body bytes delivered and not yet acknowledged.
    func backlog(acknowledged total: Int? = nil) -> Int {
        delivered.load(ordering: .sequentiallyConsistent) - (total ?? acknowledged.load(ordering: .sequentiallyConsistent))
    }
}
