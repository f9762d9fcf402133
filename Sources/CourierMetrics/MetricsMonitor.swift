#if Metrics
import Courier
import CoreMetrics
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Reports a session's HTTP traffic through swift-metrics, as OpenTelemetry's HTTP client
/// semantic conventions name it:
///
/// - `http.client.request.duration`: a histogram (a `Recorder`, in seconds) with one value per
///   exchange that went to the network (each attempt and each redirect followed), with the
///   attributes `http.request.method`, `server.address`, `server.port`, `url.scheme`,
///   `http.response.status_code`, `network.protocol.version` and, when it failed, `error.type`.
///   Configure your backend's buckets with ``requestDurationBuckets``.
/// - `http.client.active_requests`: a `Meter` (up-down counter) of exchanges in flight, with
///   `http.request.method`, `server.address`, `server.port` and `url.scheme`.
/// - `courier.http.client.connections`: a `Counter` of exchanges by `courier.connection.reused`
///   (`true` or `false`), where the transport knows whether it reused a connection.
///
/// ```swift
/// MetricsSystem.bootstrap(myFactory)                    // once, at start-up
/// let api = Session(eventMonitors: [MetricsMonitor()])
/// ```
///
/// Answers from the HTTP cache or a shared (deduplicated) transfer are not network exchanges and
/// are not counted in the duration histogram.
public struct MetricsMonitor: EventMonitor {
    /// The buckets OpenTelemetry's conventions advise for `http.client.request.duration`, in seconds.
    public static let requestDurationBuckets: [Double] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10]

    /// The name of the request duration histogram.
    public static let requestDurationLabel = "http.client.request.duration"
    /// The name of the active requests up-down counter.
    public static let activeRequestsLabel = "http.client.active_requests"
    /// The name of the connection counter.
    public static let connectionsLabel = "courier.http.client.connections"

    private let factory: any MetricsFactory
    private let statuses = StatusTable()

    /// The status code of each request's exchange in flight, from its response head to its end
    /// (`Request.response` is the last final response, not a redirect's).
    private final class StatusTable: Sendable {
        let table = Locked<[UUID: Int]>([:])
    }

    /// Creates a monitor that reports to `factory`, by default the one `MetricsSystem` was
    /// bootstrapped with.
    public init(factory: any MetricsFactory = MetricsSystem.factory) {
        self.factory = factory
    }

    /// Counts the exchange as active.
    public func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        statuses.table.withLock { _ = $0.removeValue(forKey: request.id) }
        Meter(label: Self.activeRequestsLabel, dimensions: Self.requestAttributes(urlRequest), factory: factory).increment()
    }

    /// Notes the exchange's status code.
    public func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        statuses.table.withLock { $0[request.id] = response.statusCode }
    }

    /// Notes the status code of a redirect's exchange.
    public func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        statuses.table.withLock { $0[request.id] = response.statusCode }
    }

    /// Forgets the request.
    public func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
        statuses.table.withLock { _ = $0.removeValue(forKey: request.id) }
    }

    /// Records the exchange's duration and counts it as no longer active.
    public func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        let status = statuses.table.withLock { $0.removeValue(forKey: request.id) }
        guard let urlRequest = request.assumeIsolated({ $0.lastRequest }) else { return }
        let attributes = Self.requestAttributes(urlRequest)
        Meter(label: Self.activeRequestsLabel, dimensions: attributes, factory: factory).decrement()
        guard metrics.source == .network || metrics.source == .revalidated else { return }
        var dimensions = attributes
        if let status { dimensions.append(("http.response.status_code", String(status))) }
        if let version = metrics.httpVersion { dimensions.append(("network.protocol.version", Self.protocolVersion(version))) }
        if let type = Self.errorType(error, status: status) { dimensions.append(("error.type", type)) }
        let seconds = Double(metrics.total.components.seconds) + Double(metrics.total.components.attoseconds) / 1e18
        Recorder(label: Self.requestDurationLabel, dimensions: dimensions, aggregate: true, factory: factory).record(seconds)
        if let reused = metrics.connectionReused {
            Counter(label: Self.connectionsLabel, dimensions: [("courier.connection.reused", String(reused))], factory: factory).increment()
        }
    }

    /// `http.request.method`, `server.address`, `server.port`, `url.scheme`.
    static func requestAttributes(_ urlRequest: URLRequest) -> [(String, String)] {
        let url = urlRequest.url
        let scheme = url?.scheme?.lowercased() ?? "http"
        let port = url?.port ?? (scheme == "https" ? 443 : 80)
        return [
            ("http.request.method", knownMethod(urlRequest.httpMethod ?? "GET")),
            ("server.address", url?.host ?? ""),
            ("server.port", String(port)),
            ("url.scheme", scheme),
        ]
    }

    /// The conventions' method set; any other method is `_OTHER`, so a caller cannot blow up the
    /// number of series.
    static func knownMethod(_ method: String) -> String {
        ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "QUERY"].contains(method) ? method : "_OTHER"
    }

    /// `HTTP/1.1` → `1.1`, `HTTP/2` → `2`.
    static func protocolVersion(_ version: String) -> String {
        version.uppercased().hasPrefix("HTTP/") ? String(version.dropFirst(5)) : version
    }

    /// The error's kind, or for an error status (4xx or 5xx) its code, per the conventions.
    static func errorType(_ error: CourierError?, status: Int?) -> String? {
        if let error, error.responseCode == nil { return error.kind.name }
        if let status, status >= 400 { return String(status) }
        return error?.kind.name
    }
}
#endif
