import Foundation

// Here rather than beside the TTL cache: the HTTP cache leaves alone a request that set it (such a
// request is the TTL cache's), so both policies read it, and neither names the other's types.
/// How one request uses the response cache, set with `cached(for:version:)`.
struct ResponseCacheSettings: Sendable, Hashable {
    /// How long a stored response is served without asking the network.
    var maximumAge: Duration
    /// A stored response with another version is never served.
    var version: Int?
    /// Go to the network even when a fresh response is stored (set by `ignoringCache()`); the
    /// result is still stored.
    var ignoresStoredResponse = false
}

extension ResponseCacheSettings: RequestFeatureSetting {
    /// A request that did not call `cached(for:version:)` or `ignoringCache()` does not use the cache.
    static var defaultValue: ResponseCacheSettings? { nil }
}
