import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Rewrites the path of every request it adapts: add a version prefix, move an API, map old
/// routes to new ones.
///
/// ```swift
/// let api = Session(baseURL: host, interceptor: PathRewriteAdapter.prefix("/api/v2"))   // /users → /api/v2/users
/// api.request("legacy/feed", interceptor: PathRewriteAdapter.replacingPrefix("/legacy/", with: "/v3/"))
/// PathRewriteAdapter { path in path.lowercased() }                                      // any rule
/// ```
/// The rule sees and returns the percent-encoded path (always starting with `/`), so escaped
/// characters survive untouched; scheme, host, query and fragment are kept. The rewrite starts
/// from the request Courier built on every attempt, so retries never apply it twice.
public struct PathRewriteAdapter: RequestInterceptor {
    private let rewrite: @Sendable (String) -> String

    /// Rewrites each request's percent-encoded path with `rewrite`.
    public init(_ rewrite: @escaping @Sendable (String) -> String) {
        self.rewrite = rewrite
    }

    /// Puts `prefix` in front of every path (`"/api/v2"` turns `/users` into `/api/v2/users`);
    /// a path that already starts with it is left alone.
    public static func prefix(_ prefix: String) -> PathRewriteAdapter {
        let trimmed = "/" + prefix.split(separator: "/", omittingEmptySubsequences: true).joined(separator: "/")
        return PathRewriteAdapter { path in
            guard trimmed != "/" else { return path }
            if path == trimmed || path.hasPrefix(trimmed + "/") { return path }
            return trimmed + (path.hasPrefix("/") ? path : "/" + path)
        }
    }

    /// Replaces a leading `old` with `new` (`"/v1/"` → `"/v2/"`); other paths are left alone.
    public static func replacingPrefix(_ old: String, with new: String) -> PathRewriteAdapter {
        PathRewriteAdapter { path in
            guard path.hasPrefix(old) else { return path }
            return new + path.dropFirst(old.count)
        }
    }

    /// The request with its path rewritten.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return request
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let rewritten = rewrite(path)
        guard rewritten != path else { return request }
        let absolute = rewritten.hasPrefix("/") ? rewritten : "/" + rewritten
        guard Self.isValidEncodedPath(absolute) else {
            throw CourierError(.invalidURL, "The rewritten path \"\(rewritten)\" has characters that must be percent-encoded.", url: url)
        }
        components.percentEncodedPath = absolute
        guard let adaptedURL = components.url else {
            throw CourierError(.invalidURL, "Rewriting the path of \(url.absoluteString) did not form a valid URL.", url: url)
        }
        var adapted = request
        adapted.url = adaptedURL
        return adapted
    }

    /// Whether `path` has only RFC 3986 `pchar`s and `/`, with every `%` starting a valid escape
    /// (`URLComponents` traps on anything else on Apple platforms).
    static func isValidEncodedPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else { return false }
                index += 3
                continue
            }
            guard isUnreserved(byte) || "!$&'()*+,;=:@/".utf8.contains(byte) else { return false }
            index += 1
        }
        return true
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"):
            return true
        default:
            return false
        }
    }
}
