import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The composition root: which routed features a session is made of, and in which order. It is
// here, above the features, so that Core's `Session` names none of them (.ci/lint-layers.sh).
extension Session {
    /// Creates a session.
    ///
    /// - Parameters:
    ///   - configuration: Transport, timeouts, cookies and connection limits.
    ///   - baseURL: Relative paths such as `"users/42"` resolve against it.
    ///   - headers: Sent with every request; Courier's defaults (`User-Agent`, `Accept-Language`) come first.
    ///   - interceptor: Adapts and retries every request.
    ///   - eventMonitors: Observe every request.
    ///   - deduplication: Whether identical GET/HEAD requests in flight share one transfer.
    ///   - downloadStore: Where resumable downloads keep partial state (a per-user cache by default).
    ///   - responseCache: Serves and stores responses of requests marked `cached(for:version:)` (memory only by default).
    ///   - callbackQueue: Where callback-style handlers run by default.
    public convenience init(
        configuration: SessionConfiguration = .default,
        baseURL: URL? = nil,
        headers: HTTPHeaders = [:],
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = [],
        deduplication: DeduplicationPolicy = .disabled,
        downloadStore: DownloadStore = DownloadStore(directory: DownloadStore.defaultDirectory),
        responseCache: ResponseCache = ResponseCache(),
        callbackQueue: DispatchQueue = .main
    ) {
        self.init(
            serverPool: nil, configuration: configuration, baseURL: baseURL, headers: headers, interceptor: interceptor,
            eventMonitors: eventMonitors, deduplication: deduplication, downloadStore: downloadStore,
            responseCache: responseCache, callbackQueue: callbackQueue)
    }

    /// Creates a session whose relative paths resolve against the current server of `servers`,
    /// which may fail over to a backup; every switch reaches `eventMonitors` as a
    /// `.serverSwitched` notice. The other parameters are those of
    /// ``init(configuration:baseURL:headers:interceptor:eventMonitors:deduplication:downloadStore:responseCache:callbackQueue:)``.
    public convenience init(
        servers: ServerPool,
        configuration: SessionConfiguration = .default,
        headers: HTTPHeaders = [:],
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = [],
        deduplication: DeduplicationPolicy = .disabled,
        downloadStore: DownloadStore = DownloadStore(directory: DownloadStore.defaultDirectory),
        responseCache: ResponseCache = ResponseCache(),
        callbackQueue: DispatchQueue = .main
    ) {
        self.init(
            serverPool: servers, configuration: configuration, baseURL: nil, headers: headers, interceptor: interceptor,
            eventMonitors: eventMonitors, deduplication: deduplication, downloadStore: downloadStore,
            responseCache: responseCache, callbackQueue: callbackQueue)
    }

    private convenience init(
        serverPool: ServerPool?, configuration: SessionConfiguration, baseURL: URL?, headers: HTTPHeaders,
        interceptor: (any RequestInterceptor)?, eventMonitors: [any EventMonitor], deduplication: DeduplicationPolicy,
        downloadStore: DownloadStore, responseCache: ResponseCache, callbackQueue: DispatchQueue
    ) {
        let deduplicator = Deduplicator(policy: deduplication)
        // The TTL cache answers the requests that asked for it; the HTTP cache sends what it does
        // not answer through the deduplicator, so identical revalidations share one exchange.
        var features: [any RequestFeature] = [
            responseCache, HTTPCache(store: responseCache.storage, mode: configuration.httpCache), deduplicator,
        ]
        var parts: [any Sendable] = [downloadStore, deduplicator, responseCache]
        if let serverPool {
            features.append(serverPool)
            parts.append(serverPool)
        }
        self.init(
            features: features, parts: SessionParts(parts), baseURLSource: serverPool, configuration: configuration,
            baseURL: baseURL, headers: headers, interceptor: interceptor, eventMonitors: eventMonitors,
            callbackQueue: callbackQueue)
        serverPool?.addSwitchObserver { [weak self] notice in
            guard let self else { return false }
            self.monitor { $0.session(self, didNotice: notice) }
            return true
        }
    }

    /// Collapses identical in-flight requests, as the session's ``DeduplicationPolicy`` allows.
    public var deduplicator: Deduplicator {
        parts.part(Deduplicator.self) { Deduplicator(policy: .disabled) }
    }

    /// Courier's own response cache, used by requests marked `cached(for:version:)`.
    public var responseCache: ResponseCache {
        parts.part(ResponseCache.self) { ResponseCache() }
    }

    /// The servers relative paths resolve against, when the session was made with a pool.
    public var serverPool: ServerPool? { parts.part(ServerPool.self) }
}
