import Foundation

/// Cache-Control directives (RFC 9111 §5.2, and RFC 5861's `stale-while-revalidate` and
/// `stale-if-error`), parsed from a request's or a response's field value.
///
/// Courier joins repeated `Cache-Control` fields with `", "`, so one value holds them all.
/// Parsing never fails: unknown directives and malformed list members are skipped. Values:
/// - delta-seconds (§1.2.2) are non-negative decimal integers, plain or quoted (`max-age="5"`);
///   a value beyond 2³¹ (however many digits) becomes 2³¹ (``maximumDeltaSeconds``).
/// - an invalid or missing `max-age` / `s-maxage` argument (`max-age=-1`, `max-age=soon`) is 0:
///   §4.2.1 encourages treating invalid freshness information as stale; an invalid `max-stale`,
///   `min-fresh`, `stale-while-revalidate` or `stale-if-error` argument is ignored.
/// - a directive given twice keeps the more conservative value (§4.2.1 allows "the first
///   occurrence, or stale"): conflicting `max-age` or `s-maxage` values give 0 (stale);
///   `max-stale`, `stale-while-revalidate` and `stale-if-error` keep the smallest; `min-fresh` the largest.
/// - `no-cache="field"` and `private="field"` (the qualified forms) are treated as unqualified,
///   which is what §5.2.2.4 and §5.2.2.7 allow a cache that does not strip fields to do.
///
/// ```swift
/// let directives = CacheControl("max-age=60, must-revalidate")
/// // directives.maxAge == 60, directives.mustRevalidate == true
/// ```
struct CacheControl: Sendable, Hashable {
    /// The value a delta-seconds too large to represent becomes (RFC 9111 §1.2.2).
    static let maximumDeltaSeconds = 2_147_483_648

    /// `max-age=N` (request §5.2.1.1, response §5.2.2.1), in seconds.
    var maxAge: Int?
    /// `s-maxage=N` (response §5.2.2.10), in seconds; only a shared cache uses it.
    var sharedMaxAge: Int?
    /// `max-stale[=N]` (request §5.2.1.2); a bare `max-stale` (any staleness) is `Int.max`.
    var maxStale: Int?
    /// `min-fresh=N` (request §5.2.1.3), in seconds.
    var minFresh: Int?
    /// `no-cache` (request §5.2.1.4, response §5.2.2.4), qualified or not.
    var noCache = false
    /// `no-store` (request §5.2.1.5, response §5.2.2.5).
    var noStore = false
    /// `no-transform` (§5.2.1.6, §5.2.2.6).
    var noTransform = false
    /// `only-if-cached` (request §5.2.1.7).
    var onlyIfCached = false
    /// `must-revalidate` (response §5.2.2.2).
    var mustRevalidate = false
    /// `proxy-revalidate` (response §5.2.2.8); a shared cache treats it as `must-revalidate`.
    var proxyRevalidate = false
    /// `must-understand` (response §5.2.2.3).
    var mustUnderstand = false
    /// `public` (response §5.2.2.9).
    var isPublic = false
    /// `private` (response §5.2.2.7), qualified or not.
    var isPrivate = false
    /// `immutable` (RFC 8246): the response will not change while it is fresh.
    var immutable = false
    /// `stale-while-revalidate=N` (RFC 5861 §3), in seconds.
    var staleWhileRevalidate: Int?
    /// `stale-if-error=N` (RFC 5861 §4, request or response), in seconds.
    var staleIfError: Int?

    /// No directives.
    init() {}

    /// Parses a `Cache-Control` field value; `nil` (no field) gives no directives.
    init(_ fieldValue: String?) {
        guard let fieldValue, !fieldValue.isEmpty else { return }
        var bytes = Array(fieldValue.utf8)[...]
        while let (name, argument) = Self.nextDirective(&bytes) {
            apply(name: name, argument: argument)
        }
    }

    /// Whether any directive is set.
    var isEmpty: Bool { self == CacheControl() }

    // MARK: - Parsing

    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// Reads the next `name[=argument]` list member from `bytes` (consuming it and its comma);
    /// `nil` at the end. The name is lower-cased; an argument is unquoted (with `\` escapes
    /// resolved) or trimmed. Commas inside a quoted argument do not end the member.
    private static func nextDirective(_ bytes: inout ArraySlice<UInt8>) -> (name: String, argument: String?)? {
        while true {
            while let first = bytes.first, first == comma || isBlank(first) { bytes.removeFirst() }
            guard !bytes.isEmpty else { return nil }
            let nameEnd = bytes.firstIndex { $0 == comma || $0 == equals } ?? bytes.endIndex
            var name = bytes[bytes.startIndex..<nameEnd]
            while let last = name.last, isBlank(last) { name.removeLast() }
            bytes = bytes[nameEnd...]
            var argument: String?
            if bytes.first == equals {
                bytes.removeFirst()
                while let first = bytes.first, isBlank(first) { bytes.removeFirst() }
                if bytes.first == quote {
                    bytes.removeFirst()
                    var value: [UInt8] = []
                    while let byte = bytes.popFirst(), byte != quote {
                        if byte == backslash, let escaped = bytes.popFirst() {
                            value.append(escaped)
                        } else {
                            value.append(byte)
                        }
                    }
                    argument = String(decoding: value, as: UTF8.self)
                    // Anything between the closing quote and the next comma is malformed; skip it.
                    bytes = bytes[(bytes.firstIndex(of: comma) ?? bytes.endIndex)...]
                } else {
                    let end = bytes.firstIndex(of: comma) ?? bytes.endIndex
                    var token = bytes[bytes.startIndex..<end]
                    while let last = token.last, isBlank(last) { token.removeLast() }
                    argument = String(decoding: token, as: UTF8.self)
                    bytes = bytes[end...]
                }
            }
            // Every known directive name is short; a long one is an unknown extension, skipped
            // without building a lower-cased copy of it.
            guard !name.isEmpty, name.count <= 32 else { continue }
            return (String(decoding: name, as: UTF8.self).lowercased(), argument)
        }
    }

    private mutating func apply(name: String, argument: String?) {
        switch name {
        case "max-age":
            maxAge = Self.conflictingIsStale(maxAge, Self.deltaSeconds(argument) ?? 0)
        case "s-maxage":
            sharedMaxAge = Self.conflictingIsStale(sharedMaxAge, Self.deltaSeconds(argument) ?? 0)
        case "max-stale":
            // A bare max-stale accepts any staleness; a malformed argument grants nothing.
            let value = argument == nil ? Int.max : Self.deltaSeconds(argument)
            if let value { maxStale = min(maxStale ?? .max, value) }
        case "min-fresh":
            if let value = Self.deltaSeconds(argument) { minFresh = max(minFresh ?? 0, value) }
        case "stale-while-revalidate":
            if let value = Self.deltaSeconds(argument) { staleWhileRevalidate = min(staleWhileRevalidate ?? .max, value) }
        case "stale-if-error":
            if let value = Self.deltaSeconds(argument) { staleIfError = min(staleIfError ?? .max, value) }
        case "no-cache": noCache = true
        case "no-store": noStore = true
        case "no-transform": noTransform = true
        case "only-if-cached": onlyIfCached = true
        case "must-revalidate": mustRevalidate = true
        case "proxy-revalidate": proxyRevalidate = true
        case "must-understand": mustUnderstand = true
        case "public": isPublic = true
        case "private": isPrivate = true
        case "immutable": immutable = true
        default: break
        }
    }

    /// A second, different value of a freshness directive makes the response stale (§4.2.1).
    private static func conflictingIsStale(_ existing: Int?, _ new: Int) -> Int {
        guard let existing else { return new }
        return existing == new ? existing : 0
    }

    /// Parses delta-seconds (RFC 9111 §1.2.2): one or more ASCII digits, nothing else; values
    /// beyond ``maximumDeltaSeconds`` (of any length) become it. `nil` when absent or malformed.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text else { return nil }
        return deltaSeconds(text.utf8[...])
    }

    /// ``deltaSeconds(_:)`` over UTF-8 bytes.
    static func deltaSeconds(_ bytes: Substring.UTF8View) -> Int? {
        guard !bytes.isEmpty else { return nil }
        var value = 0
        for byte in bytes {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            // Saturate without overflowing, however many digits follow.
            if value < maximumDeltaSeconds {
                value = min(value * 10 + Int(byte - 0x30), maximumDeltaSeconds)
            }
        }
        return value
    }
}
