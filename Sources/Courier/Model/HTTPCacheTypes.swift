import Foundation

/// Whether a session caches HTTP responses the way RFC 9111 describes, set with
/// ``SessionConfiguration/httpCache``.
///
/// Off by default: a cache changes what a request returns (a stored answer instead of the
/// server's current one) and writes response bodies to memory and, with a ``ResponseCache``
/// disk directory, to disk, which an app should choose knowingly, with a directory of its
/// choosing. Turn it on for a session with one line:
///
/// ```swift
/// var configuration = SessionConfiguration()
/// configuration.httpCache = .enabled
/// let session = Session(configuration: configuration,
///                       responseCache: ResponseCache(diskDirectory: cachesURL.appendingPathComponent("http")))
/// ```
public enum HTTPCacheMode: Sendable, Hashable {
    /// No HTTP caching: every request goes to the network (requests marked
    /// `cached(for:version:)` still use the TTL cache). The default.
    case disabled
    /// A private cache, as a client app keeps for its user: responses to requests with
    /// `Authorization` and responses marked `private` are stored.
    case enabled
    /// A shared cache, as a gateway serving many users keeps: `private` responses are not
    /// stored, `s-maxage` applies, and responses to requests with `Authorization` are stored
    /// only when the response allows it (`public`, `s-maxage`, `must-revalidate`).
    case shared
}

/// How one request uses the HTTP cache, set with ``Request/cachePolicy(_:)``; it overrides the
/// session's ``SessionConfiguration/httpCache`` for that request (a request that sets a policy
/// uses the session's ``ResponseCache`` even when the session's HTTP cache is off).
public enum HTTPCachePolicy: Sendable, Hashable {
    /// Follow the headers (RFC 9111): serve fresh responses, revalidate stale ones.
    case useProtocolPolicy
    /// Go to the network without sending validators; a storable answer is still stored.
    case reloadIgnoringCache
    /// Always ask the server, with validators when a response is stored, even if it is fresh.
    case revalidate
    /// Serve any stored response, however stale, without asking; go to the network only when
    /// nothing is stored.
    ///
    /// A stored response that forbids being served unvalidated is still revalidated with the
    /// server: one with a response `no-cache`, or a stale one with `must-revalidate` (in a
    /// ``HTTPCacheMode/shared`` cache also `proxy-revalidate` or `s-maxage`), as RFC 9111
    /// §5.2.2.2 requires in all circumstances.
    case returnCacheElseLoad
    /// Serve any stored response, however stale, and never go to the network: with nothing
    /// stored, the answer is a `504 Gateway Timeout` made by Courier (RFC 9111 §5.2.1.7).
    ///
    /// A stored response that forbids being served unvalidated is not served either, and the
    /// answer is the `504`: one with a response `no-cache`, or a stale one with `must-revalidate`
    /// (in a ``HTTPCacheMode/shared`` cache also `proxy-revalidate` or `s-maxage`), as RFC 9111
    /// §5.2.2.2 requires in all circumstances.
    case onlyIfCached
}

/// Where a response came from.
///
/// ```swift
/// let response = await session.request("catalog").serializingData().response
/// if response.source == .revalidated { print("unchanged since last time") }
/// ```
public enum ResponseSource: Sendable, Hashable, CustomStringConvertible {
    /// The server sent it for this request (no stored response was used).
    case network
    /// A stored response, served without asking the server (fresh by the HTTP cache's rules, or
    /// younger than a `cached(for:version:)` maximum age).
    case cache
    /// A stored response the server confirmed unchanged with `304 Not Modified`.
    case revalidated
    /// A stored response served although it is stale, for the reason given.
    case staleCache(StaleReason)

    /// Why a stale stored response was served.
    public enum StaleReason: Sendable, Hashable, CustomStringConvertible {
        /// The request allowed it (`Cache-Control: max-stale`).
        case maxStaleAllowed
        /// The response allowed it while a revalidation runs in the background
        /// (`stale-while-revalidate`, RFC 5861).
        case staleWhileRevalidate
        /// The server could not be reached or answered with a 5xx, and the response allowed it
        /// (`stale-if-error`, RFC 5861).
        case staleIfError
        /// The request's policy asked for any stored response (``HTTPCachePolicy/returnCacheElseLoad``,
        /// ``HTTPCachePolicy/onlyIfCached``).
        case cachePolicy

        /// A short name: `max-stale`, `stale-while-revalidate`, `stale-if-error` or `cache-policy`.
        public var description: String {
            switch self {
            case .maxStaleAllowed: "max-stale"
            case .staleWhileRevalidate: "stale-while-revalidate"
            case .staleIfError: "stale-if-error"
            case .cachePolicy: "cache-policy"
            }
        }
    }

    /// A short name: `network`, `cache`, `revalidated` or `stale cache (reason)`.
    public var description: String {
        switch self {
        case .network: "network"
        case .cache: "cache"
        case .revalidated: "revalidated"
        case .staleCache(let reason): "stale cache (\(reason))"
        }
    }
}

/// What the HTTP cache did for a request, as event monitors see it
/// (``EventMonitor/request(_:didUseCache:)``).
public enum HTTPCacheEvent: Sendable, Hashable, CustomStringConvertible {
    /// A stored response was served without asking the server (fresh, or stale for the reason given).
    case hit(ResponseSource)
    /// Nothing usable was stored; the request went to the network. The reason says why, e.g.
    /// `"nothing stored"`, `"Vary mismatch"`, `"stale without validators"`.
    case miss(reason: String)
    /// A stored response was revalidated: `notModified` is `true` for a `304` (the stored body
    /// is served), `false` when the server sent a new response.
    case revalidated(notModified: Bool)
    /// A response was stored (`bytes` of body).
    case stored(bytes: Int64)
    /// A response was not stored, for the reason given (e.g. `"no-store"`, `"status 500 is not cacheable"`).
    case notStored(reason: String)
    /// A stored response for `url` was removed because an unsafe request to it succeeded.
    case invalidated(URL)

    /// A short readable form, e.g. `hit (cache)`, `miss: nothing stored`.
    public var description: String {
        switch self {
        case .hit(let source): "hit (\(source))"
        case .miss(let reason): "miss: \(reason)"
        case .revalidated(let notModified): notModified ? "revalidated: not modified" : "revalidated: changed"
        case .stored(let bytes): "stored \(bytes) bytes"
        case .notStored(let reason): "not stored: \(reason)"
        case .invalidated(let url): "invalidated \(url.absoluteString)"
        }
    }
}
