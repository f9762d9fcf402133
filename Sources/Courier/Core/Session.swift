import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// Makes requests: holds the configuration, base URL, default headers, interceptor, monitors
/// and transport that its requests share.
///
/// Create one per API (or use ``shared``) and keep it: sessions own a transport with its own
/// connection pool and thread.
public final class Session: Sendable {
    /// A zero-configuration session.
    public static let shared = Session()

    /// The configuration it was created with.
    public let configuration: SessionConfiguration
    /// Relative request paths resolve against this URL.
    ///
    /// The rule is that of relative URLs (RFC 3986, as in Alamofire and `URL(string:relativeTo:)`),
    /// with one convenience: the base path counts as a directory even without a trailing slash.
    /// - `"users/42"` keeps the base path: `https://api.x/v2` + `"users/42"` → `https://api.x/v2/users/42`.
    /// - `"/users/42"` starts at the host and **replaces** the base path:
    ///   `https://api.x/v2` + `"/users/42"` → `https://api.x/users/42`. Debug builds warn when this
    ///   drops a base path (a ``SessionNotice/Kind-swift.enum/basePathDropped`` notice to the event
    ///   monitors, and one line on standard error per path).
    /// - An absolute URL (`"https://other.example/x"`) is used as it is.
    ///
    /// ```swift
    /// let api = Session(baseURL: URL(string: "https://api.example.com/v2"))
    /// api.request("users/42")    // https://api.example.com/v2/users/42
    /// api.request("/health")     // https://api.example.com/health (base path dropped)
    /// ```
    public let baseURL: URL?
    /// Headers sent with every request (a request's own headers win).
    public let headers: HTTPHeaders
    /// ``headers`` as the dictionary `URLRequest` stores, built once instead of for every request.
    let headerFields: [String: String]
    /// Adapts and retries every request (before the request's own interceptors).
    public let interceptor: (any RequestInterceptor)?
    /// Where callback-style handlers and progress hooks run unless a queue is given.
    public let callbackQueue: DispatchQueue
    let monitor: CompositeEventMonitor
    let transport: any Transport
    /// The capabilities every request of this session goes through, in the order they are asked
    /// to route an exchange (see ``RequestFeature``).
    let features: [any RequestFeature]
    /// The session's requests, held weakly (see ``WeakRequestTable``).
    private let registry = Locked(WeakRequestTable<Void>())
    /// Open, draining, releasing or closed (see ``shutdown(gracePeriod:clock:)``).
    let lifecycle = Locked(SessionLifecycle<CheckedContinuation<Void, Never>>())

    /// What the layers above Core keep in the session (its download store, its routed
    /// features), reached through their own extensions of `Session` (see ``SessionParts``).
    let parts: SessionParts
    /// Where relative paths resolve instead of ``baseURL`` (the server pool), when there is one.
    let baseURLSource: (any SessionBaseURLSource)?

    /// Creates a session of `features`, in the order they are asked to route an exchange. Core
    /// names no feature: the public initialisers, which choose the features, are in
    /// `Features/Session+Features.swift`.
    init(
        features: [any RequestFeature], parts: SessionParts, baseURLSource: (any SessionBaseURLSource)?,
        configuration: SessionConfiguration, baseURL: URL?, headers: HTTPHeaders, interceptor: (any RequestInterceptor)?,
        eventMonitors: [any EventMonitor], callbackQueue: DispatchQueue
    ) {
        self.configuration = configuration
        self.baseURL = baseURL
        // No Accept-Encoding among the defaults: the transport lists what it decodes (only a
        // caller's own is ever sent as given).
        self.headers = HTTPHeaders.default.merging(headers)
        headerFields = self.headers.dictionary
        self.interceptor = interceptor
        self.callbackQueue = callbackQueue
        self.features = features
        self.parts = parts
        self.baseURLSource = baseURLSource
        self.monitor = CompositeEventMonitor(monitors: eventMonitors)
        let (transport, notice) = TransportFactory.makeTransport(for: configuration)
        self.transport = transport
        if let notice {
            monitor { $0.session(self, didNotice: notice) }
        }
    }

    deinit {
        transport.shutdown()
    }

    /// Starts `exchange`: the first feature that takes it answers it, otherwise the transport does.
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, from start: Int = 0) -> RoutedTransfer {
        var index = start
        while index < features.count {
            if let routed = features[index].route(exchange, sink: sink, onward: ExchangeOnward(session: self, start: index + 1)) {
                return routed
            }
            index += 1
        }
        return RoutedTransfer(transfer: transport.startTransfer(exchange.request, sink: sink), origin: .network)
    }

    /// The transport carrying this session's requests: `"curl"` or `"urlSession"`.
    public var transportName: String { transport.capabilities.name }

    /// Cancels every request of this session that has not finished.
    public func cancelAllRequests() {
        let requests = registry.withLock { $0.liveRequests }
        for request in requests { request.cancelFromSession() }
    }

    func register(_ request: some Request) {
        let released = registry.withLock { $0.insert((), for: request) }
        for id in released { endRunning(id) }
    }

    func unregister(_ id: UUID) {
        _ = registry.withLock { $0.removeValue(forKey: id) }
        endRunning(id)
    }

    /// How many requests the session keeps track of (live ones, and released ones not swept yet).
    var registeredRequestCount: Int { registry.withLock { $0.count } }

    /// Ends the requests that were released without ending (a suspended request nobody holds),
    /// so a shutdown does not wait for them.
    func endAbandonedRequests() {
        let gone = registry.withLock { $0.removeReleased() }
        for id in gone { endRunning(id) }
    }

    /// `url` resolved against the base URL as ``resolve(_:)`` would, without its checks and
    /// warnings; nil when the result is not an http(s) URL.
    func resolvedWithoutChecks(_ url: URL) -> URL? {
        let resolved = (baseURLSource?.currentBaseURL ?? baseURL).flatMap { $0.resolving(url) } ?? url
        return resolved.isHTTP ? resolved : nil
    }

    /// Resolves a URL against ``baseURL`` (API clients treat the base path as a directory).
    func resolve(_ url: URL) throws -> URL {
        let base = baseURLSource?.currentBaseURL ?? baseURL
        let resolved = base.flatMap { $0.resolving(url) } ?? url
        #if DEBUG
        if let base, let dropped = base.droppedBasePath(resolving: url) {
            let notice = SessionNotice(
                kind: .basePathDropped,
                message: "\"\(url.relativeString)\" starts with '/', so it replaces "
                    + "the base URL's path \(dropped): \(base.absoluteString) + \(url.relativeString) → \(resolved.absoluteString). "
                    + "Write \"\(url.relativeString.drop { $0 == "/" })\" to keep the base path.")
            monitor { $0.session(self, didNotice: notice) }
            DebugWarnings.emit("Courier: warning: " + notice.message, once: "\(base.absoluteString) \(url.relativeString)")
        }
        #endif
        guard resolved.isHTTP else {
            throw CourierError(
                .invalidURL,
                "\"\(url.absoluteString)\" is not an absolute http(s) URL"
                    + (baseURL == nil ? " and the session has no base URL." : "."), url: url)
        }
        return resolved
    }
}

extension Request {
    nonisolated func cancelFromSession() { cancel() }
}
