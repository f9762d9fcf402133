import Foundation
import CourierLocking

/// One real transfer feeding any number of callers.
///
/// Every event is recorded (until the replay limit) and passed to each subscriber while the lock
/// is held: a subscriber's sink only enqueues onto its request's executor, so this is cheap, and it
/// guarantees a late joiner receives the replay before any live event.
final class SharedTransfer: TransportEventSink, Sendable {
    private struct State {
        var subscribers: [Int: Subscriber] = [:]
        var nextID = 0
        var log: [TransportEvent] = []
        var loggedBytes = 0
        var replayable = true
        var completed = false
        var transfer: (any TransportTransfer)?
        /// Bytes received before `transfer` was known, still to acknowledge.
        var pendingAcknowledgement = 0

        /// Drops what only a running transfer needs once its completion was delivered: the
        /// transport's handle (which holds this object as its sink), the replay log, and every
        /// caller that received the completion (each holds its request). Only suspended callers
        /// stay, until they resume or cancel and take their held events.
        mutating func releaseAfterCompletion() {
            transfer = nil
            log = []
            replayable = false
            subscribers = subscribers.filter { $0.value.held != nil }
        }
    }

    private struct Subscriber {
        let sink: any TransportEventSink
        /// Events held while this caller is suspended; `nil` when it is not.
        var held: [TransportEvent]?
    }

    let key: DeduplicationKey
    private let maximumReplayBytes: Int
    private let state: Locked<State>
    private let onEnd: @Sendable (SharedTransfer) -> Void

    /// A transfer whose first caller is `firstSubscriber` (see ``firstSubscription``).
    init(
        key: DeduplicationKey, firstSubscriber: any TransportEventSink, maximumReplayBytes: Int,
        onEnd: @escaping @Sendable (SharedTransfer) -> Void
    ) {
        self.key = key
        self.maximumReplayBytes = maximumReplayBytes
        self.onEnd = onEnd
        // Born with its first caller, so it is never seen without one before it has started.
        var initial = State()
        initial.subscribers[0] = Subscriber(sink: firstSubscriber, held: nil)
        initial.nextID = 1
        state = Locked(initial)
    }

    /// The first caller's handle.
    var firstSubscription: Subscription { Subscription(shared: self, id: 0) }

    func start(_ request: TransportRequest, on transport: any Transport) {
        // Events can arrive from inside `startTransfer` (a transport that fails at once); they are handled by `receive`.
        let transfer = transport.startTransfer(request, sink: self)
        let (pending, orphaned) = state.withLock { state -> (Int, Bool) in
            // A transfer that already completed is not kept: it holds this object as its sink.
            if !state.completed { state.transfer = transfer }
            let pending = state.pendingAcknowledgement
            state.pendingAcknowledgement = 0
            return (pending, state.subscribers.isEmpty && !state.completed)
        }
        if pending > 0 { transfer.acknowledge(pending) }
        if orphaned { transfer.cancel() }
    }

    /// Adds a caller, who first receives everything so far and then every later event; nil when
    /// the transfer can no longer give a new caller every byte (completed, past the replay limit,
    /// or abandoned by its last caller).
    func join(_ sink: any TransportEventSink) -> Subscription? {
        let id = state.withLock { state -> Int? in
            guard !state.completed, state.replayable, !state.subscribers.isEmpty else { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = Subscriber(sink: sink, held: nil)
            replay(state.log, to: sink)
            return id
        }
        return id.map { Subscription(shared: self, id: $0) }
    }

    /// Replays the log with the body so far merged into one chunk: one progress jump for a late joiner.
    private func replay(_ log: [TransportEvent], to sink: any TransportEventSink) {
        var body = Data()
        for event in log {
            if case .body(let chunk) = event {
                body.append(chunk)
                continue
            }
            if !body.isEmpty {
                sink.receive(.body(body))
                body = Data()
            }
            sink.receive(event)
        }
        if !body.isEmpty { sink.receive(.body(body)) }
    }

    // MARK: - Events from the real transfer

    func receive(_ event: TransportEvent) {
        let (transfer, acknowledge, ended) = state.withLock { state -> ((any TransportTransfer)?, Int, Bool) in
            if case .body(let data) = event {
                state.loggedBytes += data.count
                if state.loggedBytes > maximumReplayBytes {
                    state.replayable = false
                    state.log.removeAll()
                }
            }
            if state.replayable { state.log.append(event) }
            if case .completed = event { state.completed = true }
            for id in state.subscribers.keys {
                deliver(event, to: id, in: &state)
            }
            if state.completed { state.releaseAfterCompletion() }
            guard case .body(let data) = event else { return (nil, 0, state.completed) }
            if state.transfer == nil { state.pendingAcknowledgement += data.count }
            return (state.transfer, data.count, false)
        }
        // Each caller stores or copies what it needs, so the shared transfer is never held back by one of them.
        if acknowledge > 0 { transfer?.acknowledge(acknowledge) }
        if ended { onEnd(self) }
    }

    private func deliver(_ event: TransportEvent, to id: Int, in state: inout State) {
        guard var subscriber = state.subscribers[id] else { return }
        if subscriber.held != nil {
            subscriber.held?.append(event)
            state.subscribers[id] = subscriber
        } else {
            subscriber.sink.receive(event)
        }
    }

    // MARK: - Callers' verbs

    func suspend(_ id: Int) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id], subscriber.held == nil else { return }
            subscriber.held = []
            state.subscribers[id] = subscriber
        }
    }

    func resume(_ id: Int) {
        state.withLock { state in
            guard var subscriber = state.subscribers[id], let held = subscriber.held else { return }
            held.forEach(subscriber.sink.receive)
            subscriber.held = nil
            // After the completion nothing more comes: a caller that has it all is let go.
            state.subscribers[id] = state.completed ? nil : subscriber
        }
    }

    /// Detaches a caller (it receives its own `.cancelled`); the last one out cancels the transfer.
    func cancel(_ id: Int) {
        let (subscriber, transferToCancel) = state.withLock { state -> (Subscriber?, (any TransportTransfer)?) in
            guard let subscriber = state.subscribers.removeValue(forKey: id) else { return (nil, nil) }
            if state.completed, subscriber.held.map({ $0.contains(where: \.isCompletion) }) != true {
                // Already completed and delivered: nothing more to tell this caller.
                return (nil, nil)
            }
            let last = state.subscribers.isEmpty && !state.completed
            if last { state.replayable = false }
            return (subscriber, last ? state.transfer : nil)
        }
        guard let subscriber else { return }
        subscriber.sink.receive(
            .completed(
                error: CourierError(.cancelled, "The request was cancelled."),
                metrics: TransferMetrics(transport: "deduplicated")))
        if let transferToCancel {
            transferToCancel.cancel()
            onEnd(self)
        }
    }
}

/// One caller's handle on a shared transfer.
final class Subscription: TransportTransfer, Sendable {
    let shared: SharedTransfer
    let id: Int

    init(shared: SharedTransfer, id: Int) {
        self.shared = shared
        self.id = id
    }

    func suspend() { shared.suspend(id) }
    func resume() { shared.resume(id) }
    func cancel() { shared.cancel(id) }
    // The shared transfer acknowledges bytes itself once every caller has them.
    func acknowledge(_ bytes: Int) {}
}

extension TransportEvent {
    var isCompletion: Bool {
        if case .completed = self { return true }
        return false
    }
}
