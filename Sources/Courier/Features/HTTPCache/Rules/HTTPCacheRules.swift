import CourierSupport
import Foundation

/// The rules of an HTTP cache (RFC 9111, with RFC 5861's `stale-while-revalidate` and
/// `stale-if-error`), as pure functions: no I/O, and no clock of their own (the caller passes
/// `now`, and the times stored in a ``CacheEntryHead``).
///
/// Split by topic: storability and `Vary` (§3, §4.1) in `+Storability`, age and freshness
/// (§4.2) in `+Freshness`, the decision for a request (§4, §5.2.1) in `+Decision`, validation
/// and freshening (§4.3) in `+Validation`, invalidation (§4.4) in `+Invalidation`.
///
/// All arithmetic saturates: header values of any size (`max-age=99999999999999999999`, an `Age`
/// of a thousand digits, dates far in the past or future) never overflow or trap.
///
/// ```swift
/// let rules = HTTPCacheRules(isShared: false)
/// switch rules.decide(method: .get, requestHeaders: [:], policy: .useProtocolPolicy, entry: stored, now: Date()) {
/// case .serve(let source, let age, _): …
/// case .revalidate(let conditionalHeaders): …
/// case .fetch, .unsatisfiable: …
/// }
/// ```
struct HTTPCacheRules: Sendable {
    /// Whether this is a shared cache (``HTTPCacheMode/shared``): `private` responses are not
    /// stored, `s-maxage` and `proxy-revalidate` apply, `Authorization` limits storing (§3.5).
    var isShared: Bool

    /// Rules for a private (`isShared: false`) or shared cache.
    init(isShared: Bool = false) {
        self.isShared = isShared
    }

    /// Rules for a session's ``HTTPCacheMode`` (`.shared` is shared; the others private).
    init(mode: HTTPCacheMode) {
        self.init(isShared: mode == .shared)
    }

    /// Status codes RFC 9110 §15.1 defines as heuristically cacheable (a `206` is stored only as
    /// ``refusalToStorePartial(requestHeaders:responseHeaders:)`` allows).
    static let heuristicallyCacheableStatusCodes: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Status codes whose caching requirements Courier understands, for `must-understand`
    /// (§5.2.2.3): the heuristically cacheable ones and the redirects whose storing is plain.
    static let understoodStatusCodes: Set<Int> = heuristicallyCacheableStatusCodes.union([302, 303, 307])

    /// The content coding `headers` name: see ``CacheEntryHead/contentCoding(of:)``.
    static func contentCoding(of headers: HTTPHeaders) -> String? {
        CacheEntryHead.contentCoding(of: headers)
    }

    /// The directives of a response's `Cache-Control`.
    func responseDirectives(_ headers: HTTPHeaders) -> CacheControl {
        CacheControl(headers["Cache-Control"])
    }

    /// The directives of a request's `Cache-Control`; without one, `Pragma: no-cache` counts as
    /// `no-cache` (§5.4).
    func requestDirectives(_ headers: HTTPHeaders) -> CacheControl {
        if let value = headers["Cache-Control"] { return CacheControl(value) }
        var directives = CacheControl()
        if let pragma = headers["Pragma"], CacheControl(pragma).noCache { directives.noCache = true }
        return directives
    }

    /// Whether the response forbids serving it stale (§4.2.4): `must-revalidate`, `no-cache`,
    /// and in a shared cache `proxy-revalidate` or `s-maxage` (§5.2.2.8, §5.2.2.10).
    func forbidsStale(_ response: CacheControl) -> Bool {
        response.mustRevalidate || response.noCache || (isShared && (response.proxyRevalidate || response.sharedMaxAge != nil))
    }

    /// Whether a shared cache may reuse a response to a request with `Authorization` (§3.5).
    static func allowsSharedAuthorized(_ response: CacheControl) -> Bool {
        response.isPublic || response.mustRevalidate || response.sharedMaxAge != nil
    }
}

// MARK: - Saturating time arithmetic

extension HTTPCacheRules {
    /// The largest number of seconds a time interval is turned into (about 285 million years):
    /// far beyond any real age or lifetime, far below where sums of a few of them overflow.
    static let maximumSeconds = 1 << 53

    /// Whole seconds of `interval`, rounded down and clamped to ±``maximumSeconds`` (NaN is 0).
    static func wholeSeconds(_ interval: TimeInterval) -> Int {
        guard interval.isFinite else { return interval.isNaN ? 0 : (interval > 0 ? maximumSeconds : -maximumSeconds) }
        let clamped = min(max(interval.rounded(.down), -Double(maximumSeconds)), Double(maximumSeconds))
        return Int(clamped)
    }

    /// `a + b`, saturating at `Int.min` / `Int.max`.
    static func adding(_ a: Int, _ b: Int) -> Int {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// `a - b`, saturating at `Int.min` / `Int.max`.
    static func subtracting(_ a: Int, _ b: Int) -> Int {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b > 0 ? .min : .max) : difference
    }

    /// An HTTP-date field of `headers`, parsed (two-digit years relative to `reference`); `nil`
    /// when absent or invalid.
    static func date(_ name: String, in headers: HTTPHeaders, reference: Date) -> Date? {
        headers[name].flatMap { HTTPDate.parse(String($0.trimmedASCII), now: reference) }
    }
}
