import Foundation

/// What is stored about a response, as the HTTP cache's rules need it (the store keeps the same
/// fields next to the body).
struct CacheEntryHead: Sendable, Hashable {
    /// The stored response's status code (a `304` never replaces it).
    var statusCode: Int
    /// The response's header fields as stored.
    var headers: HTTPHeaders
    /// When the request that fetched (or last revalidated) the response was sent: RFC 9111 §4.2.3's `request_time`.
    var requestTime: Date
    /// When that response's head arrived: §4.2.3's `response_time`.
    var responseTime: Date
    /// The request fields named by the response's `Vary`, lower-cased name → normalised value
    /// (`""` for a field the request did not have); `nil` when the response has no `Vary`.
    /// See ``HTTPCacheRules/varyingRequestHeaders(requestHeaders:responseHeaders:)``.
    var varyingRequestHeaders: [String: String]?
    /// Whether the request that fetched it carried `Authorization` (RFC 9111 §3.5).
    var requestHadAuthorization: Bool

    /// Creates a head.
    init(
        statusCode: Int, headers: HTTPHeaders, requestTime: Date, responseTime: Date,
        varyingRequestHeaders: [String: String]? = nil, requestHadAuthorization: Bool = false
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.varyingRequestHeaders = varyingRequestHeaders
        self.requestHadAuthorization = requestHadAuthorization
    }

    /// The content coding `headers` name (`Content-Encoding`), unless none or `identity`. A stored
    /// response keeps the field only when its body is still in that coding.
    static func contentCoding(of headers: HTTPHeaders) -> String? {
        guard let coding = headers["Content-Encoding"], !coding.trimmedASCII.isEmpty, !coding.trimmedASCII.caseInsensitiveEquals("identity")
        else { return nil }
        return coding
    }
}
