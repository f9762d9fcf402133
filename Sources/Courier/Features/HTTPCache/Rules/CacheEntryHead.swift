import Foundation

/// What is stored about a response, as the HTTP cache's rules need it (the store keeps the same fields).
struct CacheEntryHead: Sendable, Hashable {
    /// The response's status code.
    var statusCode: Int
    /// The response headers as stored.
    var headers: HTTPHeaders
    /// When the request that fetched it was sent (RFC 9111 §4.2.3 request_time).
    var requestTime: Date
    /// When its head arrived (RFC 9111 §4.2.3 response_time).
    var responseTime: Date
    /// Lower-cased name → value of the request fields named by `Vary` (an absent field is `""`);
    /// `nil` when the response has no `Vary`.
    var varyingRequestHeaders: [String: String]?
    /// Whether the request carried `Authorization`.
    var requestHadAuthorization: Bool
}
