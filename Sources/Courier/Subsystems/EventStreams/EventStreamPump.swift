import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// The one consumer's side of an event stream: pulls the bytes of the connection under way, parses
/// them, and carries out what ``EventStreamLifecycle`` decides (connect, wait, finish). Pulling is
/// what gives backpressure: nothing is read ahead of the consumer but the transport's window.
final class EventStreamPump {
    // What the pump holds for the lifecycle's state: nothing before the first connection, the
    // connection's body iterator, the delay to sleep, or how it ended.
    private enum Stage {
        case idle
        case streaming(DataStream.Iterator, ConnectionVerdict)
        case waiting(Duration)
        case finished(CourierError?)
    }

    private let request: EventStreamRequest
    private var lifecycle: EventStreamLifecycle
    // The stream's time for the lifecycle (how long a connection stayed open), on the session's
    // retry clock so that tests can control it.
    private let clock: StreamClock
    private var stage: Stage = .idle
    private var parser: ServerSentEventParser
    // Updates parsed but not taken yet; taken by moving them out (no copy of their strings).
    private var pending: [EventStreamUpdate?] = []
    private var pendingIndex = 0

    init(request: EventStreamRequest, attached: Bool) {
        self.request = request
        lifecycle = EventStreamLifecycle(policy: request.reconnection, method: request.method)
        clock = StreamClock(request.session.configuration.retryClock)
        parser = ServerSentEventParser(
            maximumEventSize: request.maximumEventSize, lastEventID: request.initialLastEventID,
            reconnectionTime: nil)
        if !attached {
            stage = .finished(CourierError(.serializationFailed, "This event stream already has a consumer; a stream can be read only once."))
        }
    }

    /// The next update already parsed, taken without suspending (most calls: a chunk holds many events).
    func nextReady() -> EventStreamUpdate? {
        guard pendingIndex < pending.count else { return nil }
        let update = pending[pendingIndex].take()
        pendingIndex += 1
        if pendingIndex == pending.count {
            pending.removeAll(keepingCapacity: true)
            pendingIndex = 0
        }
        return update
    }

    /// The next update, `nil` at a clean end; throws what ended the stream otherwise.
    func next() async throws(CourierError) -> EventStreamUpdate? {
        while true {
            if let update = nextReady() { return update }
            switch stage {
            case .idle:
                perform(lifecycle.handle(.start))
            case .finished(let error):
                if let error { throw error }
                return nil
            case .waiting(let delay):
                await sleep(delay)
                if let cancelled = cancellation() {
                    perform(lifecycle.handle(.cancelled(cancelled)))
                } else {
                    perform(lifecycle.handle(.delayElapsed))
                }
            case .streaming(var iterator, let verdict):
                let result: Result<Data?, CourierError>
                do throws(CourierError) {
                    result = .success(try await iterator.next())
                } catch {
                    result = .failure(error)
                }
                if case .streaming = stage { stage = .streaming(iterator, verdict) }
                receive(result, verdict: verdict)
            }
        }
    }

    private func receive(_ result: Result<Data?, CourierError>, verdict: ConnectionVerdict) {
        if case .connecting = lifecycle.state, let (judgement, response) = verdict.value {
            if case .accepted = judgement, let response { pending.append(.connected(response)) }
            perform(lifecycle.handle(.judged(judgement), at: clock.now, serverRetry: serverRetry))
            if case .finished = lifecycle.state { return }
        }
        switch result {
        case .success(let chunk?):
            // Parsed into a local array (swapped with `pending`, no copy) and by a local parser, so
            // that the closure captures locals only, not this object (no retain per line).
            var updates: [EventStreamUpdate?] = []
            swap(&updates, &pending)
            var parser = ServerSentEventParser()
            swap(&parser, &self.parser)
            defer {
                swap(&updates, &pending)
                swap(&parser, &self.parser)
            }
            do throws(CourierError) {
                try parser.parse(chunk) { updates.append(.event($0)) }
            } catch {
                request.currentRequest?.cancel()
                perform(lifecycle.handle(.failed(error)))
            }
        case .success(nil):
            perform(lifecycle.handle(.connectionEnded(nil), at: clock.now, serverRetry: serverRetry))
        case .failure(let error):
            if error.kind == .cancelled, let cancelled = cancellation() {
                perform(lifecycle.handle(.cancelled(cancelled)))
            } else {
                perform(lifecycle.handle(.connectionEnded(error), at: clock.now, serverRetry: serverRetry))
            }
        }
    }

    private var serverRetry: Duration? { parser.reconnectionTime.map { .milliseconds($0) } }

    /// The error to end with when the stream was cancelled (`cancel()` or the consuming task).
    private func cancellation() -> CourierError? {
        if let error = request.shared.withLock({ $0.cancelled }) { return error }
        return Task.isCancelled ? CourierError(.cancelled, "The event stream was cancelled.") : nil
    }

    private func perform(_ action: EventStreamLifecycle.Action) {
        switch action {
        case .none:
            break
        case .finish(let error):
            stage = .finished(error)
        case .connect:
            if let cancelled = cancellation() {
                perform(lifecycle.handle(.cancelled(cancelled)))
                return
            }
            // Each connection is a new stream to the parser: what an earlier one left unfinished
            // is dropped, never joined to the first event of this one.
            parser.beginNewConnection()
            let verdict = ConnectionVerdict()
            let connection = makeConnection(verdict: verdict)
            stage = .streaming(connection.streamingData(automaticallyCancelling: true).makeAsyncIterator(), verdict)
        case .reconnect(let delay, let failures, let reason):
            let jitter = request.reconnection.jitter
            let jittered = jitter > 0 ? delay + delay * Double.random(in: 0...jitter) : delay
            pending.append(
                .reconnecting(
                    EventStreamReconnectionAttempt(
                        attempt: failures + 1, delay: jittered, reason: reason,
                        lastEventID: parser.lastEventID)))
            stage = .waiting(jittered)
        }
    }

    /// A new connection: the stream's request with `Last-Event-ID`, checked as an event stream
    /// first, then by the stream's own validators.
    private func makeConnection(verdict: ConnectionVerdict) -> DataStreamRequest {
        let lastEventID = parser.lastEventID
        let base = request.source
        let source = RequestSource(timeout: request.timeout, interceptor: request.interceptor, headers: request.headers) { session in
            var urlRequest = try base(session)
            if let lastEventID { urlRequest.setValue(lastEventID, forHTTPHeaderField: "Last-Event-ID") }
            return urlRequest
        }
        let session = request.session
        let connection = DataStreamRequest(session: session, source: source)
        _ = connection.addValidator { input in verdict.judge(input) }
        let validators = request.shared.withLock { shared -> [@Sendable (DataStreamRequest) -> Void] in
            shared.current = connection
            return shared.validators
        }
        for validator in validators { validator(connection) }
        session.didCreate(connection)
        return connection
    }

    private func sleep(_ delay: Duration) async {
        let clock = request.session.configuration.retryClock
        let sleeper = Task<Void, Never> { try? await clock.sleep(for: delay) }
        let cancelledAlready = request.shared.withLock { shared -> Bool in
            shared.sleeper = sleeper
            return shared.cancelled != nil
        }
        if cancelledAlready { sleeper.cancel() }
        await withTaskCancellationHandler {
            await sleeper.value
        } onCancel: {
            sleeper.cancel()
        }
        request.shared.withLock { $0.sleeper = nil }
    }
}

/// A clock of any type read as the time since the stream started, so that the lifecycle can
/// compare instants of the session's (type-erased) retry clock.
struct StreamClock: Sendable {
    private let elapsed: @Sendable () -> Duration

    init<C: Clock<Duration>>(_ clock: C) {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
    }

    /// The time since the clock was made.
    var now: Duration { elapsed() }
}

/// What one connection's response head was judged to be, written by its validator (on the
/// request's executor) and read by the pump once the connection's first result is in.
final class ConnectionVerdict: Sendable {
    // Guards the judgement, written once per connection.
    private let state = Locked<(EventStreamLifecycle.Verdict, HTTPURLResponse?)?>(nil)

    var value: (EventStreamLifecycle.Verdict, HTTPURLResponse?)? { state.withLock { $0 } }

    /// Judges the response head: `nil` (pass) for a 200 `text/event-stream`, an error otherwise.
    func judge(_ input: ValidationInput) -> CourierError? {
        let code = input.statusCode
        let url = input.request?.url
        let verdict: EventStreamLifecycle.Verdict
        let error: CourierError?
        if code == 204 {
            error = CourierError(.validationFailed, "The server ended the event stream (204 No Content).", responseCode: code, url: url)
            verdict = .stop
        } else if code != 200 {
            let failure = CourierError(
                .validationFailed, "The event stream's response status code \(code) was unacceptable (expected 200).",
                responseCode: code, url: url)
            error = failure
            verdict = (code >= 500 || code == 408 || code == 429) ? .retryable(failure) : .fatal(failure)
        } else if let type = input.header("Content-Type").flatMap({ MIMEType($0) }), type.type == "text", type.subtype == "event-stream" {
            error = nil
            verdict = .accepted
        } else {
            let failure = CourierError(
                .validationFailed,
                "The response is not an event stream: its Content-Type is "
                    + "\(input.header("Content-Type").map { "\"\($0)\"" } ?? "missing") (expected text/event-stream).",
                responseCode: code, url: url)
            error = failure
            verdict = .fatal(failure)
        }
        let response = input.response
        state.withLock { $0 = (verdict, response) }
        return error
    }
}
