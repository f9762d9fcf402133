import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierLocking

/// The serial executor each request actor runs on: a FIFO of work drained by one thread at a time.
///
/// Transport events enter the request through ``execute(inline:_:)`` and the actor's
/// `assumeIsolated`, so they keep their order and need no `Task` each; Swift jobs (awaiting
/// `request.state`, hooks added from async code) go through the same FIFO, so both kinds of work
/// interleave in arrival order.
///
/// When nothing is running, work submitted with `inline: true` runs at once on the calling thread,
/// so starting a request costs no thread hop. Transport threads submit with `inline: false`: their
/// work never runs on the transport's own thread. It is drained by the task awaiting the request's
/// response when one is parked in ``awaitWork(unlessDone:)`` (one wake-up, and the response is returned from
/// there), otherwise on a global queue; inside a ``DeliveryBatch`` the drain starts when the
/// transport's pass ends. Swift jobs are always run from a drain on the global queue, never nested
/// inside a caller's work.
final class RequestExecutor: SerialExecutor, Sendable {
    private enum Item: Sendable {
        case job(UnownedJob)
        case work(@Sendable () -> Void)
        /// A transport event for the exchange `relay` stands for: queued as is, so a small
        /// request's three events cost no closure allocation each.
        case event(ExchangeRelay, TransportEvent)
    }

    private struct State: Sendable {
        /// Slots before `head` have run and are emptied at once: they may hold body chunks, and
        /// under a steady stream of events the FIFO may not run empty until the transfer ends.
        var items: [Item?]
        var head = 0
        /// The thread draining the FIFO right now, if any: the thread isolated to the request.
        var drainer: pthread_t?
        /// A task awaiting the request's response that offers to run the next drain itself.
        var host: HostSlot = .vacant

        init() {
            // A small request queues about five items (resume, its handler, three events): one
            // allocation instead of three growths.
            items = []
            items.reserveCapacity(8)
        }
    }

    /// The task that hosts drains, if one waits; see ``awaitWork(unlessDone:)``.
    private enum HostSlot {
        case vacant
        /// A task is suspended in ``awaitWork(unlessDone:)``.
        case parked(CheckedContinuation<HostWake, Never>)
    }

    /// Why a task suspended in ``awaitWork(unlessDone:)`` resumed, or did not suspend.
    enum HostWake {
        /// Work arrived and the executor is claimed for the host: call ``drainAsHost()`` next.
        case drain
        /// What the host waits for is done, or ``wakeHost()`` was called and it may be.
        case recheck
        /// Another task already hosts this executor's drains, or the calling task is cancelled:
        /// wait for the response without hosting.
        case unavailable
    }

    private let state = Locked(State())

    func enqueue(_ job: consuming ExecutorJob) {
        submit(.job(UnownedJob(job)), inline: false)
    }

    /// Runs `work` on the executor after everything already submitted; `inline` allows running it
    /// on the calling thread when the executor is idle.
    func execute(inline: Bool, _ work: @escaping @Sendable () -> Void) {
        submit(.work(work), inline: inline)
    }

    /// Hands `event` to `relay` on the executor, after everything already submitted; never on the
    /// calling thread (transport threads call this).
    func deliver(_ event: TransportEvent, to relay: ExchangeRelay) {
        submit(.event(relay, event), inline: false)
    }

    /// From the drain, while it hands `relay` an event: takes the next queued item if it is
    /// another event for `relay`, so a batch of events (a small response's head, body and end)
    /// enters the request once.
    func takeNextEvent(for relay: ExchangeRelay) -> TransportEvent? {
        state.withLock { state in
            guard state.head < state.items.count, case .event(let next, let event)? = state.items[state.head],
                next === relay
            else { return nil }
            state.items[state.head] = nil
            state.head += 1
            return event
        }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        precondition(isDrainingOnCurrentThread, "Courier: request state touched outside the request's executor")
    }

    /// Whether the calling thread is the one draining this executor right now.
    var isDrainingOnCurrentThread: Bool {
        let current = pthread_self()
        return state.withLock { state in state.drainer.map { pthread_equal($0, current) != 0 } ?? false }
    }

    private func submit(_ item: Item, inline: Bool) {
        let current = pthread_self()
        let startDrain = state.withLock { state -> Bool in
            state.items.append(item)
            guard state.drainer == nil else { return false }
            state.drainer = current
            return true
        }
        guard startDrain else { return }
        if inline, case .work = item {
            drain(onCallerThread: true)
        } else if let batch = DeliveryBatch.current {
            batch.hold(self)
        } else {
            startClaimedDrain()
        }
    }

    /// Runs the drain of a claimed executor elsewhere: in the parked host task if there is one
    /// (resuming it is the one thread wake-up this costs), else on the global queue. Also how a
    /// ``DeliveryBatch`` starts the drains it held back.
    func startClaimedDrain() {
        let host = state.withLock { state -> CheckedContinuation<HostWake, Never>? in
            guard case .parked(let continuation) = state.host else { return nil }
            state.host = .vacant
            return continuation
        }
        if let host {
            host.resume(returning: .drain)
        } else {
            handOffDrain()
        }
    }

    // MARK: Hosting drains in an awaiting task

    /// Suspends the calling task until work arrives for the request or ``wakeHost()`` is called;
    /// returns `.recheck` at once when `isDone` is already true.
    ///
    /// A task awaiting a response parks here so that the transport's events are drained on the
    /// thread that resumes it: one wake-up per batch of events instead of one for the drain and
    /// another for resuming the task. On `.drain` the caller must call ``drainAsHost()``.
    ///
    /// `isDone` is evaluated under the executor's lock, and whatever makes it true must call
    /// ``wakeHost()`` afterwards: then either the host sees it done here, or it is parked before
    /// that wake-up looks for it. Several responses of one request may each have a host waiting
    /// to park, so a wake-up is never stored for later: a stored one could be taken by the host of
    /// another response, and this host would then park with its response already done and nothing
    /// left to wake it.
    func awaitWork(unlessDone isDone: () -> Bool) async -> HostWake {
        // A cancelled task stops hosting; the cancellation usually completes the response anyway,
        // but a host parked for ever is what this must never allow.
        await withTaskCancellationHandler {
            await park(unlessDone: isDone)
        } onCancel: {
            wakeHost()
        }
    }

    private func park(unlessDone isDone: () -> Bool) async -> HostWake {
        // Checked, not unsafe: `withUnsafeContinuation` is inlined here, and ThreadSanitizer cannot
        // see the runtime's own ordering between its epilogue and a resume on the loop thread.
        await withCheckedContinuation { continuation in
            let wake = state.withLock { state -> HostWake? in
                if case .parked = state.host { return .unavailable }
                if isDone() { return .recheck }
                // The cancelled flag is set before `onCancel` runs: either it is seen here, or the
                // host is parked before `onCancel` looks for it.
                if Task.isCancelled { return .unavailable }
                // Queued work always has a drainer (whoever queued it claimed the executor), so
                // there is nothing to take over here: wait for the next claim.
                state.host = .parked(continuation)
                return nil
            }
            if let wake { continuation.resume(returning: wake) }
        }
    }

    /// Resumes the parked host task, if there is one, with `.recheck`.
    func wakeHost() {
        let host = state.withLock { state -> CheckedContinuation<HostWake, Never>? in
            guard case .parked(let continuation) = state.host else { return nil }
            state.host = .vacant
            return continuation
        }
        host?.resume(returning: .recheck)
    }

    /// Runs the claimed executor's work on the calling task's thread, up to the first Swift job
    /// (which, like every job, runs from a drain on the global queue instead).
    func drainAsHost() {
        state.withLock { $0.drainer = pthread_self() }
        drain(onCallerThread: true)
    }

    private func handOffDrain() {
        DispatchQueue.global().async { [self] in
            state.withLock { $0.drainer = pthread_self() }
            drain(onCallerThread: false)
        }
    }

    private enum Step {
        case run(Item)
        /// The FIFO is empty and the drainer was cleared: another submit may already have claimed it.
        case finished
        /// A Swift job is next and this is a caller's thread: the drain moves to the global queue.
        case handOff
    }

    /// Runs items until the FIFO is empty. On a caller's thread it stops at the first Swift job and
    /// hands the rest to the global queue, so a job never runs nested inside foreign work.
    private func drain(onCallerThread: Bool) {
        let executor = asUnownedSerialExecutor()
        while true {
            // Decided under the lock in one step: once `finished` clears the drainer, any thread may
            // claim the executor, so nothing may be concluded from the state after the lock is released.
            let step = state.withLock { state -> Step in
                guard state.head < state.items.count else {
                    state.items.removeAll(keepingCapacity: true)
                    state.head = 0
                    state.drainer = nil
                    return .finished
                }
                if onCallerThread, case .job? = state.items[state.head] { return .handOff }
                guard let item = state.items[state.head] else {
                    preconditionFailure("Courier: request executor slot ran twice")
                }
                state.items[state.head] = nil
                state.head += 1
                // Reclaim the emptied front now and then (amortised O(1)) so a FIFO that never
                // runs empty does not grow for the life of the request.
                if state.head >= 256, state.head * 2 >= state.items.count {
                    state.items.removeFirst(state.head)
                    state.head = 0
                }
                return .run(item)
            }
            switch step {
            case .run(.work(let work)):
                work()
            case .run(.event(let relay, let event)):
                relay.handle(event)
            case .run(.job(let job)):
                job.runSynchronously(on: executor)
            case .finished:
                return
            case .handOff:
                // The drainer stays set, so no one else starts a drain before the global queue takes over.
                handOffDrain()
                return
            }
        }
    }
}
