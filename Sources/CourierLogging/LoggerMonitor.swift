#if Logging
import Courier
import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Logs a session's requests to a swift-log `Logger`, as server-side Swift libraries do:
/// structured (constant messages, facts in the metadata), every line carrying the request's
/// `courier-request-id`, and nothing at `info` or above on the happy path.
///
/// ```swift
/// let api = Session(eventMonitors: [LoggerMonitor(logger: backgroundLogger)])
/// let user = try await api.request("users/42")
///     .logger(requestLogger)                   // this request logs here, with your metadata
///     .serializingDecodable(User.self).value
/// ```
///
/// Levels follow AsyncHTTPClient's logging design: `debug` has one line per exchange sent, redirect,
/// retry and finished (or failed) request, enough to diagnose most problems in production; `trace`
/// adds the headers sent, each exchange's metrics and cache events. A failure is thrown to the
/// caller, so it is logged at `debug` too. Only what the API cannot tell the caller goes higher: a
/// transport fallback (`notice`) and a configuration the session cannot honour (`warning`).
///
/// A request given its own logger (``Courier/Request/logger(_:)``) logs there only: the
/// session's monitor steps aside for it, so your request-scoped metadata is on every line.
public struct LoggerMonitor: EventMonitor {
    /// Where this monitor logs.
    public let logger: Logger

    /// Creates a monitor that logs to `logger` (its level decides what is logged).
    public init(logger: Logger) {
        self.logger = logger
    }

    /// The metadata key of the request's identity (its `id`, stable across retries).
    public static let requestIDKey = "courier-request-id"

    /// Whether this monitor logs `request`'s events: a session's monitor leaves a request that has
    /// a logger of its own to that logger.
    private func logs(_ request: any Request) -> Bool {
        let own = request.assumeIsolated { $0.ownEventMonitors }
        guard own.contains(where: { $0 is LoggerMonitor }) else { return true }
        return own.contains { ($0 as? LoggerMonitor)?.identity == identity }
    }

    /// Tells this monitor apart from another with the same logger (a request's own is a new one).
    private let identity = UUID()

    private func metadata(_ request: any Request, _ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = extra
        metadata[Self.requestIDKey] = "\(request.id.uuidString)"
        return metadata
    }

    /// Logs each exchange sent (`debug`) and its headers (`trace`).
    public func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        guard logger.logLevel <= .debug, logs(request) else { return }
        logger.debug(
            "sending request",
            metadata: metadata(
                request, ["http.request.method": "\(urlRequest.httpMethod ?? "GET")", "url.full": "\(urlRequest.url?.absoluteString ?? "")"]))
        logger.trace("request headers", metadata: metadata(request, ["http.request.headers": "\(headers.map { "\($0.name): \($0.value)" })"]))
    }

    /// Logs a redirect being followed (`debug`).
    public func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        guard logger.logLevel <= .debug, logs(request) else { return }
        logger.debug(
            "following redirect",
            metadata: metadata(
                request, ["http.response.status_code": "\(response.statusCode)", "location": "\(urlRequest.url?.absoluteString ?? "")"]))
    }

    /// Logs a retry about to be scheduled (`debug`).
    public func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) {
        guard logger.logLevel <= .debug, logs(request) else { return }
        logger.debug("retrying request", metadata: metadata(request, ["delay": "\(delay)", "error.type": "\(error.kind.name)", "error": "\(error)"]))
    }

    /// Logs each exchange's metrics (`trace`).
    public func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        guard logger.logLevel <= .trace, logs(request) else { return }
        logger.trace("exchange completed", metadata: metadata(request, ["metrics": "\(metrics)"]))
    }

    /// Logs the HTTP cache's decision (`trace`).
    public func request(_ request: any Request, didUseCache event: HTTPCacheEvent) {
        guard logger.logLevel <= .trace, logs(request) else { return }
        logger.trace("http cache", metadata: metadata(request, ["event": "\(event)"]))
    }

    /// Logs the finished request (`debug`), or its failure (`debug` as well: the caller gets the error).
    public func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
        guard logger.logLevel <= .debug, logs(request) else { return }
        var facts: Logger.Metadata = ["duration": "\(metrics?.total ?? .zero)", "bytes.received": "\(metrics?.bytesReceived ?? 0)"]
        if let response { facts["http.response.status_code"] = "\(response.statusCode)" }
        if let error {
            facts["error.type"] = "\(error.kind.name)"
            facts["error"] = "\(error)"
            logger.debug("request failed", metadata: metadata(request, facts))
        } else {
            logger.debug("request finished", metadata: metadata(request, facts))
        }
    }

    /// Logs what the session noticed: a transport fallback at `notice`, a configuration it
    /// cannot honour at `warning` (the requests fail, but why shows only here), the rest at `debug`.
    public func session(_ session: Session, didNotice notice: SessionNotice) {
        let level: Logger.Level =
            switch notice.kind {
            case .invalidConfiguration: .warning
            case .transportFallback: .notice
            default: .debug
            }
        logger.log(level: level, "session notice", metadata: ["notice": "\(notice.kind.rawValue)", "message": "\(notice.message)"])
    }
}

extension Request {
    /// Logs this request's events to `logger` (see ``LoggerMonitor``) instead of the session's
    /// `LoggerMonitor`, so the metadata you put on `logger` is on every line.
    @discardableResult
    public nonisolated func logger(_ logger: Logger) -> Self {
        eventMonitors([LoggerMonitor(logger: logger)])
    }
}
#endif
