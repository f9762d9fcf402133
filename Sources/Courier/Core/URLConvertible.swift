import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value that can become a URL: `String`, `URL` or `URLComponents`.
public protocol URLConvertible: Sendable {
    /// The URL, or a `CourierError` of kind `.invalidURL`.
    func asURL() throws -> URL
}

extension String: URLConvertible {
    /// Parses the string as a URL; relative strings are resolved later against the session's base URL.
    public func asURL() throws -> URL {
        guard !isEmpty, let url = URL(string: self) else {
            throw CourierError(.invalidURL, "\"\(self)\" is not a valid URL.")
        }
        return url
    }
}

extension URL: URLConvertible {
    /// The URL itself.
    public func asURL() throws -> URL { self }
}

extension URLComponents: URLConvertible {
    /// The components' URL.
    public func asURL() throws -> URL {
        guard let url else { throw CourierError(.invalidURL, "URL components \(self) do not form a valid URL.") }
        return url
    }
}

/// A value that can become a `URLRequest`, such as a router enum of your API's endpoints.
public protocol URLRequestConvertible: Sendable {
    /// The request, or a `CourierError`.
    func asURLRequest() throws -> URLRequest
}

extension URLRequest: URLRequestConvertible {
    /// The request itself.
    public func asURLRequest() throws -> URLRequest { self }
}

extension URLRequest {
    /// The request's method as an ``HTTPMethod`` (`GET` when unset).
    public var method: HTTPMethod {
        get { httpMethod.map(HTTPMethod.init(rawValue:)) ?? .get }
        // Foundation normalises every method it is given (NSString compares on Linux); GET is the default already.
        set { if newValue.rawValue != (httpMethod ?? "GET") { httpMethod = newValue.rawValue } }
    }

    /// The request's headers as ``HTTPHeaders``.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }

    /// Creates a request from Courier's types.
    public init(url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders? = nil) throws {
        self.init(url: try url.asURL())
        self.method = method
        if let headers { self.headers = headers }
    }
}

extension URL {
    /// Resolves `string` against this base the way API clients expect: a base path is treated as a
    /// directory even without a trailing slash, and an absolute URL string is used as it is.
    func resolving(_ relative: URL) -> URL? {
        if relative.scheme != nil { return relative }
        var base = self
        if !base.path.isEmpty, !base.absoluteString.hasSuffix("/"), !relative.relativeString.hasPrefix("/") {
            base = URL(string: base.absoluteString + "/") ?? base
        }
        return URL(string: relative.relativeString, relativeTo: base)?.absoluteURL
    }

    /// The base path (`/v2`) that resolving `relative` against this base drops, because
    /// `relative` is a path starting with `/` (not `//`); nil when nothing is dropped.
    func droppedBasePath(resolving relative: URL) -> String? {
        guard relative.scheme == nil, relative.host == nil else { return nil }
        let string = relative.relativeString
        guard string.hasPrefix("/"), !string.hasPrefix("//") else { return nil }
        let basePath = path
        guard !basePath.isEmpty, basePath != "/" else { return nil }
        return basePath
    }

    /// Whether this is an absolute http(s) URL with a host.
    var isHTTP: Bool {
        guard let scheme, scheme.caseInsensitiveEquals("http") || scheme.caseInsensitiveEquals("https") else { return false }
        // Percent-encoded: only emptiness matters, and decoding the host costs more than the rest of this check.
        return host(percentEncoded: true)?.isEmpty == false
    }

    /// Scheme, host and port, for same-origin checks.
    var origin: String {
        let scheme = (scheme ?? "").lowercased()
        let defaultPort = scheme == "https" ? 443 : 80
        return "\(scheme)://\((host ?? "").lowercased()):\(port ?? defaultPort)"
    }
}

extension URL {
    /// The URL as a key for deduplication and caching: lower-cased scheme and host, no default
    /// port, `/` for an empty path, no fragment, and, when `sortingQuery`, query parameters sorted by
    /// name (repeated names keep their order).
    func normalisedKey(sortingQuery: Bool) -> String {
        if FastPaths.isOn(.bytes), let key = alreadyNormalised(sortingQuery: sortingQuery) { return key }
        return normalisedKeyThroughComponents(sortingQuery: sortingQuery)
    }

    /// ``normalisedKey(sortingQuery:)`` without its speed trick.
    func normalisedKeyThroughComponents(sortingQuery: Bool) -> String {
        guard var components = URLComponents(url: self, resolvingAgainstBaseURL: true) else { return absoluteString }
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        if (components.scheme == "http" && components.port == 80) || (components.scheme == "https" && components.port == 443) {
            components.port = nil
        }
        if components.percentEncodedPath.isEmpty { components.percentEncodedPath = "/" }
        components.fragment = nil
        if sortingQuery, let query = components.percentEncodedQuery {
            func name(of piece: String) -> Substring {
                piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first ?? Substring(piece)
            }
            let pieces = query.split(separator: "&", omittingEmptySubsequences: true).map(String.init)
            let sorted = pieces.enumerated().sorted { lhs, rhs in
                let (left, right) = (name(of: lhs.element), name(of: rhs.element))
                return left != right ? left < right : lhs.offset < rhs.offset
            }
            components.percentEncodedQuery = sorted.isEmpty ? nil : sorted.map(\.element).joined(separator: "&")
        }
        return components.string ?? absoluteString
    }

    /// A speed trick (``FastPaths``): ``absoluteString`` when normalising would leave it as it is,
    /// read byte by byte instead of through `URLComponents`; `nil` when it might not (then the
    /// general path decides). It accepts `http` or `https` in lower case, a host of lower-case
    /// letters, digits, `-` and `.`, a port other than the scheme's default written without a
    /// leading zero, a path that starts with `/`, no fragment, no query when the query would be
    /// sorted, and in path and query only characters that `URLComponents` writes as they are.
    func alreadyNormalised(sortingQuery: Bool) -> String? {
        var string = absoluteString
        let normal = string.withUTF8 { bytes -> Bool in
            let isHTTPS = bytes.starts(with: Self.httpsPrefix)
            guard isHTTPS || bytes.starts(with: Self.httpPrefix) else { return false }
            var index = isHTTPS ? Self.httpsPrefix.count : Self.httpPrefix.count
            let hostStart = index
            while index < bytes.count, Self.isLowerHostByte(bytes[index]) { index += 1 }
            guard index > hostStart else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: ":") {
                index += 1
                let portStart = index
                var port = 0
                while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9"), index - portStart < 5 {
                    port = port * 10 + Int(bytes[index] - UInt8(ascii: "0"))
                    index += 1
                }
                guard index > portStart, bytes[portStart] != UInt8(ascii: "0"), port != (isHTTPS ? 443 : 80) else { return false }
            }
            guard index < bytes.count, bytes[index] == UInt8(ascii: "/") else { return false }
            for byte in bytes[index...] {
                if byte == UInt8(ascii: "?"), sortingQuery { return false }
                guard Self.isPlainPathOrQueryByte(byte) else { return false }
            }
            return true
        }
        return normal ? string : nil
    }

    private static let httpPrefix: [UInt8] = Array("http://".utf8)
    private static let httpsPrefix: [UInt8] = Array("https://".utf8)

    private static func isLowerHostByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }

    /// RFC 3986's unreserved characters, sub-delimiters, `:`, `@`, `/`, `?` and `%` (`#` is not one).
    private static func isPlainPathOrQueryByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="):
            true
        case UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "%"): true
        default: false
        }
    }
}
