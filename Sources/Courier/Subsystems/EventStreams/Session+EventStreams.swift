import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Makes a Server-Sent Events stream: `Accept: text/event-stream` and `Cache-Control: no-cache`
    /// (unless `headers` say otherwise), reconnected as EventSource does.
    ///
    /// ```swift
    /// for try await event in session.eventStream("v1/events").events() {
    ///     print(event.id ?? "-", event.event, event.data)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - url: The URL, or a path resolved against the session's base URL.
    ///   - method: The HTTP method (GET by default).
    ///   - headers: Headers added to the session's default headers and the event-stream ones.
    ///   - timeout: The timeout in seconds (the session's when `nil`).
    ///   - interceptor: Adapters and retriers that run after the session's.
    ///   - maximumEventSize: The most bytes one event may hold (8 MiB by default); a longer one
    ///     ends the stream with `.responseTooLarge`.
    ///   - reconnection: When the stream reconnects (``EventStreamReconnection/automatic`` by
    ///     default; ``EventStreamReconnection/never`` for one connection only).
    ///   - lastEventID: The id of the last event already seen, sent as `Last-Event-ID` from the
    ///     first connection on: to resume a stream an earlier run of the app was reading.
    ///   - requestModifier: A closure that changes each connection's `URLRequest` before it is adapted.
    public func eventStream(
        _ url: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil,
        maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize,
        reconnection: EventStreamReconnection = .automatic, lastEventID: String? = nil,
        requestModifier: RequestModifier? = nil
    ) -> EventStreamRequest {
        let headers = Self.eventStreamHeaders(headers)
        return EventStreamRequest(
            session: self, method: method, timeout: timeout, interceptor: interceptor,
            maximumEventSize: maximumEventSize, reconnection: reconnection,
            lastEventID: lastEventID.flatMap { $0.isEmpty ? nil : $0 }, headers: headers
        ) { session in
            try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: requestModifier)
        }
    }

    /// Makes a Server-Sent Events stream whose request carries `parameters` encoded by `encoder`:
    /// the shape of most LLM streaming APIs.
    ///
    /// ```swift
    /// let stream = session.eventStream("v1/chat", method: .post, parameters: prompt, encoder: .json)
    /// for try await chunk in stream.decodingEvents(of: ChatChunk.self, until: "[DONE]") { print(chunk) }
    /// ```
    ///
    /// A stream whose method is not idempotent (a POST) is not sent again after its connection
    /// ends, unless `reconnection.resendsNonIdempotentRequests` says so.
    public func eventStream<Parameters: Encodable & Sendable>(
        _ url: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters?,
        encoder: any ParameterEncoder = .urlEncodedForm, headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil,
        interceptor: (any RequestInterceptor)? = nil, maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize,
        reconnection: EventStreamReconnection = .automatic, lastEventID: String? = nil, requestModifier: RequestModifier? = nil
    ) -> EventStreamRequest {
        let headers = Self.eventStreamHeaders(headers)
        return EventStreamRequest(
            session: self, method: method, timeout: timeout, interceptor: interceptor,
            maximumEventSize: maximumEventSize, reconnection: reconnection,
            lastEventID: lastEventID.flatMap { $0.isEmpty ? nil : $0 }, headers: headers
        ) { session in
            // The encoder sees only the request's own headers, so the body's type wins over a session default.
            var encoded = try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: nil) { request in
                try encoder.encode(parameters, into: request)
            }
            try requestModifier?(&encoded)
            return encoded
        }
    }

    /// The stream's own headers under the caller's.
    private static func eventStreamHeaders(_ headers: HTTPHeaders?) -> HTTPHeaders {
        // merging keeps every line of a name the caller repeated.
        (["Accept": "text/event-stream", "Cache-Control": "no-cache"] as HTTPHeaders).merging(headers ?? [:])
    }
}
