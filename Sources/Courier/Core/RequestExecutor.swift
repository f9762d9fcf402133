import Dispatch

/// The serial executor each request actor runs on.
///
/// Transport events enter the request through ``execute(_:)`` and the actor's `assumeIsolated`,
/// so they keep their order and need no `Task` each; Swift jobs (awaiting `request.state`, hooks
/// added from async code) go through the same FIFO queue, so both kinds of work interleave in
/// arrival order.
final class RequestExecutor: SerialExecutor {
    let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    /// Runs `work` on the executor after everything already enqueued.
    func execute(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    func checkIsolated() {
        dispatchPrecondition(condition: .onQueue(queue))
    }
}
