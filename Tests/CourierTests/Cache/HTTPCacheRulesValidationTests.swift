import Foundation
import Testing
@testable import Courier

/// RFC 9111 §4.3 (validation, freshening with a 304), §4.4 (invalidation) and RFC 5861 §4
/// (stale-if-error), one row per rule.
@Suite struct HTTPCacheRulesValidationTests {
    struct FreshenRow: Sendable, CustomTestStringConvertible {
        let note: String
        var stored: HTTPHeaders
        let notModified: HTTPHeaders
        /// Fields the freshened head must have, with these values.
        var present: [String: String] = [:]
        /// Fields it must not have.
        var absent: [String] = []
        var testDescription: String { note }
    }

    static let freshenRows: [FreshenRow] = [
        FreshenRow(
            note: "§4.3.4 the 304's Cache-Control replaces the stored one",
            stored: ["Cache-Control": "max-age=10", "ETag": "\"a\""], notModified: ["Cache-Control": "max-age=99", "ETag": "\"a\""],
            present: ["Cache-Control": "max-age=99", "ETag": "\"a\""]),
        FreshenRow(
            note: "§4.3.4 fields only in the 304 are added, fields only stored are kept",
            stored: ["X-Old": "1"], notModified: ["X-New": "2"], present: ["X-Old": "1", "X-New": "2"]),
        FreshenRow(
            note: "§4.3.4 the 304's Date and Expires replace the stored ones",
            stored: ["Date": "Sun, 01 Jun 2025 00:00:00 GMT", "Expires": "0"],
            notModified: ["Date": "Sun, 15 Jun 2025 00:00:00 GMT", "Expires": "Mon, 16 Jun 2025 00:00:00 GMT"],
            present: ["Date": "Sun, 15 Jun 2025 00:00:00 GMT", "Expires": "Mon, 16 Jun 2025 00:00:00 GMT"]),
        FreshenRow(
            note: "§3.2 Content-Length is not updated from a 304",
            stored: ["Content-Length": "5000"], notModified: ["Content-Length": "0"], present: ["Content-Length": "5000"]),
        FreshenRow(
            note: "§3.2 fields describing the stored body (Content-Encoding, Content-Type, Content-Range) are kept",
            stored: ["Content-Type": "application/json"],
            notModified: ["Content-Type": "text/html", "Content-Encoding": "gzip", "Content-Range": "bytes 0-1/2"],
            present: ["Content-Type": "application/json"], absent: ["Content-Encoding", "Content-Range"]),
        FreshenRow(
            note: "§3.1 hop-by-hop fields of the 304 are not stored",
            stored: [:],
            notModified: [
                "Connection": "close, X-Hop", "X-Hop": "1", "Keep-Alive": "timeout=5", "Transfer-Encoding": "chunked",
                "Upgrade": "h2c", "Proxy-Authenticate": "Basic",
            ],
            absent: ["Connection", "X-Hop", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Proxy-Authenticate"]),
        FreshenRow(
            note: "§4.2.3 a stored Date the 304 lacks is removed (date_value becomes the new response time)",
            stored: ["Date": "Sun, 01 Jun 2025 00:00:00 GMT", "Cache-Control": "max-age=60"], notModified: ["ETag": "\"a\""],
            absent: ["Date"]),
        FreshenRow(
            note: "§4.2.3 a stored Age the 304 lacks is removed; one it sends is kept",
            stored: ["Age": "500"], notModified: [:], absent: ["Age"]),
        FreshenRow(
            note: "§4.2.3 the 304's Age replaces the stored one",
            stored: ["Age": "500"], notModified: ["Age": "3"], present: ["Age": "3"]),
    ]

    @Test(arguments: freshenRows)
    func freshening(_ row: FreshenRow) {
        let stored = CacheEntryHead(
            statusCode: 203, headers: row.stored, requestTime: RuleClock.at(0), responseTime: RuleClock.at(1),
            varyingRequestHeaders: ["accept": "a"], requestHadAuthorization: true)
        let fresh = HTTPCacheRules().freshened(stored, with: row.notModified, requestTime: RuleClock.at(100), responseTime: RuleClock.at(101))
        for (name, value) in row.present {
            #expect(fresh.headers[name] == value, "\(row.note): \(name) is \(fresh.headers[name] ?? "absent")")
        }
        for name in row.absent {
            #expect(!fresh.headers.contains(name), "\(row.note): \(name) should be absent")
        }
        #expect(
            fresh.statusCode == 203 && fresh.varyingRequestHeaders == ["accept": "a"] && fresh.requestHadAuthorization,
            "\(row.note): §4.3.4 status, Vary values and Authorization flag are kept")
        #expect(fresh.requestTime == RuleClock.at(100) && fresh.responseTime == RuleClock.at(101), "\(row.note): times are the 304's")
    }

    @Test func freshenedEntryIsFreshAgain() {
        // §4.3.4: a stale entry revalidated by a 304 without Date is fresh from the 304's arrival
        // (age: 1 s response delay + 10 s resident).
        let rules = HTTPCacheRules()
        let stale = StoredRow(["Cache-Control": "max-age=60", "ETag": "\"a\""]).head
        #expect(
            rules.decide(method: .get, requestHeaders: [:], policy: .useProtocolPolicy, entry: stale, now: RuleClock.at(1000))
                == .revalidate(conditionalHeaders: ["If-None-Match": "\"a\""]))
        let fresh = rules.freshened(stale, with: ["ETag": "\"a\""], requestTime: RuleClock.at(1000), responseTime: RuleClock.at(1001))
        #expect(
            rules.decide(method: .get, requestHeaders: [:], policy: .useProtocolPolicy, entry: fresh, now: RuleClock.at(1011))
                == .serve(source: .cache, age: 11, revalidateInBackground: false), "§4.3.4 freshened entry is fresh")
    }

    struct SelectRow: Sendable, CustomTestStringConvertible {
        let note: String
        let stored: HTTPHeaders
        let notModified: HTTPHeaders
        let mayFreshen: Bool
        var testDescription: String { note }
    }

    static let selectRows: [SelectRow] = [
        SelectRow(note: "§4.3.4 same strong ETag", stored: ["ETag": "\"a\""], notModified: ["ETag": "\"a\""], mayFreshen: true),
        SelectRow(
            note: "§4.3.4 a different strong ETag identifies another representation", stored: ["ETag": "\"a\""],
            notModified: ["ETag": "\"b\""], mayFreshen: false),
        SelectRow(
            note:
                "§4.3.4 (lenient) a strong ETag matches a stored weak one weakly: nginx weakens a gzip-encoded tag and answers its 304 with the strong one",
            stored: ["ETag": "W/\"a\""], notModified: ["ETag": "\"a\""], mayFreshen: true),
        SelectRow(note: "§4.3.4 a weak ETag matches weakly", stored: ["ETag": "\"a\""], notModified: ["ETag": "W/\"a\""], mayFreshen: true),
        SelectRow(
            note: "§4.3.4 a different weak ETag does not match", stored: ["ETag": "W/\"a\""], notModified: ["ETag": "W/\"b\""], mayFreshen: false),
        SelectRow(
            note: "§4.3.4 a 304 ETag with no stored ETag selects nothing", stored: ["Last-Modified": "Sun, 01 Jun 2025 00:00:00 GMT"],
            notModified: ["ETag": "\"a\""], mayFreshen: false),
        SelectRow(
            note: "§4.3.4 same Last-Modified", stored: ["Last-Modified": "Sun, 01 Jun 2025 00:00:00 GMT"],
            notModified: ["Last-Modified": "Sun, 01 Jun 2025 00:00:00 GMT"], mayFreshen: true),
        SelectRow(
            note: "§4.3.4 a different Last-Modified", stored: ["Last-Modified": "Sun, 01 Jun 2025 00:00:00 GMT"],
            notModified: ["Last-Modified": "Mon, 02 Jun 2025 00:00:00 GMT"], mayFreshen: false),
        SelectRow(
            note: "§4.3.4 a 304 without validators answers the request made from this entry", stored: ["ETag": "\"a\""],
            notModified: ["Cache-Control": "max-age=5"], mayFreshen: true),
    ]

    @Test(arguments: selectRows)
    func selectingTheStoredResponse(_ row: SelectRow) {
        let entry = CacheEntryHead(statusCode: 200, headers: row.stored, requestTime: RuleClock.origin, responseTime: RuleClock.origin)
        #expect(HTTPCacheRules().mayFreshen(entry, with: row.notModified) == row.mayFreshen, "\(row.note)")
    }

    struct InvalidationRow: Sendable, CustomTestStringConvertible {
        let note: String
        let method: HTTPMethod
        var url = "https://api.example.com/items/1"
        let status: Int
        var headers: HTTPHeaders = [:]
        let invalidated: [String]
        var testDescription: String { note }
    }

    static let invalidationRows: [InvalidationRow] = [
        InvalidationRow(
            note: "§4.4 POST 201 invalidates the target URI", method: .post, status: 201,
            invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(note: "§4.4 a 3xx is a non-error status", method: .delete, status: 303, invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(note: "§4.4 an error status (500) invalidates nothing", method: .post, status: 500, invalidated: []),
        InvalidationRow(note: "§4.4 an error status (404) invalidates nothing", method: .delete, status: 404, invalidated: []),
        InvalidationRow(note: "§4.4 a safe method (GET) invalidates nothing", method: .get, status: 200, invalidated: []),
        InvalidationRow(note: "§4.4 a safe method (OPTIONS) invalidates nothing", method: .options, status: 200, invalidated: []),
        InvalidationRow(
            note: "§4.4 an unknown method counts as unsafe", method: HTTPMethod(rawValue: "PURGE"), status: 200,
            invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(
            note: "§4.4 same-origin relative Location and Content-Location are invalidated too", method: .put, status: 204,
            headers: ["Location": "/items/2", "Content-Location": "3"],
            invalidated: ["https://api.example.com/items/1", "https://api.example.com/items/2", "https://api.example.com/items/3"]),
        InvalidationRow(
            note: "§4.4 another host's Location is not invalidated", method: .post, status: 201,
            headers: ["Location": "https://evil.example.net/items/1"], invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(
            note: "§4.4 another scheme is another origin", method: .post, status: 201,
            headers: ["Content-Location": "http://api.example.com/items/1"], invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(
            note: "§4.4 another port is another origin", method: .post, status: 201,
            headers: ["Location": "https://api.example.com:8443/items/1"], invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(
            note: "§4.4 the default port is the same origin; host case is ignored", method: .post, status: 201,
            headers: ["Location": "https://API.example.com:443/items/9"],
            invalidated: ["https://api.example.com/items/1", "https://API.example.com:443/items/9"]),
        InvalidationRow(
            note: "§4.4 a scheme-relative Location to another host is another origin", method: .patch, status: 200,
            headers: ["Location": "//evil.example.net/x"], invalidated: ["https://api.example.com/items/1"]),
        InvalidationRow(
            note: "§4.4 a Location equal to the target is listed once; fragments are dropped", method: .post,
            url: "https://api.example.com/items/1#top", status: 200, headers: ["Location": "/items/1#x"],
            invalidated: ["https://api.example.com/items/1"]),
    ]

    @Test(arguments: invalidationRows)
    func invalidation(_ row: InvalidationRow) throws {
        let url = try #require(URL(string: row.url))
        let urls = HTTPCacheRules().invalidatedURLs(method: row.method, requestURL: url, statusCode: row.status, responseHeaders: row.headers)
        #expect(urls.map(\.absoluteString) == row.invalidated, "\(row.note): \(urls)")
    }

    struct StaleIfErrorRow: Sendable, CustomTestStringConvertible {
        let note: String
        var request: HTTPHeaders = [:]
        let stored: StoredRow
        let now: TimeInterval
        var shared = false
        let allowed: Bool
        var testDescription: String { note }
    }

    static let staleIfErrorRows: [StaleIfErrorRow] = [
        StaleIfErrorRow(
            note: "RFC 5861 §4 stale-if-error=60, stale by 30: allowed",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=60"]), now: 90, allowed: true),
        StaleIfErrorRow(
            note: "RFC 5861 §4 stale-if-error=60, stale by 61: refused",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=60"]), now: 121, allowed: false),
        StaleIfErrorRow(
            note: "RFC 5861 §4 no stale-if-error: refused",
            stored: StoredRow(["Cache-Control": "max-age=60"]), now: 61, allowed: false),
        StaleIfErrorRow(
            note: "RFC 5861 §4 the request's stale-if-error widens the window",
            request: ["Cache-Control": "stale-if-error=600"],
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=10"]), now: 300, allowed: true),
        StaleIfErrorRow(
            note: "RFC 5861 §4 a fresh entry with stale-if-error may answer an error",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=1"]), now: 10, allowed: true),
        StaleIfErrorRow(
            note: "§5.2.2.2 must-revalidate refuses stale-if-error",
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=600, must-revalidate"]), now: 90, allowed: false),
        StaleIfErrorRow(
            note: "§5.2.2.4 response no-cache refuses stale-if-error",
            stored: StoredRow(["Cache-Control": "no-cache, stale-if-error=600"]), now: 1, allowed: false),
        StaleIfErrorRow(
            note: "§5.2.2.10 s-maxage in a shared cache refuses stale-if-error",
            stored: StoredRow(["Cache-Control": "s-maxage=60, stale-if-error=600"]), now: 90, shared: true, allowed: false),
        StaleIfErrorRow(
            note: "§5.2.1.5 a no-store request refuses stale-if-error", request: ["Cache-Control": "no-store"],
            stored: StoredRow(["Cache-Control": "max-age=60, stale-if-error=600"]), now: 90, allowed: false),
    ]

    @Test(arguments: staleIfErrorRows)
    func staleIfError(_ row: StaleIfErrorRow) {
        let allowed = HTTPCacheRules(isShared: row.shared).mayServeStaleOnError(
            row.stored.head, now: RuleClock.at(row.now),
            requestHeaders: row.request)
        #expect(allowed == row.allowed, "\(row.note)")
    }

    @Test func conditionalHeadersFromValidators() {
        let rules = HTTPCacheRules()
        #expect(rules.conditionalHeaders(for: StoredRow(["ETag": " \"x\" "]).head) == ["If-None-Match": "\"x\""], "§4.3.1 ETag, trimmed")
        #expect(rules.conditionalHeaders(for: StoredRow(["ETag": ""]).head).isEmpty, "§4.3.1 an empty ETag is no validator")
        #expect(rules.conditionalHeaders(for: StoredRow([:]).head).isEmpty, "§4.3.1 no validators, no fields")
    }
}
