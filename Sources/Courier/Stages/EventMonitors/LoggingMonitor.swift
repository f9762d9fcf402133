import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs one line per finished request (method, URL, status or error, body bytes, time) and,
/// in verbose mode, one line per retry and redirect.
///
/// ```swift
/// let api = Session(eventMonitors: [LoggingMonitor()])               // to stderr
/// let quiet = Session(eventMonitors: [LoggingMonitor { logger.debug("\($0)") }])
/// ```
///
/// Lines look like this:
/// ```
/// [Courier] GET http://127.0.0.1:8080/users?page=2 → 200, 1532 bytes, 12 ms
/// [Courier] POST http://127.0.0.1:8080/orders → 503 validationFailed, 0 bytes, 1043 ms, 2 retries
/// [Courier] GET http://10.0.0.1/ → cannotConnect, 0 bytes, 3 ms
/// [Courier] GET http://127.0.0.1:8080/a retry 1 in 500 ms after validationFailed (503)
/// [Courier] GET http://127.0.0.1:8080/a redirect 302 → http://127.0.0.1:8080/b
/// ```
///
/// The sink is called on the request's serial executor, like every monitor event: keep it quick
/// (hand the line to your logger; do not block on I/O you do not control).
public struct LoggingMonitor: EventMonitor {
    /// Where lines go.
    public let sink: @Sendable (String) -> Void
    /// Whether retries and redirects are logged too.
    public let verbose: Bool

    /// Creates a monitor that logs to `sink` (standard error by default).
    public init(verbose: Bool = false, sink: @escaping @Sendable (String) -> Void = LoggingMonitor.standardError) {
        self.verbose = verbose
        self.sink = sink
    }

    /// Writes `line` and a newline to standard error in one `write`, so concurrent lines do not
    /// interleave; a failed write (stderr closed) is ignored.
    public static let standardError: @Sendable (String) -> Void = { line in
        try? FileHandle.standardError.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Logs the finished request.
    public func request(
        _ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?,
        error: CourierError?
    ) {
        // Monitor events run on the request's executor (see `EventMonitor`), so its state can be
        // read synchronously: no hop, no lock, nothing allocated before the line itself.
        let facts = request.assumeIsolated { LoggedRequest($0) }
        var line = "[Courier] \(facts.method) \(facts.url) → "
        if let error {
            if let code = error.responseCode { line += "\(code) " }
            line += error.kind.name
        } else if let response {
            line += String(response.statusCode)
        }
        line += ", \(metrics?.bytesReceived ?? 0) bytes, \(Self.milliseconds(facts.elapsed)) ms"
        if facts.retryCount > 0 { line += ", \(facts.retryCount) \(facts.retryCount == 1 ? "retry" : "retries")" }
        sink(line)
    }

    /// Logs the retry in verbose mode.
    public func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) {
        guard verbose else { return }
        let facts = request.assumeIsolated { LoggedRequest($0) }
        let status = error.responseCode.map { " (\($0))" } ?? ""
        sink("[Courier] \(facts.method) \(facts.url) retry \(facts.retryCount) in \(Self.milliseconds(delay)) ms after \(error.kind.name)\(status)")
    }

    /// Logs the redirect in verbose mode.
    public func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        guard verbose else { return }
        let facts = request.assumeIsolated { LoggedRequest($0) }
        sink("[Courier] \(facts.method) \(facts.url) redirect \(response.statusCode) → \(urlRequest.url?.absoluteString ?? "?")")
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}

/// What a log line says about the request, read on its executor.
private struct LoggedRequest: Sendable {
    var method: String
    var url: String
    var retryCount: Int
    var elapsed: Duration

    init(_ request: isolated some Request) {
        self = request.withIsolatedEngine { LoggedRequest(engine: $0) }
    }

    private init(engine: RequestEngine) {
        let sent = engine.record.request ?? engine.record.initialRequest
        method = sent?.method.rawValue ?? "?"
        url = sent?.url?.absoluteString ?? engine.lifecycle.completion?.error?.url?.absoluteString ?? "?"
        retryCount = engine.record.retryCount
        elapsed = ContinuousClock.now - engine.createdAt
    }
}
