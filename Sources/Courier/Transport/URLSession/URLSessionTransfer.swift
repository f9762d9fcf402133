import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One exchange on URLSession, with Courier's own pause and timeouts.
///
/// Every delivery to the sink happens on the transport's serial delegate queue (public methods
/// hop onto it), so events stay ordered and `completed` is delivered exactly once.
///
/// URLSession's `suspend()` on Linux drops the connection and silently downloads everything again,
/// so `suspend()` here is Courier's own: for GET and HEAD the task is cancelled and `resume()`
/// continues with `Range: bytes=N-` (+ `If-Range` when the response had a validator and
/// `Accept-Encoding: identity`); for other methods the task keeps running and its events are held
/// until `resume()`. URLSession has no backpressure, so ``acknowledge(_:)`` does nothing.
final class URLSessionTransfer: TransportTransfer, Sendable {
    private enum Phase {
        /// A task is running and its events are delivered.
        case running(URLSessionTask)
        /// Suspended without cancelling: the task (or `nil` once it ended) keeps going, events are held.
        case holding(URLSessionTask?, [TransportEvent])
        /// Suspended by cancelling the task; `resume()` continues with a range request.
        case paused
        /// `completed` was delivered.
        case finished
    }

    private struct State {
        var phase: Phase
        /// The head delivered to the sink, kept to continue after a pause.
        var head: ResponseHead?
        /// Body bytes delivered (or held), the offset a continuation starts from.
        var delivered: Int64 = 0
        /// Bytes at the start of the current task's body that were already delivered (a server that ignored Range).
        var skip: Int64 = 0
        /// The current task continues an earlier one: its head is checked, not delivered.
        var continuation: Continuation?
        var lastActivity = ContinuousClock.now
        var bytesSent: Int64 = 0
        var timeToFirstByte: Duration?
    }

    /// What a continuation request asked for.
    private struct Continuation {
        var offset: Int64
        var sentValidator: Bool
    }

    private let request: TransportRequest
    private let sink: any TransportEventSink
    private let transport: URLSessionTransport
    private let state: Locked<State>
    private let startDate = Date()
    private let startInstant = ContinuousClock.now

    init(request: TransportRequest, sink: any TransportEventSink, transport: URLSessionTransport) {
        self.request = request
        self.sink = sink
        self.transport = transport
        self.state = Locked(State(phase: .paused))
    }

    // MARK: - Public verbs (any thread)

    func start() {
        transport.delegateQueue.addOperation { [self] in
            let task = transport.startTask(makeURLRequest(continuingAt: nil), body: request.body, for: self)
            state.withLock { state in
                state.phase = .running(task)
                state.lastActivity = .now
            }
            armTimer()
        }
    }

    func suspend() {
        transport.delegateQueue.addOperation { [self] in
            let taskToCancel = state.withLock { state -> URLSessionTask? in
                guard case .running(let task) = state.phase else { return nil }
                if request.method == .get || request.method == .head {
                    state.phase = .paused
                    return task
                }
                state.phase = .holding(task, [])
                return nil
            }
            if let taskToCancel { transport.cancelTask(taskToCancel) }
        }
    }

    func resume() {
        transport.delegateQueue.addOperation { [self] in
            let action = state.withLock { state -> ResumeAction in
                state.lastActivity = .now
                switch state.phase {
                case .holding(let task, let events):
                    if let task { state.phase = .running(task) } else { state.phase = .finished }
                    return .deliver(events)
                case .paused:
                    let offset = state.delivered
                    let sentValidator = state.head?.strongValidator != nil
                    state.continuation = state.head == nil ? nil : Continuation(offset: offset, sentValidator: sentValidator)
                    state.skip = 0
                    return .restart(offset: state.head == nil ? nil : offset)
                case .running, .finished:
                    return .none
                }
            }
            switch action {
            case .none: break
            case .deliver(let events): events.forEach(sink.receive)
            case .restart(let offset):
                let task = transport.startTask(makeURLRequest(continuingAt: offset), body: request.body, for: self)
                state.withLock { $0.phase = .running(task) }
            }
        }
    }

    func cancel() {
        transport.delegateQueue.addOperation { [self] in
            finish(with: CourierError(.cancelled, "The request was cancelled.", url: request.url))
        }
    }

    func acknowledge(_ bytes: Int) {}

    private enum ResumeAction {
        case none
        case deliver([TransportEvent])
        case restart(offset: Int64?)
    }

    // MARK: - Delegate callbacks (delegate queue)

    func taskDidReceive(_ response: URLResponse, task: URLSessionTask) {
        guard let http = response as? HTTPURLResponse, let url = http.url else {
            return fail(task, CourierError(.invalidResponse, "The server's response is not HTTP.", url: request.url))
        }
        let fields = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }
        let head = ResponseHead(statusCode: http.statusCode, fields: fields, url: url, httpVersion: "HTTP/1.1")
        let outcome = state.withLock { state -> HeadOutcome in
            guard isCurrent(task, state.phase) else { return .ignore }
            state.lastActivity = .now
            if state.timeToFirstByte == nil { state.timeToFirstByte = .now - startInstant }
            guard let continuation = state.continuation else {
                state.head = head
                return .deliver
            }
            return checkContinuation(head, continuation, &state)
        }
        switch outcome {
        case .ignore, .continued: break
        case .deliver: emit(.response(head), from: task)
        case .fail(let error): fail(task, error)
        }
    }

    func taskDidReceive(_ data: Data, task: URLSessionTask) {
        let chunk = state.withLock { state -> Data? in
            guard isCurrent(task, state.phase) else { return nil }
            state.lastActivity = .now
            var chunk = data
            if state.skip > 0 {
                let dropped = min(Int64(chunk.count), state.skip)
                state.skip -= dropped
                chunk = chunk.dropFirst(Int(dropped))
            }
            state.delivered += Int64(chunk.count)
            return chunk.isEmpty ? nil : chunk
        }
        if let chunk { emit(.body(Data(chunk)), from: task) }
    }

    func taskDidSend(_ totalSent: Int64, of expected: Int64, task: URLSessionTask) {
        let current = state.withLock { state -> Bool in
            guard isCurrent(task, state.phase) else { return false }
            state.lastActivity = .now
            state.bytesSent = totalSent
            return true
        }
        if current { emit(.uploadProgress(sent: totalSent, total: expected > 0 ? expected : request.body.length), from: task) }
    }

    func taskDidComplete(_ task: URLSessionTask, error: (any Error)?) {
        let hadHead = state.withLock { $0.head != nil }
        let mapped = error.map { error -> CourierError in
            if let urlError = error as? URLError {
                // FoundationNetworking reports a connection closed before any response ("Empty reply
                // from server") as a bad response; it is a lost connection, as on the curl transport.
                if urlError.code == .badServerResponse, !hadHead {
                    return CourierError(.connectionLost, "The server closed the connection without sending a response.",
                                        underlyingError: urlError, url: request.url)
                }
                return CourierError(urlError: urlError, url: request.url)
            }
            return CourierError(wrapping: error, url: request.url)
        }
        let held = state.withLock { state -> Bool in
            guard case .holding(let current?, let events) = state.phase, current === task else { return false }
            state.phase = .holding(nil, events + [.completed(error: mapped, metrics: metrics(state))])
            return true
        }
        guard !held else { return }
        let isCurrentTask = state.withLock { state in
            if case .running(let current) = state.phase { return current === task }
            return false
        }
        // The completion of a task cancelled for a pause is not the transfer's end.
        if isCurrentTask { finish(with: mapped) }
    }

    // MARK: - Helpers

    private enum HeadOutcome {
        case ignore, deliver, continued
        case fail(CourierError)
    }

    private func checkContinuation(_ head: ResponseHead, _ continuation: Continuation, _ state: inout State) -> HeadOutcome {
        state.continuation = nil
        switch head.statusCode {
        case 206:
            guard let range = head.contentRange, range.start == continuation.offset else {
                return .fail(CourierError(.resumeFailed, "After a pause the server sent a range (\(head.headers["Content-Range"] ?? "none")) that does not start at byte \(continuation.offset).",
                                          responseCode: 206, url: request.url))
            }
            return .continued
        case 200 where !continuation.sentValidator:
            // No validator to ask with, and the server ignores Range: drop what was already delivered.
            state.skip = continuation.offset
            return .continued
        case 200:
            return .fail(CourierError(.resumeFailed, "The resource changed while the request was paused.", responseCode: 200, url: request.url))
        default:
            return .fail(CourierError(.resumeFailed, "Continuing after a pause failed with status \(head.statusCode).",
                                      responseCode: head.statusCode, url: request.url))
        }
    }

    private func isCurrent(_ task: URLSessionTask, _ phase: Phase) -> Bool {
        switch phase {
        case .running(let current): current === task
        case .holding(let current?, _): current === task
        default: false
        }
    }

    /// Delivers `event`, or holds it while suspended.
    private func emit(_ event: TransportEvent, from task: URLSessionTask) {
        let deliverNow = state.withLock { state -> Bool in
            switch state.phase {
            case .running(let current) where current === task:
                return true
            case .holding(let current?, let events) where current === task:
                state.phase = .holding(current, events + [event])
                return false
            default:
                return false
            }
        }
        if deliverNow { sink.receive(event) }
    }

    private func fail(_ task: URLSessionTask, _ error: CourierError) {
        transport.cancelTask(task)
        finish(with: error)
    }

    /// Delivers `completed` once and stops the task and timer. Runs on the delegate queue.
    private func finish(with error: CourierError?) {
        let outcome = state.withLock { state -> (URLSessionTask?, TransferMetrics)? in
            let task: URLSessionTask?
            switch state.phase {
            case .finished: return nil
            case .running(let current): task = current
            case .holding(let current, _): task = current
            case .paused: task = nil
            }
            state.phase = .finished
            return (task, metrics(state))
        }
        guard let (task, metrics) = outcome else { return }
        if error != nil, let task { transport.cancelTask(task) }
        sink.receive(.completed(error: error, metrics: metrics))
    }

    private func metrics(_ state: State) -> TransferMetrics {
        TransferMetrics(start: startDate, timeToFirstByte: state.timeToFirstByte, total: .now - startInstant,
                        bytesSent: state.bytesSent, bytesReceived: state.delivered, transport: "urlSession")
    }

    private func makeURLRequest(continuingAt offset: Int64?) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        for header in request.headers { urlRequest.setValue(header.value, forHTTPHeaderField: header.name) }
        if case .data(let data) = request.body { urlRequest.httpBody = data }
        if !request.automaticDecompression, !request.headers.contains("Accept-Encoding") {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if let offset {
            urlRequest.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            if let validator = state.withLock({ $0.head?.strongValidator }) {
                urlRequest.setValue(validator, forHTTPHeaderField: "If-Range")
            }
        }
        return urlRequest
    }

    // MARK: - Timeouts

    /// Schedules the first timeout check; each check schedules the next one until the transfer ends.
    private func armTimer() {
        guard request.idleTimeout != nil || request.deadline != nil else { return }
        scheduleCheck(after: nextCheck(from: state.withLock { $0.lastActivity }))
    }

    private func nextCheck(from lastActivity: ContinuousClock.Instant) -> Duration {
        var next: ContinuousClock.Instant = .now + .seconds(3600)
        if let idle = request.idleTimeout { next = min(next, lastActivity + idle) }
        if let deadline = request.deadline { next = min(next, deadline) }
        return max(.milliseconds(1), next - .now)
    }

    // A chain of one-shot checks rather than a timer object: nothing to cancel, and a check that
    // finds the transfer finished simply ends the chain.
    private func scheduleCheck(after delay: Duration) {
        let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self else { return }
            transport.delegateQueue.addOperation { self.checkTimeouts() }
        }
    }

    /// Fails the transfer when a timeout expired, otherwise schedules the next check.
    private func checkTimeouts() {
        let now = ContinuousClock.now
        let verdict = state.withLock { state -> (expired: CourierError?, next: Duration?) in
            if case .finished = state.phase { return (nil, nil) }
            if let deadline = request.deadline, now >= deadline {
                return (CourierError(.timedOut, "The request exceeded its resource timeout.", url: request.url), nil)
            }
            // Only a running task counts towards the idle timeout; time suspended does not.
            guard case .running = state.phase else {
                state.lastActivity = now
                return (nil, nextCheck(from: now))
            }
            if let idle = request.idleTimeout, now - state.lastActivity >= idle {
                return (CourierError(.timedOut, "No data was sent or received for \(idle.timeInterval) s (request timeout).", url: request.url), nil)
            }
            return (nil, nextCheck(from: state.lastActivity))
        }
        if let expired = verdict.expired {
            finish(with: expired)
        } else if let next = verdict.next {
            scheduleCheck(after: next)
        }
    }
}

extension ResponseHead {
    /// A validator usable in `If-Range`: a strong ETag, else Last-Modified.
    var strongValidator: String? {
        if let etag = headers["ETag"], !etag.hasPrefix("W/") { return etag }
        return headers["Last-Modified"]
    }

    /// The parsed `Content-Range: bytes a-b/total` of a 206.
    var contentRange: (start: Int64, end: Int64, total: Int64?)? {
        guard let value = headers["Content-Range"]?.trimmingCharacters(in: .whitespaces), value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end else { return nil }
        return (start, end, parts[1] == "*" ? nil : Int64(parts[1]))
    }
}
