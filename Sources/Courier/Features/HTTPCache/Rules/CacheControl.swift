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
        guard var fieldValue, !fieldValue.isEmpty else { return }
        fieldValue.withUTF8 { parse($0) }
    }

    /// Whether any directive is set.
    var isEmpty: Bool { self == CacheControl() }

    // MARK: - Parsing

    private enum Directive {
        case maxAge, sharedMaxAge, maxStale, minFresh, staleWhileRevalidate, staleIfError
        case noCache, noStore, noTransform, onlyIfCached, mustRevalidate, proxyRevalidate, mustUnderstand
        case isPublic, isPrivate, immutable
    }

    private static let directives: [(name: [UInt8], directive: Directive)] = {
        let table: [(String, Directive)] = [
            ("max-age", .maxAge), ("s-maxage", .sharedMaxAge), ("max-stale", .maxStale), ("min-fresh", .minFresh),
            ("stale-while-revalidate", .staleWhileRevalidate), ("stale-if-error", .staleIfError), ("no-cache", .noCache),
            ("no-store", .noStore), ("no-transform", .noTransform), ("only-if-cached", .onlyIfCached),
            ("must-revalidate", .mustRevalidate), ("proxy-revalidate", .proxyRevalidate), ("must-understand", .mustUnderstand),
            ("public", .isPublic), ("private", .isPrivate), ("immutable", .immutable),
        ]
        return table.map { (Array($0.0.utf8), $0.1) }
    }()

    private static let comma = UInt8(ascii: ",")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    private static func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

    /// One pass over the bytes, without allocating: each list member is `name[=argument]`, the
    /// argument a token or a quoted string (commas inside quotes do not end the member; anything
    /// between a closing quote and the next comma is skipped).
    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>) {
        let count = bytes.count
        var index = 0
        while index < count {
            while index < count, bytes[index] == Self.comma || Self.isBlank(bytes[index]) { index += 1 }
            guard index < count else { return }
            let nameStart = index
            while index < count, bytes[index] != Self.comma, bytes[index] != Self.equals { index += 1 }
            var nameEnd = index
            while nameEnd > nameStart, Self.isBlank(bytes[nameEnd - 1]) { nameEnd -= 1 }
            // The argument's bytes (inside the quotes when quoted); `nil` when there is no `=`.
            var argument: Range<Int>?
            var argumentIsValid = true
            if index < count, bytes[index] == Self.equals {
                index += 1
                while index < count, Self.isBlank(bytes[index]) { index += 1 }
                if index < count, bytes[index] == Self.quote {
                    index += 1
                    let start = index
                    while index < count, bytes[index] != Self.quote {
                        // An escaped character is never a digit's plain form: the argument is not delta-seconds.
                        if bytes[index] == Self.backslash { argumentIsValid = false; index += 1 }
                        index += 1
                    }
                    argument = start..<min(index, count)
                    while index < count, bytes[index] != Self.comma { index += 1 }
                } else {
                    let start = index
                    while index < count, bytes[index] != Self.comma { index += 1 }
                    var end = index
                    while end > start, Self.isBlank(bytes[end - 1]) { end -= 1 }
                    argument = start..<end
                }
            }
            guard let directive = Self.directive(named: UnsafeBufferPointer(rebasing: bytes[nameStart..<nameEnd])) else { continue }
            let seconds = argument.flatMap { argumentIsValid ? Self.deltaSeconds(UnsafeBufferPointer(rebasing: bytes[$0])) : nil }
            apply(directive, hasArgument: argument != nil, seconds: seconds)
        }
    }

    /// The known directive `name` spells, compared ASCII case-insensitively.
    private static func directive(named name: UnsafeBufferPointer<UInt8>) -> Directive? {
        candidates: for (known, directive) in directives where known.count == name.count {
            for (offset, byte) in name.enumerated() {
                let lower = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                if lower != known[offset] { continue candidates }
            }
            return directive
        }
        return nil
    }

    private mutating func apply(_ directive: Directive, hasArgument: Bool, seconds: Int?) {
        switch directive {
        case .maxAge:
            maxAge = Self.conflictingIsStale(maxAge, seconds ?? 0)
        case .sharedMaxAge:
            sharedMaxAge = Self.conflictingIsStale(sharedMaxAge, seconds ?? 0)
        case .maxStale:
            // A bare max-stale accepts any staleness; a malformed argument grants nothing.
            if let value = hasArgument ? seconds : Int.max { maxStale = min(maxStale ?? .max, value) }
        case .minFresh:
            if let seconds { minFresh = max(minFresh ?? 0, seconds) }
        case .staleWhileRevalidate:
            if let seconds { staleWhileRevalidate = min(staleWhileRevalidate ?? .max, seconds) }
        case .staleIfError:
            if let seconds { staleIfError = min(staleIfError ?? .max, seconds) }
        case .noCache: noCache = true
        case .noStore: noStore = true
        case .noTransform: noTransform = true
        case .onlyIfCached: onlyIfCached = true
        case .mustRevalidate: mustRevalidate = true
        case .proxyRevalidate: proxyRevalidate = true
        case .mustUnderstand: mustUnderstand = true
        case .isPublic: isPublic = true
        case .isPrivate: isPrivate = true
        case .immutable: immutable = true
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
        return deltaSeconds(text.utf8)
    }

    /// ``deltaSeconds(_:)`` over UTF-8 bytes.
    static func deltaSeconds(_ bytes: some Collection<UInt8>) -> Int? {
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
