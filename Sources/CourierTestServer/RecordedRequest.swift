import Foundation

/// A request as the server received it, recorded even when it could not be parsed.
public struct RecordedRequest: Sendable, CustomStringConvertible {
    /// The method, e.g. `GET` (empty if the request line could not be parsed).
    public let method: String
    /// The raw request-target from the request line, e.g. `/search?q=a%20b`.
    public let target: String
    /// The path part of the target, still percent-encoded, e.g. `/search`.
    public let path: String
    /// The query parameters, percent-decoded (`+` is kept literally); the last value wins for a
    /// repeated name.
    public let query: [String: String]
    /// The query parameters in order, percent-decoded, repeated names kept.
    public let queryItems: [(name: String, value: String)]
    /// The protocol version from the request line, e.g. `HTTP/1.1`.
    public let version: String
    /// The header fields in order, with case-insensitive lookup.
    public let headers: RecordedHeaders
    /// The body (after removing chunked framing), cut off at the configured recording limit.
    public let body: Data
    /// The full length of the body, even when ``body`` was cut off.
    public let bodySize: Int64
    /// The size of each data chunk of a chunked body, in order (the final zero-size chunk is not
    /// included); nil unless the body was chunked.
    public let chunkSizes: [Int]?
    /// Trailer fields sent after a chunked body.
    public let trailers: RecordedHeaders
    /// Which connection carried the request: 0 for the server's first accepted connection.
    public let connectionIndex: Int
    /// Which request this was on its connection: 0 for the first.
    public let exchangeIndex: Int
    /// The request's position among all requests the server recorded: 0 for the first.
    public let sequenceNumber: Int
    /// Why the request could not be read or parsed; nil for a well-formed request.
    public let error: String?
    /// When the request had been read completely (or failed).
    public let receivedAt: ContinuousClock.Instant
    /// Whether the client went away before its response was complete (seen while the response
    /// was being written, held, delayed, throttled or stalled). A value taken with
    /// ``TestServer/takeRequest(timeout:)`` is a snapshot; ``TestServer/recordedRequests`` and
    /// ``TestServer/waitForClientDisconnect(path:count:timeout:)`` see later changes.
    public internal(set) var clientDisconnected: Bool = false

    init(
        head: RequestHead?, error: String?, body: Data = Data(), bodySize: Int64 = 0,
        chunkSizes: [Int]? = nil, trailers: RecordedHeaders = [:],
        connectionIndex: Int, exchangeIndex: Int, sequenceNumber: Int
    ) {
        let target = head?.target ?? ""
        let parts = RecordedRequest.split(target: target)
        self.method = head?.method ?? ""
        self.target = target
        self.path = parts.path
        self.queryItems = parts.query
        self.query = Dictionary(parts.query.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
        self.version = head?.version ?? ""
        self.headers = head?.headers ?? [:]
        self.body = body
        self.bodySize = bodySize
        self.chunkSizes = chunkSizes
        self.trailers = trailers
        self.connectionIndex = connectionIndex
        self.exchangeIndex = exchangeIndex
        self.sequenceNumber = sequenceNumber
        self.error = error
        self.receivedAt = .now
    }

    /// The request line, e.g. `GET /x HTTP/1.1`.
    public var requestLine: String {
        "\(method) \(target) \(version)"
    }

    /// The body decoded as UTF-8 (invalid sequences replaced).
    public var bodyText: String {
        String(decoding: body, as: UTF8.self)
    }

    /// The request line, plus the error if there was one.
    public var description: String {
        if let error { return "RecordedRequest(\(requestLine), error: \(error))" }
        return "RecordedRequest(\(requestLine), \(bodySize) body bytes, connection \(connectionIndex), exchange \(exchangeIndex))"
    }

    /// Splits a request-target into its path and decoded query items.
    static func split(target: String) -> (path: String, query: [(name: String, value: String)]) {
        var rest = Substring(target)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        if !rest.hasPrefix("/"), let schemeEnd = rest.range(of: "://"),
            rest[..<schemeEnd.lowerBound].allSatisfy({ $0.isLetter })
        {
            let authorityAndPath = rest[schemeEnd.upperBound...]
            if let slash = authorityAndPath.firstIndex(where: { $0 == "/" || $0 == "?" }) {
                let remainder = authorityAndPath[slash...]
                rest = remainder.hasPrefix("?") ? Substring("/" + remainder) : remainder
            } else {
                rest = "/"
            }
        }
        guard let mark = rest.firstIndex(of: "?") else { return (String(rest), []) }
        let path = String(rest[..<mark])
        let queryString = rest[rest.index(after: mark)...]
        let items: [(name: String, value: String)] = queryString.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let pieces = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0])
            let value = pieces.count > 1 ? String(pieces[1]) : ""
            return (name.removingPercentEncoding ?? name, value.removingPercentEncoding ?? value)
        }
        return (path, items)
    }
}
