import Foundation
import Testing
@testable import Courier

/// RFC 9111 §3 (storing responses), §3.5 (Authorization) and §4.1 (Vary), one row per rule.
@Suite struct HTTPCacheRulesStorageTests {
    struct StoreRow: Sendable, CustomTestStringConvertible {
        let note: String
        var method: HTTPMethod = .get
        var request: HTTPHeaders = [:]
        var status = 200
        var response: HTTPHeaders = [:]
        var shared = false
        /// `nil`: storable; otherwise a text the refusal must contain.
        let refusal: String?
        var testDescription: String { note }
    }

    static let storeRows: [StoreRow] = [
        StoreRow(note: "§3 + RFC 9110 §15.1: 200 is heuristically cacheable", refusal: nil),
        StoreRow(note: "§3: 203 is heuristically cacheable", status: 203, refusal: nil),
        StoreRow(note: "§3: 204 is heuristically cacheable", status: 204, refusal: nil),
        StoreRow(note: "§3: 300 is heuristically cacheable", status: 300, refusal: nil),
        StoreRow(note: "§3: 301 is heuristically cacheable", status: 301, refusal: nil),
        StoreRow(note: "§3: 308 is heuristically cacheable", status: 308, refusal: nil),
        StoreRow(note: "§3: 404 is heuristically cacheable", status: 404, refusal: nil),
        StoreRow(note: "§3: 405 is heuristically cacheable", status: 405, refusal: nil),
        StoreRow(note: "§3: 410 is heuristically cacheable", status: 410, refusal: nil),
        StoreRow(note: "§3: 414 is heuristically cacheable", status: 414, refusal: nil),
        StoreRow(note: "§3: 501 is heuristically cacheable", status: 501, refusal: nil),
        StoreRow(
            note: "§3.3: a 206 to a request without a Range is not stored", status: 206,
            response: ["Cache-Control": "max-age=60"], refusal: "206"),
        StoreRow(note: "§3: 304 is not stored", status: 304, response: ["Cache-Control": "max-age=60"], refusal: "304"),
        StoreRow(note: "§3: a 1xx is not a final response", status: 103, response: ["Cache-Control": "max-age=60"], refusal: "final"),
        StoreRow(note: "§3: 302 without explicit freshness is not stored", status: 302, refusal: "302"),
        StoreRow(note: "§3: 302 with max-age is stored", status: 302, response: ["Cache-Control": "max-age=60"], refusal: nil),
        StoreRow(note: "§3: 500 without explicit freshness is not stored", status: 500, refusal: "500"),
        StoreRow(note: "§3: 500 with Expires is stored (Expires present, even if past)", status: 500, response: ["Expires": "0"], refusal: nil),
        StoreRow(note: "§3: 500 with public is stored", status: 500, response: ["Cache-Control": "public"], refusal: nil),
        StoreRow(note: "§3: 500 with private is stored by a private cache", status: 500, response: ["Cache-Control": "private"], refusal: nil),
        StoreRow(
            note: "§3: 500 with s-maxage is stored by a shared cache", status: 500, response: ["Cache-Control": "s-maxage=5"],
            shared: true, refusal: nil),
        StoreRow(
            note: "§3: s-maxage alone gives a private cache no permission", status: 500, response: ["Cache-Control": "s-maxage=5"],
            refusal: "500"),
        StoreRow(note: "§3: only GET responses are stored (POST)", method: .post, response: ["Cache-Control": "max-age=60"], refusal: "POST"),
        StoreRow(note: "§3: only GET responses are stored (HEAD)", method: .head, response: ["Cache-Control": "max-age=60"], refusal: "HEAD"),
        StoreRow(note: "§5.2.2.5 response no-store", response: ["Cache-Control": "max-age=60, no-store"], refusal: "no-store"),
        StoreRow(
            note: "§5.2.2.5 response NO-STORE (directive names are case-insensitive)", response: ["Cache-Control": "NO-STORE"], refusal: "no-store"),
        StoreRow(
            note: "§5.2.1.5 request no-store", request: ["Cache-Control": "no-store"], response: ["Cache-Control": "max-age=60"],
            refusal: "no-store"),
        StoreRow(
            note: "§5.2.2.3 must-understand with an understood status overrides no-store",
            response: ["Cache-Control": "must-understand, no-store, max-age=60"], refusal: nil),
        StoreRow(
            note: "§5.2.2.3 must-understand with a status not understood is not stored", status: 500,
            response: ["Cache-Control": "must-understand, no-store, max-age=60"], refusal: "must-understand"),
        StoreRow(
            note: "§5.2.2.7 private is not stored by a shared cache", response: ["Cache-Control": "private, max-age=60"],
            shared: true, refusal: "private"),
        StoreRow(
            note: "§5.2.2.7 qualified private=\"Set-Cookie\" is treated as private in a shared cache",
            response: ["Cache-Control": "private=\"Set-Cookie\", max-age=60"], shared: true, refusal: "private"),
        StoreRow(note: "§5.2.2.7 private is stored by a private cache", response: ["Cache-Control": "private, max-age=60"], refusal: nil),
        StoreRow(
            note: "§3.5 shared cache: a response to a request with Authorization is not stored",
            request: ["Authorization": "Bearer t"], response: ["Cache-Control": "max-age=60"], shared: true, refusal: "Authorization"),
        StoreRow(
            note: "§3.5 shared cache: public allows storing it", request: ["Authorization": "Bearer t"],
            response: ["Cache-Control": "public, max-age=60"], shared: true, refusal: nil),
        StoreRow(
            note: "§3.5 shared cache: must-revalidate allows storing it", request: ["Authorization": "Bearer t"],
            response: ["Cache-Control": "must-revalidate, max-age=60"], shared: true, refusal: nil),
        StoreRow(
            note: "§3.5 shared cache: s-maxage allows storing it", request: ["Authorization": "Bearer t"],
            response: ["Cache-Control": "s-maxage=60"], shared: true, refusal: nil),
        StoreRow(
            note: "§3.5 a private cache stores responses to requests with Authorization", request: ["Authorization": "Bearer t"],
            response: ["Cache-Control": "max-age=60"], refusal: nil),
        StoreRow(
            note: "§4.1 Vary: * is never stored (it could never be selected)", response: ["Cache-Control": "max-age=60", "Vary": "*"],
            refusal: "Vary"),
        StoreRow(note: "§4.1 Vary: Accept, * is never stored", response: ["Cache-Control": "max-age=60", "Vary": "Accept, *"], refusal: "Vary"),
        StoreRow(note: "§4.1 Vary naming fields is stored", response: ["Cache-Control": "max-age=60", "Vary": "Accept-Encoding"], refusal: nil),
        StoreRow(note: "§5.2.2.4 response no-cache is stored (and always revalidated)", response: ["Cache-Control": "no-cache"], refusal: nil),
        StoreRow(
            note: "§5.2 a quoted \"no-store\" inside another directive's argument is not no-store",
            response: ["Cache-Control": "community=\"no-store, x\", max-age=60"], refusal: nil),
    ]

    @Test(arguments: storeRows)
    func storability(_ row: StoreRow) {
        let refusal = HTTPCacheRules(isShared: row.shared).refusalToStore(
            method: row.method, requestHeaders: row.request,
            statusCode: row.status, responseHeaders: row.response)
        if let expected = row.refusal {
            #expect(refusal?.contains(expected) == true, "\(row.note): refusal \(refusal ?? "nil"), expected one naming \(expected)")
        } else {
            #expect(refusal == nil, "\(row.note): refused with \(refusal ?? "")")
        }
    }

    struct VaryRow: Sendable, CustomTestStringConvertible {
        let note: String
        let vary: String
        /// The request that fetched the stored response.
        let original: HTTPHeaders
        /// The new request.
        let request: HTTPHeaders
        let matches: Bool
        var testDescription: String { note }
    }

    static let varyRows: [VaryRow] = [
        VaryRow(
            note: "§4.1 same value matches", vary: "Accept-Encoding", original: ["Accept-Encoding": "gzip"],
            request: ["Accept-Encoding": "gzip"], matches: true),
        VaryRow(
            note: "§4.1 different value does not match", vary: "Accept-Encoding", original: ["Accept-Encoding": "gzip"],
            request: ["Accept-Encoding": "br"], matches: false),
        VaryRow(note: "§4.1 absent in both requests matches", vary: "Accept-Language", original: [:], request: [:], matches: true),
        VaryRow(
            note: "§4.1 absent in the original, present now: no match", vary: "Accept-Language", original: [:],
            request: ["Accept-Language": "de"], matches: false),
        VaryRow(
            note: "§4.1 present in the original, absent now: no match", vary: "Accept-Language", original: ["Accept-Language": "de"],
            request: [:], matches: false),
        VaryRow(
            note: "§4.1 whitespace is normalised (\"gzip,deflate\" vs \"gzip ,  deflate\")", vary: "Accept-Encoding",
            original: ["Accept-Encoding": "gzip,deflate"], request: ["Accept-Encoding": " gzip ,  deflate "], matches: true),
        VaryRow(
            note: "§4.1 runs of blanks inside a member become one space", vary: "Accept",
            original: ["Accept": "text/html;  q=0.9"], request: ["Accept": "text/html;\tq=0.9"], matches: true),
        VaryRow(
            note: "§4.1 list order is significant", vary: "Accept-Encoding",
            original: ["Accept-Encoding": "gzip, br"], request: ["Accept-Encoding": "br, gzip"], matches: false),
        VaryRow(
            note: "§4.1 value case is kept (values are compared exactly)", vary: "X-Mode",
            original: ["X-Mode": "A"], request: ["X-Mode": "a"], matches: false),
        VaryRow(
            note: "§4.1 quoted strings are not normalised", vary: "X-Q",
            original: ["X-Q": "\"a,b\""], request: ["X-Q": "\"a, b\""], matches: false),
        VaryRow(
            note: "§4.1 several fields all equal: match", vary: "Accept, Accept-Language",
            original: ["Accept": "a", "Accept-Language": "en"], request: ["accept": "a", "ACCEPT-LANGUAGE": "en"], matches: true),
        VaryRow(
            note: "§4.1 several fields, one differs: no match", vary: "Accept, Accept-Language",
            original: ["Accept": "a", "Accept-Language": "en"], request: ["Accept": "a", "Accept-Language": "fr"], matches: false),
        VaryRow(
            note: "§4.1 field names in Vary are case-insensitive", vary: "ACCEPT-encoding",
            original: ["accept-Encoding": "gzip"], request: ["Accept-Encoding": "gzip"], matches: true),
        VaryRow(note: "§4.1 Vary: * never matches", vary: "*", original: [:], request: [:], matches: false),
        VaryRow(note: "§4.1 an empty Vary varies on nothing", vary: " , ", original: ["Accept": "a"], request: ["Accept": "b"], matches: true),
    ]

    @Test(arguments: varyRows)
    func vary(_ row: VaryRow) {
        let rules = HTTPCacheRules()
        let response: HTTPHeaders = ["Vary": row.vary, "Cache-Control": "max-age=60"]
        let recorded = rules.varyingRequestHeaders(requestHeaders: row.original, responseHeaders: response)
        let entry = CacheEntryHead(
            statusCode: 200, headers: response, requestTime: RuleClock.origin, responseTime: RuleClock.origin,
            varyingRequestHeaders: recorded)
        #expect(rules.varyMatches(entry, requestHeaders: row.request) == row.matches, "\(row.note)")
        let decision = rules.decide(method: .get, requestHeaders: row.request, policy: .useProtocolPolicy, entry: entry, now: RuleClock.origin)
        #expect((decision == .serve(source: .cache, age: 0, revalidateInBackground: false)) == row.matches, "\(row.note): \(decision)")
    }

    @Test func varyingRequestHeadersRecordsLowerCasedNamesAndNormalisedValues() {
        let rules = HTTPCacheRules()
        #expect(rules.varyingRequestHeaders(requestHeaders: ["Accept": "a"], responseHeaders: [:]) == nil, "§4.1 no Vary: nil")
        #expect(rules.varyingRequestHeaders(requestHeaders: ["Accept": "a"], responseHeaders: ["Vary": ""]) == nil, "§4.1 empty Vary: nil")
        #expect(rules.varyingRequestHeaders(requestHeaders: [:], responseHeaders: ["Vary": "*"]) == ["*": ""], "§4.1 Vary: *")
        #expect(
            rules.varyingRequestHeaders(
                requestHeaders: ["ACCEPT": "  text/html ,text/plain "],
                responseHeaders: ["Vary": "Accept, Accept-Language, accept"])
                == ["accept": "text/html, text/plain", "accept-language": ""],
            "§4.1 lower-cased names, normalised values, absent fields as \"\"")
    }
}
