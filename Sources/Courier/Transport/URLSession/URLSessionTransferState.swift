import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The lifecycle of one ``URLSessionTransfer`` as a pure state machine: every delegate callback
/// and every caller verb is an ``Event``, and ``handle(_:)`` returns the ``Action``s the transfer
/// performs afterwards, in order. No I/O happens here, so the event → action table is unit-tested
/// directly (`URLSessionTransferStateTests`).
///
/// `Task` is the URLSession task type (a fake class in tests); tasks are compared by identity, and
/// only the current task's callbacks count: callbacks of a task cancelled for a pause, or arriving
/// after the end, are stale.
///
/// The table, in brief (`run` is the current task and what it has received):
///
/// | State | Event | Next state | Actions |
/// |---|---|---|---|
/// | idle | start | starting(nil) | startTask(nil) |
/// | starting | taskStarted(t) | running(t, awaitingHead) | — |
/// | running | response (fresh) | running(receiving) | deliver(response) |
/// | running | response (continuation) 206 at offset / 200 without validator | running(receiving, skip) | — |
/// | running | response (continuation) anything else | finished(resumeRejected) | cancelTask, finish |
/// | running | response not HTTP | finished(notHTTP) | cancelTask, finish |
/// | running(receiving) | response again | unchanged | — (ignored) |
/// | running(receiving) | data | unchanged | deliver(body) minus the skipped prefix |
/// | running(awaitingHead) | data | finished(bodyBeforeHead) | cancelTask, finish |
/// | running | sent | unchanged | deliver(uploadProgress) |
/// | running | taskCompleted(error?) | finished(end) | finish(end) |
/// | running | suspend, GET/HEAD | paused(t) | cancelTask |
/// | running | suspend, other methods | holding(run, []) | — |
/// | holding | response/data/sent | holding(run, held + delivery) | — |
/// | holding | taskCompleted | holdingEnded(held, end) | — |
/// | holding / holdingEnded | resume | running / finished(end) | deliver(held)…, (finish(end)) |
/// | paused | stale callbacks of the cancelled task | paused | — (noted as dropped) |
/// | paused | its completion, success, nothing dropped | holdingEnded([], succeeded) | — |
/// | paused | resume | starting(continuation or nil) | startTask(…) |
/// | any but finished | cancel / timedOut | finished(cancelled / timedOut) | cancelTask (if a task runs), finish |
/// | finished | taskStarted(t) | finished | cancelTask(t) |
/// | finished | anything else | finished | — |
///
/// Redirects never reach the machine: the delegate router refuses them, so URLSession delivers
/// the 3xx as the response. URLSession has no backpressure, so acknowledgements are not events.
struct URLSessionTransferState<Task: AnyObject> {
    /// Where the transfer is in its life.
    enum State {
        /// Created; `start` has not been handled yet.
        case idle
        /// A task is being created for this request (`nil`: from the first byte, else a continuation).
        case starting(Continuation?)
        /// A task is running and its events are delivered.
        case running(Run)
        /// Suspended without cancelling (methods other than GET and HEAD): the task keeps running, its deliveries are held.
        case holding(Run, held: [Delivery])
        /// Suspended, and the task ended meanwhile: `resume` delivers what was held, then completes with `end`.
        case holdingEnded(held: [Delivery], end: End)
        /// Suspended by cancelling the task (GET and HEAD); `resume` continues with a range request.
        /// `cancelled` is that task until its completion arrives; `dropped` whether a response or
        /// body bytes of it were ignored since.
        case paused(cancelled: Task?, dropped: Bool)
        /// `completed` was delivered (or is being delivered) with this end; every later event is ignored.
        case finished(End)
    }

    /// The current task and what it has received.
    struct Run {
        /// The task whose callbacks count.
        let task: Task
        /// Whether its head has arrived.
        var stage: Stage
    }

    /// Where the current task's response is.
    enum Stage {
        /// No head yet; with a continuation the head is checked against it instead of being delivered.
        case awaitingHead(Continuation?)
        /// The head arrived; the first `skip` body bytes were already delivered (a server that ignored Range).
        case receiving(skip: Int64)
    }

    /// What a continuation request asks for after a pause.
    struct Continuation: Equatable {
        /// The first body byte wanted (`Range: bytes=offset-`).
        var offset: Int64
        /// The validator sent in `If-Range`, if the first response had one.
        var validator: String?
    }

    /// Something the transfer delivers to its sink (`completed` is ``Action/finish(_:)``).
    enum Delivery {
        /// Request body bytes sent so far, and the total.
        case uploadProgress(sent: Int64, total: Int64)
        /// The response head.
        case response(ResponseHead)
        /// Response body bytes.
        case body(Data)
    }

    /// How the transfer ended; ``error(url:)`` turns it into the `completed` event's error.
    enum End {
        /// The task completed without an error.
        case succeeded
        /// The task completed with URLSession's `error`; `afterHead` is whether a head had arrived.
        case taskFailed(any Error, afterHead: Bool)
        /// The task completed without an error and without a head.
        case noResponse
        /// The caller cancelled.
        case cancelled
        /// A Courier timeout fired.
        case timedOut(Timeout)
        /// The response is not an HTTP response.
        case notHTTP
        /// Body bytes arrived before the head.
        case bodyBeforeHead
        /// The response to a continuation cannot continue the body.
        case resumeRejected(ResumeRejection)
        /// The transfer broke a limit of the request (the decompression ratio).
        case rejected(CourierError)
    }

    /// Which Courier timeout fired.
    enum Timeout: Equatable {
        /// Nothing sent or received for this long while running.
        case idle(Duration)
        /// The request's deadline passed.
        case deadline
        /// Fewer bytes than the minimum transfer rate asks moved during its window: this many.
        case tooSlow(MinimumTransferRate, moved: Int64)
    }

    /// Why a continuation's response was refused.
    enum ResumeRejection: Equatable {
        /// A 206 whose `Content-Range` (as sent, if any) does not start at `offset`.
        case wrongRange(contentRange: String?, offset: Int64)
        /// A 200 although `If-Range` was sent: the resource changed.
        case resourceChanged
        /// Any other status.
        case status(Int)
    }

    /// Something that happened to the transfer.
    enum Event {
        /// The transfer starts (handled once, first).
        case start
        /// The transfer created and resumed `task` for the last ``Action/startTask(_:)``.
        case taskStarted(Task)
        /// URLSession's `didReceive response`; `nil` when the response is not HTTP.
        case responseReceived(Task, ResponseHead?)
        /// URLSession's `didReceive data`.
        case dataReceived(Task, Data)
        /// URLSession's `didSendBodyData`: `sent` bytes so far of `total`.
        case bodySent(Task, sent: Int64, total: Int64)
        /// URLSession's `didCompleteWithError`.
        case taskCompleted(Task, error: (any Error)?)
        /// The caller's `suspend()`.
        case suspend
        /// The caller's `resume()`.
        case resume
        /// The caller's `cancel()`.
        case cancel
        /// A Courier timeout expired.
        case timedOut(Timeout)
        /// The transfer could not start (its request body could not be prepared).
        case startFailed(any Error)
        /// The transfer broke a limit of the request and ends with this error.
        case rejected(CourierError)
    }

    /// A side effect the transfer performs after a transition.
    enum Action {
        /// Create and resume a task (a continuation from `offset` when given), then send ``Event/taskStarted(_:)``.
        case startTask(Continuation?)
        /// Cancel this task.
        case cancelTask(Task)
        /// Deliver to the sink.
        case deliver(Delivery)
        /// Deliver `completed` for this end. Always the last action of the transfer.
        case finish(End)
    }

    /// The current state.
    private(set) var state: State = .idle
    /// Whether a suspend cancels the task and continues with a range request (GET and HEAD).
    let pausesByRestarting: Bool
    /// The head delivered to the sink, kept to continue after a pause.
    private(set) var head: ResponseHead?
    /// Body bytes delivered or held: the offset a continuation starts from.
    private(set) var receivedBytes: Int64 = 0

    /// Creates the machine of a transfer; `pausesByRestarting` for GET and HEAD.
    init(pausesByRestarting: Bool) {
        self.pausesByRestarting = pausesByRestarting
    }

    /// Whether `completed` has been delivered (or is being delivered).
    var isFinished: Bool {
        if case .finished = state { true } else { false }
    }

    /// Whether the idle timeout counts: a task is running and not suspended.
    var idleClockRuns: Bool {
        if case .running = state { true } else { false }
    }

    /// Whether `task` is the task whose callbacks count.
    /// The task running or held, if any.
    var currentTask: Task? {
        switch state {
        case .running(let run), .holding(let run, _): run.task
        default: nil
        }
    }

    func isCurrent(_ task: Task) -> Bool {
        switch state {
        case .running(let run), .holding(let run, _): run.task === task
        default: false
        }
    }

    /// Applies `event` and returns what the transfer must do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start:
            guard case .idle = state else { return [] }
            state = .starting(nil)
            return [.startTask(nil)]
        case .taskStarted(let task):
            switch state {
            case .starting(let continuation):
                state = .running(Run(task: task, stage: .awaitingHead(continuation)))
                return []
            case .finished:
                // Cancelled while the task was being created: it has no owner any more.
                return [.cancelTask(task)]
            default:
                return []
            }
        case .responseReceived(let task, let head):
            return responseReceived(head, from: task)
        case .dataReceived(let task, let data):
            return dataReceived(data, from: task)
        case .bodySent(let task, let sent, let total):
            guard isCurrent(task) else { return [] }
            return deliver(.uploadProgress(sent: sent, total: total))
        case .taskCompleted(let task, let error):
            return taskCompleted(task, error: error)
        case .suspend:
            return suspend()
        case .resume:
            return resume()
        case .cancel:
            return end(.cancelled)
        case .timedOut(let timeout):
            return end(.timedOut(timeout))
        case .startFailed(let error):
            return end(.taskFailed(error, afterHead: false))
        case .rejected(let error):
            return end(.rejected(error))
        }
    }

    // MARK: - Delegate callbacks

    private mutating func responseReceived(_ head: ResponseHead?, from task: Task) -> [Action] {
        guard let run = currentRun(task) else { return noteDropped(task) }
        guard case .awaitingHead(let continuation) = run.stage else {
            // A second head for the same task: the contract allows one; later ones are ignored.
            return []
        }
        guard let head else { return end(.notHTTP) }
        guard let continuation else {
            self.head = head
            update(Run(task: task, stage: .receiving(skip: 0)))
            return deliver(.response(head))
        }
        switch head.statusCode {
        case 206:
            guard let range = head.contentRange, range.start == continuation.offset else {
                return end(.resumeRejected(.wrongRange(contentRange: head.headers["Content-Range"], offset: continuation.offset)))
            }
            update(Run(task: task, stage: .receiving(skip: 0)))
            return []
        case 200 where continuation.validator == nil:
            // No validator to ask with, and the server ignores Range: drop what was already delivered.
            update(Run(task: task, stage: .receiving(skip: continuation.offset)))
            return []
        case 200:
            return end(.resumeRejected(.resourceChanged))
        default:
            return end(.resumeRejected(.status(head.statusCode)))
        }
    }

    private mutating func dataReceived(_ data: Data, from task: Task) -> [Action] {
        guard let run = currentRun(task) else { return noteDropped(task) }
        guard case .receiving(let skip) = run.stage else { return end(.bodyBeforeHead) }
        var chunk = data[...]
        if skip > 0 {
            let dropped = min(Int64(chunk.count), skip)
            chunk = chunk.dropFirst(Int(dropped))
            update(Run(task: task, stage: .receiving(skip: skip - dropped)))
        }
        guard !chunk.isEmpty else { return [] }
        receivedBytes += Int64(chunk.count)
        return deliver(.body(Data(chunk)))
    }

    private mutating func taskCompleted(_ task: Task, error: (any Error)?) -> [Action] {
        switch state {
        case .running(let run) where run.task === task:
            let end = Self.end(of: run, error: error, hadHead: head != nil)
            state = .finished(end)
            return [.finish(end)]
        case .holding(let run, let held) where run.task === task:
            state = .holdingEnded(held: held, end: Self.end(of: run, error: error, hadHead: head != nil))
            return []
        case .paused(let cancelled?, let dropped) where cancelled === task:
            // The task was cancelled for the pause, but it may have finished before the cancel took
            // effect: if nothing of it was dropped, the body is complete and there is nothing to continue.
            if error == nil, !dropped, head != nil {
                state = .holdingEnded(held: [], end: .succeeded)
            } else {
                state = .paused(cancelled: nil, dropped: false)
            }
            return []
        default:
            return []
        }
    }

    // MARK: - Caller verbs

    private mutating func suspend() -> [Action] {
        guard case .running(let run) = state else { return [] }
        if pausesByRestarting {
            state = .paused(cancelled: run.task, dropped: false)
            return [.cancelTask(run.task)]
        }
        state = .holding(run, held: [])
        return []
    }

    private mutating func resume() -> [Action] {
        switch state {
        case .holding(let run, let held):
            state = .running(run)
            return held.map { .deliver($0) }
        case .holdingEnded(let held, let end):
            state = .finished(end)
            return held.map { .deliver($0) } + [.finish(end)]
        case .paused:
            let continuation = head.map { Continuation(offset: receivedBytes, validator: $0.strongValidator) }
            state = .starting(continuation)
            return [.startTask(continuation)]
        case .idle, .starting, .running, .finished:
            return []
        }
    }

    /// Ends the transfer with `end` unless it already ended, cancelling a task that still runs.
    private mutating func end(_ end: End) -> [Action] {
        let task: Task?
        switch state {
        case .finished: return []
        case .running(let run), .holding(let run, _): task = run.task
        case .idle, .starting, .holdingEnded, .paused: task = nil
        }
        state = .finished(end)
        return (task.map { [.cancelTask($0)] } ?? []) + [.finish(end)]
    }

    // MARK: - Helpers

    private func currentRun(_ task: Task) -> Run? {
        switch state {
        case .running(let run) where run.task === task, .holding(let run, _) where run.task === task: run
        default: nil
        }
    }

    /// Replaces the current run, keeping running or holding.
    private mutating func update(_ run: Run) {
        switch state {
        case .running: state = .running(run)
        case .holding(_, let held): state = .holding(run, held: held)
        default: break
        }
    }

    /// Delivers now while running, or holds while suspended.
    private mutating func deliver(_ delivery: Delivery) -> [Action] {
        switch state {
        case .running:
            return [.deliver(delivery)]
        case .holding(let run, let held):
            state = .holding(run, held: held + [delivery])
            return []
        default:
            return []
        }
    }

    /// A stale response or body of the task cancelled for a pause: remember that it was dropped.
    private mutating func noteDropped(_ task: Task) -> [Action] {
        if case .paused(let cancelled?, _) = state, cancelled === task {
            state = .paused(cancelled: cancelled, dropped: true)
        }
        return []
    }

    private static func end(of run: Run, error: (any Error)?, hadHead: Bool) -> End {
        if let error { return .taskFailed(error, afterHead: hadHead) }
        if case .awaitingHead = run.stage { return .noResponse }
        return .succeeded
    }
}

extension URLSessionTransferState.End {
    /// The error of the `completed` event for this end (`nil` on success).
    func error(url: URL) -> CourierError? {
        switch self {
        case .succeeded:
            return nil
        case .taskFailed(let error, let afterHead):
            if let urlError = error as? URLError {
                // FoundationNetworking reports a connection closed before any response ("Empty reply
                // from server") as a bad response; it is a lost connection, as on the curl transport.
                if urlError.code == .badServerResponse, !afterHead {
                    return CourierError(
                        .connectionLost, "The server closed the connection without sending a response.",
                        underlyingError: urlError, url: url)
                }
                // libcurl under FoundationNetworking reports a header line over 100 KiB as "Out of
                // memory"; before the head is complete that is the likely cause.
                if !afterHead, (urlError.userInfo[NSLocalizedDescriptionKey] as? String) == "Out of memory" {
                    return CourierError(.responseTooLarge, CourierError.transportHeaderLineLimitMessage, underlyingError: urlError, url: url)
                }
                return CourierError(urlError: urlError, url: url)
            }
            return CourierError(wrapping: error, url: url)
        case .noResponse:
            return CourierError(.connectionLost, "The server closed the connection without sending a response.", url: url)
        case .cancelled:
            return CourierError(.cancelled, "The request was cancelled.", url: url)
        case .timedOut(.deadline):
            return CourierError(.timedOut, "The request exceeded its resource timeout.", url: url)
        case .timedOut(.tooSlow(let rate, let moved)):
            return CourierError(
                .timedOut,
                "The transfer was slower than its minimum transfer rate (\(rate)): "
                    + "\(moved) bytes moved in the last \(rate.window.timeInterval) s.", url: url)
        case .timedOut(.idle(let idle)):
            return CourierError(.timedOut, "No data was sent or received for \(idle.timeInterval) s (request timeout).", url: url)
        case .notHTTP:
            return CourierError(.invalidResponse, "The server's response is not HTTP.", url: url)
        case .bodyBeforeHead:
            return CourierError(.invalidResponse, "The server's body arrived before its response head.", url: url)
        case .resumeRejected(.wrongRange(let contentRange, let offset)):
            return CourierError(
                .resumeFailed, "After a pause the server sent a range (\(contentRange ?? "none")) that does not start at byte \(offset).",
                responseCode: 206, url: url)
        case .resumeRejected(.resourceChanged):
            return CourierError(.resumeFailed, "The resource changed while the request was paused.", responseCode: 200, url: url)
        case .resumeRejected(.status(let status)):
            return CourierError(.resumeFailed, "Continuing after a pause failed with status \(status).", responseCode: status, url: url)
        case .rejected(let error):
            return error.with(url: url)
        }
    }
}

extension URLSessionTransferState.Delivery {
    /// The sink event for this delivery.
    var event: TransportEvent {
        switch self {
        case .uploadProgress(let sent, let total): .uploadProgress(sent: sent, total: total)
        case .response(let head): .response(head)
        case .body(let data): .body(data)
        }
    }
}

// Every stored property is a value of a Sendable type, or a `Task` (Sendable when `Task` is).
extension URLSessionTransferState: Sendable where Task: Sendable {}
extension URLSessionTransferState.State: Sendable where Task: Sendable {}
extension URLSessionTransferState.Run: Sendable where Task: Sendable {}
extension URLSessionTransferState.Action: Sendable where Task: Sendable {}
extension URLSessionTransferState.Event: Sendable where Task: Sendable {}
