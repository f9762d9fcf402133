import Foundation
import Testing
@testable import Courier

/// RFC 9111 (+ RFC 5861, RFC 8246) decisions: one row per rule, each naming its section. A row
/// gives the request (method, headers, policy), what is stored (or nothing), the time, and
/// whether the cache is shared; the expectation is the decision of `HTTPCacheRules.decide`.
@Suite struct HTTPCacheRulesTests {
    enum Expected: Sendable {
        case serve(ResponseSource, age: Int, background: Bool = false)
        case revalidate(HTTPHeaders)
        /// A fetch; with a reason, the decision's reason must contain it.
        case fetch(String? = nil)
        case unsatisfiable

        func matches(_ decision: CacheDecision) -> Bool {
            switch (self, decision) {
            case let (.serve(source, age, background), .serve(actualSource, actualAge, actualBackground)):
                return source == actualSource && age == actualAge && background == actualBackground
            case let (.revalidate(headers), .revalidate(actual)):
                return headers == actual
            case let (.fetch(reason), .fetch(actual)):
                return reason.map { actual.contains($0) } ?? true
            case (.unsatisfiable, .unsatisfiable):
                return true
            default:
                return false
            }
        }
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let note: String
        var method: HTTPMethod = .get
        var request: HTTPHeaders = [:]
        var policy: HTTPCachePolicy = .useProtocolPolicy
        var stored: StoredRow?
        var now: TimeInterval = 0
        var shared = false
        let expected: Expected
        var testDescription: String { note }
    }

    static let etag: HTTPHeaders = ["If-None-Match": "\"a\""]

    static let rows: [Row] = [
        // §4: what is stored
        Row(note: "§4 nothing stored: fetch", stored: nil, expected: .fetch("nothing stored")),
        Row(
            note: "§4.2 fresh (max-age=60, age 10): served from the cache",
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§4.2 stale (max-age=60, age 61) with an ETag: revalidate with If-None-Match",
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 61, expected: .revalidate(etag)),
        Row(
            note: "§4.2 lifetime equal to the age is stale (fresh needs lifetime > age)",
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 60, expected: .revalidate(etag)),
        Row(
            note: "§4.3.1 stale without validators: fetch",
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 100, expected: .fetch("stale without validators")),
        Row(
            note: "§4.3.1 both validators: If-None-Match and If-Modified-Since",
            stored: StoredRow(["Cache-Control": "max-age=0", "ETag": "W/\"b\"", "Last-Modified": RuleClock.date(-3600)]), now: 1,
            expected: .revalidate(["If-None-Match": "W/\"b\"", "If-Modified-Since": RuleClock.date(-3600)])),
        Row(
            note: "§4.3.1 only Last-Modified: If-Modified-Since with its value",
            stored: StoredRow(["Cache-Control": "max-age=0", "Last-Modified": RuleClock.date(-10)]), now: 1,
            expected: .revalidate(["If-Modified-Since": RuleClock.date(-10)])),
        Row(
            note: "§4.3.1 an invalid Last-Modified is no validator: fetch",
            stored: StoredRow(["Cache-Control": "max-age=0", "Last-Modified": "yesterday"]), now: 1, expected: .fetch()),
        Row(
            note: "§4.2.1 Expires in the future (Date + 100), age 50: fresh",
            stored: StoredRow(["Expires": RuleClock.date(100)]), now: 50, expected: .serve(.cache, age: 50)),
        Row(
            note: "§4.2.1 Expires in the past: stale",
            stored: StoredRow(["Expires": RuleClock.date(-100), "ETag": "\"a\""]), now: 0, expected: .revalidate(etag)),
        Row(
            note: "§5.3 Expires: 0 (invalid) means already expired",
            stored: StoredRow(["Expires": "0", "ETag": "\"a\""]), now: 0, expected: .revalidate(etag)),
        Row(
            note: "§4.2.2 heuristic: 10% of Date − Last-Modified (1000 s → 100 s), age 50: fresh",
            stored: StoredRow(["Last-Modified": RuleClock.date(-1000)]), now: 50, expected: .serve(.cache, age: 50)),
        Row(
            note: "§4.2.2 heuristic lifetime over (age 150 > 100): revalidate with If-Modified-Since",
            stored: StoredRow(["Last-Modified": RuleClock.date(-1000)]), now: 150,
            expected: .revalidate(["If-Modified-Since": RuleClock.date(-1000)])),
        Row(
            note: "§4.2.2 no heuristic for a status not heuristically cacheable (302 with Last-Modified only)",
            stored: StoredRow(status: 302, ["Last-Modified": RuleClock.date(-1000)]), now: 1,
            expected: .revalidate(["If-Modified-Since": RuleClock.date(-1000)])),
        Row(
            note: "§4.2.3 Age header counts (Age 50 + 5 resident = 55 < 60)",
            stored: StoredRow(["Cache-Control": "max-age=60", "Age": "50"]), now: 5, expected: .serve(.cache, age: 55)),
        Row(
            note: "§4.2.3 Age header makes it stale (Age 50 + 15 resident = 65 ≥ 60)",
            stored: StoredRow(["Cache-Control": "max-age=60", "Age": "50", "ETag": "\"a\""]), now: 15, expected: .revalidate(etag)),
        Row(
            note: "§4.2.3 a Date older than the response time (apparent age 30) adds to the age",
            stored: StoredRow(["Cache-Control": "max-age=60", "Date": RuleClock.date(-30)]), now: 10, expected: .serve(.cache, age: 40)),
        Row(
            note: "§4.2.3 no Date: the response time is date_value",
            stored: StoredRow(["Cache-Control": "max-age=60"], dated: false), now: 10, expected: .serve(.cache, age: 10)),

        // §5.2.2 response directives
        Row(
            note: "§5.2.2.4 response no-cache: revalidate even when fresh",
            stored: StoredRow(["Cache-Control": "no-cache, max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "§5.2.2.4 response no-cache without validators: fetch",
            stored: StoredRow(["Cache-Control": "no-cache"]), now: 1, expected: .fetch("no-cache")),
        Row(
            note: "§5.2.2.4 qualified no-cache=\"Set-Cookie\" is treated as no-cache",
            stored: StoredRow(["Cache-Control": "no-cache=\"Set-Cookie\", max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "§5.2.2.2 must-revalidate: stale is never served, not even with max-stale",
            request: ["Cache-Control": "max-stale=3600"],
            stored: StoredRow(["Cache-Control": "max-age=60, must-revalidate", "ETag": "\"a\""]), now: 70, expected: .revalidate(etag)),
        Row(
            note: "§5.2.2.2 must-revalidate while fresh: served",
            stored: StoredRow(["Cache-Control": "max-age=60, must-revalidate"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§5.2.2.8 proxy-revalidate does not bind a private cache: max-stale serves stale",
            request: ["Cache-Control": "max-stale=60"],
            stored: StoredRow(["Cache-Control": "max-age=60, proxy-revalidate"]), now: 70, expected: .serve(.staleCache(.maxStaleAllowed), age: 70)),
        Row(
            note: "§5.2.2.8 proxy-revalidate binds a shared cache like must-revalidate",
            request: ["Cache-Control": "max-stale=60"],
            stored: StoredRow(["Cache-Control": "max-age=60, proxy-revalidate", "ETag": "\"a\""]), now: 70, shared: true, expected: .revalidate(etag)),
        Row(
            note: "§5.2.2.10 s-maxage overrides max-age in a shared cache (100 > age 50)",
            stored: StoredRow(["Cache-Control": "max-age=10, s-maxage=100"]), now: 50, shared: true, expected: .serve(.cache, age: 50)),
        Row(
            note: "§5.2.2.10 s-maxage is ignored by a private cache (max-age=10 < age 50)",
            stored: StoredRow(["Cache-Control": "max-age=10, s-maxage=100", "ETag": "\"a\""]), now: 50, expected: .revalidate(etag)),
        Row(
            note: "§5.2.2.10 s-maxage implies proxy-revalidate in a shared cache: no max-stale",
            request: ["Cache-Control": "max-stale"],
            stored: StoredRow(["Cache-Control": "s-maxage=10", "ETag": "\"a\""]), now: 50, shared: true, expected: .revalidate(etag)),
        Row(
            note: "§3.5 shared cache: an entry stored for an Authorization request is not reused without public/s-maxage/must-revalidate",
            stored: StoredRow(["Cache-Control": "max-age=60"], authorized: true), now: 1, shared: true, expected: .fetch("Authorization")),
        Row(
            note: "§3.5 shared cache: public allows reusing an entry stored for an Authorization request",
            stored: StoredRow(["Cache-Control": "public, max-age=60"], authorized: true), now: 1, shared: true, expected: .serve(.cache, age: 1)),
        Row(
            note: "§3.5 private cache: an entry stored for an Authorization request is reused",
            stored: StoredRow(["Cache-Control": "max-age=60"], authorized: true), now: 1, expected: .serve(.cache, age: 1)),
        Row(
            note: "RFC 8246 immutable and fresh: served although the request says max-age=0 (reload)",
            request: ["Cache-Control": "max-age=0"],
            stored: StoredRow(["Cache-Control": "max-age=600, immutable", "ETag": "\"a\""]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "RFC 8246 immutable does not override request no-cache (forced reload)",
            request: ["Cache-Control": "no-cache"],
            stored: StoredRow(["Cache-Control": "max-age=600, immutable", "ETag": "\"a\""]), now: 10, expected: .revalidate(etag)),
        Row(
            note: "RFC 8246 immutable but stale: revalidate",
            stored: StoredRow(["Cache-Control": "max-age=60, immutable", "ETag": "\"a\""]), now: 61, expected: .revalidate(etag)),

        // RFC 5861 stale-while-revalidate
        Row(
            note: "RFC 5861 §3 stale-while-revalidate=30, stale by 10: serve stale, revalidate in the background",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30", "ETag": "\"a\""]), now: 70,
            expected: .serve(.staleCache(.staleWhileRevalidate), age: 70, background: true)),
        Row(
            note: "RFC 5861 §3 stale-while-revalidate window ends at 30 s stale (stale by exactly 30: served)",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30"]), now: 90,
            expected: .serve(.staleCache(.staleWhileRevalidate), age: 90, background: true)),
        Row(
            note: "RFC 5861 §3 stale beyond the stale-while-revalidate window: revalidate",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30", "ETag": "\"a\""]), now: 91, expected: .revalidate(etag)),
        Row(
            note: "RFC 5861 §3 stale-while-revalidate needs no validators (the refresh may be a plain GET)",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30"]), now: 61,
            expected: .serve(.staleCache(.staleWhileRevalidate), age: 61, background: true)),
        Row(
            note: "§4.2.1 + RFC 5861: must-revalidate is more restrictive than stale-while-revalidate",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30, must-revalidate", "ETag": "\"a\""]), now: 70,
            expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.1 + RFC 5861: a request max-age refuses stale-while-revalidate",
            request: ["Cache-Control": "max-age=600"],
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30", "ETag": "\"a\""]), now: 70, expected: .revalidate(etag)),
        Row(
            note: "RFC 5861 §3 stale-while-revalidate while fresh: plain hit, no background work",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-while-revalidate=30"]), now: 30, expected: .serve(.cache, age: 30)),

        // §5.2.1 request directives
        Row(
            note: "§5.2.1.4 request no-cache: revalidate a fresh entry",
            request: ["Cache-Control": "no-cache"],
            stored: StoredRow(["Cache-Control": "max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "§5.4 Pragma: no-cache without Cache-Control acts as no-cache",
            request: ["Pragma": "no-cache"],
            stored: StoredRow(["Cache-Control": "max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "§5.4 Pragma is ignored when the request has Cache-Control",
            request: ["Cache-Control": "max-stale=0", "Pragma": "no-cache"],
            stored: StoredRow(["Cache-Control": "max-age=600"]), now: 1, expected: .serve(.cache, age: 1)),
        Row(
            note: "§5.2.1.1 request max-age=0: revalidate",
            request: ["Cache-Control": "max-age=0"],
            stored: StoredRow(["Cache-Control": "max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.1 request max-age=30, age 10: served",
            request: ["Cache-Control": "max-age=30"],
            stored: StoredRow(["Cache-Control": "max-age=600"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§5.2.1.1 request max-age=5, age 10: revalidate",
            request: ["Cache-Control": "max-age=5"],
            stored: StoredRow(["Cache-Control": "max-age=600", "ETag": "\"a\""]), now: 10, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.3 min-fresh=20 with 50 s of freshness left: served",
            request: ["Cache-Control": "min-fresh=20"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§5.2.1.3 min-fresh=55 with 50 s left: revalidate",
            request: ["Cache-Control": "min-fresh=55"],
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 10, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.2 max-stale=30, stale by 10: served stale",
            request: ["Cache-Control": "max-stale=30"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 70, expected: .serve(.staleCache(.maxStaleAllowed), age: 70)),
        Row(
            note: "§5.2.1.2 max-stale=5, stale by 10: revalidate",
            request: ["Cache-Control": "max-stale=5"],
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 70, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.2 bare max-stale accepts any staleness",
            request: ["Cache-Control": "max-stale"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10_000_000, expected: .serve(.staleCache(.maxStaleAllowed), age: 10_000_000)),
        Row(
            note: "§5.2.1.2 max-stale does not override response no-cache",
            request: ["Cache-Control": "max-stale"],
            stored: StoredRow(["Cache-Control": "no-cache", "ETag": "\"a\""]), now: 10, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.1 + §5.2.1.2 max-age bounds the age even with max-stale",
            request: ["Cache-Control": "max-age=65, max-stale"],
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 70, expected: .revalidate(etag)),
        Row(
            note: "§5.2.1.7 only-if-cached with a fresh entry: served",
            request: ["Cache-Control": "only-if-cached"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§5.2.1.7 only-if-cached with a stale entry: 504",
            request: ["Cache-Control": "only-if-cached"],
            stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 70, expected: .unsatisfiable),
        Row(
            note: "§5.2.1.7 only-if-cached with nothing stored: 504",
            request: ["Cache-Control": "only-if-cached"], stored: nil, expected: .unsatisfiable),
        Row(
            note: "§5.2.1.7 only-if-cached + max-stale: the stale entry is served",
            request: ["Cache-Control": "only-if-cached, max-stale"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 70, expected: .serve(.staleCache(.maxStaleAllowed), age: 70)),
        Row(
            note: "§5.2.1.5 request no-store: the cache is left out (fetch)",
            request: ["Cache-Control": "no-store"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .fetch("no-store")),
        Row(
            note: "§5.2.1.5 + §5.2.1.7 no-store and only-if-cached: 504",
            request: ["Cache-Control": "no-store, only-if-cached"],
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .unsatisfiable),
        Row(
            note: "§5.2 request directive names are case-insensitive (NO-CACHE)",
            request: ["Cache-Control": "NO-CACHE"],
            stored: StoredRow(["Cache-Control": "max-age=600", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),

        // Methods and requests the cache does not answer
        Row(
            note: "§4.3.5 HEAD is answered from a stored GET",
            method: .head, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§4 POST is not answered from the cache",
            method: .post, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .fetch("POST")),
        Row(
            note: "§3.3 a Range request is decided as any GET (which bytes it gets is rangeAnswer's part)",
            request: ["Range": "bytes=0-99"], stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "§3.3 a stale Range request with If-Range is revalidated like any GET",
            request: ["Range": "bytes=0-99", "If-Range": "\"a\""], stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]),
            now: 100, expected: .revalidate(etag)),
        Row(
            note: "§4.3.2 a caller's own If-None-Match goes to the network unchanged",
            request: ["If-None-Match": "\"z\""], stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .fetch("If-None-Match")),

        // §4.1 Vary
        Row(
            note: "§4.1 Vary: the same Accept-Encoding selects the entry",
            request: ["Accept-Encoding": "gzip"],
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "Accept-Encoding"], vary: ["accept-encoding": "gzip"]), now: 1,
            expected: .serve(.cache, age: 1)),
        Row(
            note: "§4.1 Vary: a different Accept-Encoding does not",
            request: ["Accept-Encoding": "br"],
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "Accept-Encoding"], vary: ["accept-encoding": "gzip"]), now: 1,
            expected: .fetch("Vary mismatch")),
        Row(
            note: "§4.1 + §5.2.1.7 Vary mismatch under only-if-cached: 504",
            request: ["Accept-Encoding": "br", "Cache-Control": "only-if-cached"],
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "Accept-Encoding"], vary: ["accept-encoding": "gzip"]), now: 1,
            expected: .unsatisfiable),
        Row(
            note: "§4.1 Vary: * never matches (even if such an entry were stored)",
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "*"], vary: ["*": ""]), now: 1, expected: .fetch("Vary")),
        Row(
            note: "§4.1 Vary names a field the entry did not record: no match",
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "Accept"]), now: 1, expected: .fetch("Vary")),

        // Every HTTPCachePolicy
        Row(
            note: "policy reloadIgnoringCache: fetch even when fresh",
            policy: .reloadIgnoringCache, stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 1, expected: .fetch("reload")),
        Row(
            note: "policy reloadIgnoringCache + only-if-cached directive: 504",
            request: ["Cache-Control": "only-if-cached"], policy: .reloadIgnoringCache,
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 1, expected: .unsatisfiable),
        Row(
            note: "policy revalidate: a fresh entry with validators is revalidated",
            policy: .revalidate, stored: StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]), now: 1, expected: .revalidate(etag)),
        Row(
            note: "policy revalidate: without validators, fetch",
            policy: .revalidate, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 1, expected: .fetch("validators")),
        Row(
            note: "policy revalidate with nothing stored: fetch",
            policy: .revalidate, stored: nil, expected: .fetch("nothing stored")),
        Row(
            note: "policy returnCacheElseLoad: a fresh entry is a plain hit",
            policy: .returnCacheElseLoad, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 10, expected: .serve(.cache, age: 10)),
        Row(
            note: "policy returnCacheElseLoad: a stale entry is served as stale (cache policy)",
            policy: .returnCacheElseLoad, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 1000,
            expected: .serve(.staleCache(.cachePolicy), age: 1000)),
        Row(
            note: "policy returnCacheElseLoad: nothing stored, fetch",
            policy: .returnCacheElseLoad, stored: nil, expected: .fetch("nothing stored")),
        Row(
            note: "policy returnCacheElseLoad + §5.2.2.2 must-revalidate: a stale entry is revalidated, not served",
            policy: .returnCacheElseLoad, stored: StoredRow(["Cache-Control": "max-age=60, must-revalidate", "ETag": "\"a\""]), now: 1000,
            expected: .revalidate(etag)),
        Row(
            note: "policy returnCacheElseLoad + §4.1 Vary mismatch: fetch",
            request: ["Accept": "text/html"], policy: .returnCacheElseLoad,
            stored: StoredRow(["Cache-Control": "max-age=60", "Vary": "Accept"], vary: ["accept": "application/json"]), now: 1,
            expected: .fetch("Vary mismatch")),
        Row(
            note: "policy onlyIfCached: a stale entry is served as stale (cache policy)",
            policy: .onlyIfCached, stored: StoredRow(["Cache-Control": "max-age=60"]), now: 1000,
            expected: .serve(.staleCache(.cachePolicy), age: 1000)),
        Row(
            note: "policy onlyIfCached: an entry without any freshness is served as stale",
            policy: .onlyIfCached, stored: StoredRow(status: 404, [:]), now: 5, expected: .serve(.staleCache(.cachePolicy), age: 5)),
        Row(
            note: "policy onlyIfCached: nothing stored, 504",
            policy: .onlyIfCached, stored: nil, expected: .unsatisfiable),
        Row(
            note: "policy onlyIfCached + §5.2.2.2 must-revalidate and stale: 504",
            policy: .onlyIfCached, stored: StoredRow(["Cache-Control": "max-age=60, must-revalidate", "ETag": "\"a\""]), now: 1000,
            expected: .unsatisfiable),
        Row(
            note: "policy onlyIfCached + §5.2.2.4 response no-cache: 504",
            policy: .onlyIfCached, stored: StoredRow(["Cache-Control": "no-cache", "ETag": "\"a\""]), now: 1, expected: .unsatisfiable),
        Row(
            note: "policy onlyIfCached + §5.2.1.5 request no-store: 504",
            request: ["Cache-Control": "no-store"], policy: .onlyIfCached,
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 1, expected: .unsatisfiable),
    ]

    @Test(arguments: rows)
    func decision(_ row: Row) {
        let rules = HTTPCacheRules(isShared: row.shared)
        let decision = rules.decide(
            method: row.method, requestHeaders: row.request, policy: row.policy,
            entry: row.stored?.head, now: RuleClock.at(row.now))
        #expect(row.expected.matches(decision), "\(row.note): got \(decision), expected \(row.expected)")
    }

    @Test func sharedModeComesFromHTTPCacheMode() {
        #expect(HTTPCacheRules(mode: .shared).isShared)
        #expect(!HTTPCacheRules(mode: .enabled).isShared)
        #expect(!HTTPCacheRules(mode: .disabled).isShared)
    }
}
