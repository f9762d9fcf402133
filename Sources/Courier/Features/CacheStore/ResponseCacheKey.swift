import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What identifies a cached response: method, URL with sorted query parameters, the request
/// headers that change a response, and a digest of the body.
///
/// The key is computed from the request as Courier built it (session headers merged, parameters
/// encoded) before adapters run, so a token an adapter adds does not split the cache. Two requests
/// that differ only in the order of their query parameters share a key; parameters with the same
/// name keep their relative order, because `ids=1&ids=2` and `ids=2&ids=1` may mean different
/// things. Scheme and host are lower-cased, a default port is dropped and a fragment ignored.
///
/// Only the headers in ``varyingHeaders`` take part (the equivalent of a fixed `Vary` list);
/// `Authorization` and `Cookie` are hashed with SHA-256, so a key (which the disk store writes to
/// its files) never holds a credential in clear. The raw value is stable across processes and
/// platforms: the disk store names its files after a hash of it.
public struct ResponseCacheKey: Sendable, Hashable, CustomStringConvertible {
    /// The request headers that change a response and so are part of the key (lower-cased).
    public static let varyingHeaders: [String] = [
        "accept", "accept-charset", "accept-encoding", "accept-language",
        "authorization", "cookie",
    ]
    /// Headers whose values take part only as a SHA-256 digest.
    static let hashedHeaders: Set<String> = ["authorization", "cookie"]

    /// A stable, readable form of the key (method and URL on the first line, then one line per
    /// header, then the body digest); credentials appear only as digests.
    public let rawValue: String

    /// The key of `request`.
    public init(_ request: URLRequest) {
        var lines = ["\(request.method.rawValue) \(Self.normalisedURL(request.url))"]
        let fields = request.allHTTPHeaderFields ?? [:]
        var byName: [String: String] = [:]
        for (name, value) in fields { byName[name.lowercased()] = value.trimmingCharacters(in: .whitespaces) }
        for name in Self.varyingHeaders {
            guard let value = byName[name] else { continue }
            lines.append(Self.hashedHeaders.contains(name) ? "\(name): sha256:\(Self.digest(value))" : "\(name): \(value)")
        }
        if let body = request.httpBody, !body.isEmpty {
            lines.append("body: sha256:\(SHA256.hash(body).hexString)")
        }
        rawValue = lines.joined(separator: "\n")
    }

    /// A key with this raw value (the HTTP cache's keys, ``CacheStore/httpKey(for:)``).
    init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// Same as ``rawValue``.
    public var description: String { rawValue }

    /// The name the disk store gives this key's file: a SHA-256 of ``rawValue`` in hex.
    var fileName: String { Self.digest(rawValue) }

    private static func digest(_ text: String) -> String {
        SHA256.hash(Data(text.utf8)).hexString
    }

    /// The URL as a key: see ``Foundation/URL/normalisedKey(sortingQuery:)``; query parameters sorted.
    static func normalisedURL(_ url: URL?) -> String {
        url?.normalisedKey(sortingQuery: true) ?? ""
    }
}
