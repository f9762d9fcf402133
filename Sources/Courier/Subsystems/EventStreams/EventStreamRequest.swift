import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// A Server-Sent Events stream, made by `session.eventStream(...)`: one HTTP request at a time,
/// reconnected as EventSource does (see ``EventStreamReconnection``), read as events.
///
/// Each connection is an ordinary ``DataStreamRequest`` of the session, so the session's headers,
/// interceptors, retry policy, event monitors, TLS settings and metrics apply to it as to any
/// request; a reconnection is a new request that monitors see being created. Memory stays
/// bounded: a slow consumer holds the transfer back (backpressure), and one event may not pass
/// the stream's `maximumEventSize` (8 MiB by default; `.responseTooLarge` past it).
///
/// ```swift
/// let stream = session.eventStream("v1/chat", method: .post, parameters: prompt, encoder: .json)
/// for try await chunk in stream.decodingEvents(of: ChatChunk.self, until: "[DONE]") {
///     print(chunk.text, terminator: "")
/// }
/// ```
///
/// A stream has one consumer: ``updates()``, ``events()``, ``decodingEvents(of:decoder:until:)`` or
/// the callbacks (``onEvent(queue:_:)`` and friends); a second one fails at once.
public final class EventStreamRequest: Sendable {
    /// The stream's identity (each connection is a request with an identity of its own).
    public let id = UUID()
    /// The session that makes its connections.
    public let session: Session

    let method: HTTPMethod
    let source: @Sendable (Session) throws -> URLRequest
    let timeout: TimeInterval?
    let interceptor: (any RequestInterceptor)?
    /// The headers given for the stream, every line in order (see `RequestSource.headers`).
    let headers: HTTPHeaders?
    let maximumEventSize: Int
    let reconnection: EventStreamReconnection
    let initialLastEventID: String?

    struct Shared: Sendable {
        var consumerAttached = false
        var cancelled: CourierError?
        var current: DataStreamRequest?
        var sleeper: Task<Void, Never>?
        var validators: [@Sendable (DataStreamRequest) -> Void] = []
        var eventHandlers: [(DispatchQueue?, @Sendable (ServerSentEvent) -> Void)] = []
        var updateHandlers: [(DispatchQueue?, @Sendable (EventStreamUpdate) -> Void)] = []
        var completionHandlers: [(DispatchQueue?, @Sendable (CourierError?) -> Void)] = []
        var callbacksScheduled = false
    }

    // Guards what the consumer, `cancel()` and the chaining methods share.
    let shared = Locked(Shared())

    init(
        session: Session, method: HTTPMethod, timeout: TimeInterval?, interceptor: (any RequestInterceptor)?,
        maximumEventSize: Int, reconnection: EventStreamReconnection, lastEventID: String?, headers: HTTPHeaders? = nil,
        source: @escaping @Sendable (Session) throws -> URLRequest
    ) {
        self.initialLastEventID = lastEventID
        self.headers = headers
        self.session = session
        self.method = method
        self.timeout = timeout
        self.interceptor = interceptor
        self.maximumEventSize = maximumEventSize
        self.reconnection = reconnection
        self.source = source
    }

    /// The connection under way (or the last one), for its response and metrics.
    public var currentRequest: DataStreamRequest? { shared.withLock { $0.current } }

    /// Ends the stream: the connection under way is cancelled (or the wait before the next one
    /// ends) and the consumer gets `.cancelled`.
    @discardableResult
    public func cancel() -> Self {
        let error = CourierError(.cancelled, "The event stream was cancelled.")
        let (current, sleeper) = shared.withLock { shared -> (DataStreamRequest?, Task<Void, Never>?) in
            if shared.cancelled == nil { shared.cancelled = error }
            return (shared.current, shared.sleeper)
        }
        current?.cancel()
        sleeper?.cancel()
        return self
    }

    /// Whether ``cancel()`` was called.
    public var isCancelled: Bool { shared.withLock { $0.cancelled != nil } }

    /// Adds a validation rule that every connection's response must pass (after the stream's own
    /// check: a 200 `text/event-stream`). A failure ends the stream with it.
    @discardableResult
    public func validate(_ validation: @escaping @Sendable (ValidationInput) throws -> ValidationResult) -> Self {
        shared.withLock { $0.validators.append { $0.validate(validation) } }
        return self
    }

    /// Requires every connection's status code to be in `acceptableStatusCodes`.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self where S.Element == Int {
        shared.withLock { $0.validators.append { $0.validate(statusCode: acceptableStatusCodes) } }
        return self
    }

    /// The stream as it happens: each connection accepted, each event, each reconnection about to
    /// be made. Iterating starts the stream; the sequence ends when the server ends the stream for
    /// good (a 204, or a connection end that is not reconnected) and throws what ended it otherwise.
    /// Cancelling the iterating task cancels the stream.
    public func updates() -> EventStreamUpdates { EventStreamUpdates(request: self) }

    /// The events alone; see ``updates()``.
    public func events() -> ServerSentEvents { ServerSentEvents(updates: updates()) }

    /// Each event's `data` decoded as JSON into `T`; the sequence ends cleanly (and the stream is
    /// cancelled) at an event whose data is `sentinel`, such as `"[DONE]"`. A `data` that does not
    /// decode ends the sequence with `.serializationFailed`, naming the event's number.
    public func decodingEvents<T: Decodable & Sendable>(
        of type: T.Type = T.self, decoder: JSONDecoder = JSONDecoder(),
        until sentinel: String? = nil
    ) -> DecodedServerSentEvents<T> {
        DecodedServerSentEvents(events: events(), decoder: decoder, sentinel: sentinel)
    }

    /// Claims the stream for its one consumer.
    func attachConsumer() -> Bool {
        shared.withLock { shared in
            guard !shared.consumerAttached else { return false }
            shared.consumerAttached = true
            return true
        }
    }
}

/// What happens on an event stream, for ``EventStreamRequest/updates()``.
public enum EventStreamUpdate: Sendable {
    /// A connection's response was accepted (a 200 `text/event-stream`); told when its first
    /// bytes arrive, before its first event.
    case connected(HTTPURLResponse)
    /// An event.
    case event(ServerSentEvent)
    /// The connection ended and the stream will connect again after the attempt's delay.
    case reconnecting(EventStreamReconnectionAttempt)
}
