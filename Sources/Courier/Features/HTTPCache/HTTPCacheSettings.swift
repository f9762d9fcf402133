import Foundation

/// A request's own HTTP cache policy, set with ``Request/cachePolicy(_:)``; `nil` follows the session.
struct HTTPCachePolicySetting: RequestFeatureSetting {
    static var defaultValue: HTTPCachePolicy? { nil }
}

extension Request {
    /// Overrides how this request uses the HTTP cache (see ``HTTPCachePolicy``). A request that
    /// sets a policy uses the session's ``ResponseCache`` by the HTTP rules even when the
    /// session's ``SessionConfiguration/httpCache`` is off.
    ///
    /// ```swift
    /// let offline = try await session.request("catalog").cachePolicy(.onlyIfCached)
    ///     .serializingDecodable(Catalog.self).value
    /// ```
    @discardableResult
    public nonisolated func cachePolicy(_ policy: HTTPCachePolicy) -> Self {
        updateFeatureSetting(HTTPCachePolicySetting.self) { $0 = policy }
        return self
    }
}
