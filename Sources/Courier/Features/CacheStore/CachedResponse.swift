import Foundation

/// A stored response: status, headers, body, when it was stored and with which version.
public struct CachedResponse: Sendable, Hashable {
    /// The status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: HTTPHeaders
    /// The body.
    public var data: Data
    /// When it was stored.
    public var storedAt: Date
    /// The version it was stored with, if any.
    public var version: Int?

    /// Creates a stored response.
    public init(statusCode: Int, headers: HTTPHeaders, data: Data, storedAt: Date, version: Int?) {
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.storedAt = storedAt
        self.version = version
    }
}
