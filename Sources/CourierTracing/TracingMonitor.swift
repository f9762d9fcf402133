#if Tracing
import Courier
import CourierLocking
import Foundation
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Traces a session's requests with swift-distributed-tracing, as OpenTelemetry's HTTP client
/// semantic conventions describe: one client span per exchange sent (each attempt and each
/// redirect Courier follows), named after the method, its trace context injected into that
/// exchange's headers (W3C `traceparent` and `tracestate` with a W3C propagator such as
/// swift-otel's).
///
/// ```swift
/// InstrumentationSystem.bootstrap(tracer)               // once, at start-up (swift-otel, ...)
/// let api = Session(eventMonitors: [TracingMonitor()])
/// try await withSpan("checkout") { _ in
///     try await api.request("orders", method: .post).serializingData().value
/// }
/// ```
///
/// The spans' parent is the `ServiceContext` current where the request was created (the
/// `session.request(...)` call). Each span carries `http.request.method`, `url.full`,
/// `server.address`, `server.port`, `http.request.resend_count` (from the second exchange of a
/// request on: retries and redirects both count), and when known `http.response.status_code`,
/// `network.protocol.version` and `error.type` (an error's kind, or an error status). A failed
/// exchange records its error and ends with an error status; the HTTP cache's answers carry
/// `courier.response.source`.
public struct TracingMonitor: EventMonitor {
    private let tracer: any Tracer
    private let traces = TraceTable()

    /// Creates a monitor that traces with `tracer`, by default the one
    /// `InstrumentationSystem` was bootstrapped with.
    public init(tracer: any Tracer = InstrumentationSystem.tracer) {
        self.tracer = tracer
    }

    /// The requests being traced, by identity; shared by the monitor's copies.
    private final class TraceTable: Sendable {
        let table = Locked(WeakRequestTable<RequestTrace>())
    }

    /// What the monitor keeps for a request between its events.
    private struct RequestTrace {
        var parent: ServiceContext
        var exchanges = 0
        var span: (any Span)?
        /// The status code of the exchange in flight (`Request.response` is the last final
        /// response, not a redirect's).
        var status: Int?
    }

    /// Captures the context current where the request is created.
    public func requestDidCreate(_ request: any Request) {
        guard let context = ServiceContext.current else { return }
        _ = traces.table.withLock { $0.insert(RequestTrace(parent: context), for: request) }
    }

    /// How many requests the monitor holds a trace for (live ones, and released ones not swept yet).
    var tracedRequestCount: Int { traces.table.withLock { $0.count } }

    /// Starts the exchange's span and injects its context into the exchange's headers.
    public func request(_ request: any Request, willSend urlRequest: URLRequest, attempt: Int, headers: inout HTTPHeaders) {
        let method = urlRequest.httpMethod ?? "GET"
        let (parent, resends) = traces.table.withLock { traces -> (ServiceContext, Int) in
            guard let trace = traces[request.id] else {
                traces.insert(RequestTrace(parent: .topLevel), for: request)
                return (.topLevel, 0)
            }
            return (trace.parent, trace.exchanges)
        }
        let span = tracer.startSpan(Self.knownMethod(method) == "_OTHER" ? "HTTP" : method, context: parent, ofKind: .client)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = Self.knownMethod(method)
            if Self.knownMethod(method) == "_OTHER" { attributes["http.request.method_original"] = method }
            if let url = urlRequest.url {
                attributes["url.full"] = Self.redacted(url)
                attributes["server.address"] = url.host ?? ""
                attributes["server.port"] = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
            }
            if resends > 0 { attributes["http.request.resend_count"] = resends }
        }
        var carrier = headers
        tracer.inject(span.context, into: &carrier, using: HeadersInjector())
        headers = carrier
        let unfinished = traces.table.withLock { traces in
            defer {
                traces[request.id]?.span = span
                traces[request.id]?.status = nil
                traces[request.id]?.exchanges += 1
            }
            return traces[request.id]?.span
        }
        unfinished?.end()
    }

    /// Notes the exchange's status code.
    public func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        traces.table.withLock { $0[request.id]?.status = response.statusCode }
    }

    /// Notes a redirect on the exchange's span.
    public func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        traces.table.withLock { $0[request.id]?.status = response.statusCode }
        currentSpan(request)?.addEvent(SpanEvent(name: "redirect", attributes: ["url.full": .string(urlRequest.url.map(Self.redacted) ?? "")]))
    }

    /// Notes the HTTP cache's decision on the exchange's span.
    public func request(_ request: any Request, didUseCache event: HTTPCacheEvent) {
        currentSpan(request)?.addEvent(SpanEvent(name: "http cache", attributes: ["event": .string("\(event)")]))
    }

    /// Ends the exchange's span with what the exchange found out.
    public func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        guard let (span, status) = takeSpan(request) else { return }
        span.updateAttributes { attributes in
            if let status { attributes["http.response.status_code"] = status }
            if let version = metrics.httpVersion {
                attributes["network.protocol.version"] = version.uppercased().hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
            }
            if metrics.source != .network { attributes["courier.response.source"] = "\(metrics.source)" }
        }
        if let error, error.responseCode == nil {
            span.attributes["error.type"] = error.kind.name
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.kind.name))
        } else if let status, status >= 400 {
            span.attributes["error.type"] = String(status)
            span.setStatus(SpanStatus(code: .error))
        }
        span.end()
    }

    /// Forgets the request (ending a span the transport never reported on, which only a request
    /// that failed before its exchange could start leaves).
    public func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
        let trace = traces.table.withLock { $0.removeValue(forKey: request.id) }
        guard let span = trace?.span else { return }
        if let error {
            span.attributes["error.type"] = error.kind.name
            span.recordError(error)
            span.setStatus(SpanStatus(code: .error, message: error.kind.name))
        }
        span.end()
    }

    private func currentSpan(_ request: any Request) -> (any Span)? {
        traces.table.withLock { $0[request.id]?.span }
    }

    private func takeSpan(_ request: any Request) -> (any Span, Int?)? {
        traces.table.withLock { traces in
            defer {
                traces[request.id]?.span = nil
                traces[request.id]?.status = nil
            }
            return traces[request.id].flatMap { trace in trace.span.map { ($0, trace.status) } }
        }
    }

    /// The conventions' methods; any other is `_OTHER` (the span is then named `HTTP`).
    static func knownMethod(_ method: String) -> String {
        ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"].contains(method) ? method : "_OTHER"
    }

    /// The URL without credentials (`user:password@` becomes `REDACTED:REDACTED@`), as the
    /// conventions require of `url.full`.
    static func redacted(_ url: URL) -> String {
        guard url.user != nil || url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.user = components.user.map { _ in "REDACTED" }
        components.password = components.password.map { _ in "REDACTED" }
        return components.string ?? url.absoluteString
    }
}

/// Writes a tracer's context into an exchange's headers, replacing what an earlier attempt put there.
struct HeadersInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HTTPHeaders) {
        carrier.update(name: key, value: value)
    }
}
#endif
