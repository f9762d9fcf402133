import Foundation
import Testing
import CourierTestSupport
@testable import Courier

/// Hostile inputs to the HTTP cache rules: huge, repeated, malformed or contradictory header
/// values and absurd clocks. Nothing traps or overflows, and the answers stay conservative.
@Suite struct HTTPCacheRulesHostileTests {
    static let policies: [HTTPCachePolicy] = [.useProtocolPolicy, .reloadIgnoringCache, .revalidate, .returnCacheElseLoad, .onlyIfCached]

    struct HostileRow: Sendable, CustomTestStringConvertible {
        let note: String
        let request: HTTPHeaders
        let response: HTTPHeaders
        var testDescription: String { note }
    }

    static let hostileRows: [HostileRow] = [
        HostileRow(
            note: "§5.2 a 100 KiB Cache-Control", request: [:],
            response: ["Cache-Control": String(repeating: "max-age=1, ", count: 10_000), "ETag": "\"a\""]),
        HostileRow(
            note: "§5.2 ten thousand distinct directives", request: ["Cache-Control": (0..<10_000).map { "x\($0)=\"\($0)\"" }.joined(separator: ",")],
            response: ["Cache-Control": (0..<10_000).map { "ext-\($0)" }.joined(separator: ", ") + ", max-age=5"]),
        HostileRow(
            note: "§1.2.2 every number huge", request: ["Cache-Control": "max-stale=\(String(repeating: "9", count: 500)), min-fresh=\(Int.max)"],
            response: [
                "Cache-Control": "max-age=\(Int.max)0, s-maxage=\(UInt64.max), stale-while-revalidate=\(Int.max), stale-if-error=\(Int.max)",
                "Age": String(repeating: "9", count: 5000), "Expires": "Fri, 31 Dec 9999 23:59:59 GMT",
            ]),
        HostileRow(
            note: "§5.3 garbage dates", request: ["If-Modified-Since": "\u{0}\u{FFFF}"],
            response: ["Date": "Mon, 99 Foo 0000 99:99:99 GMT", "Expires": "-1", "Last-Modified": "Thu, 01 Jan 0001 00:00:00 GMT"]),
        HostileRow(note: "§5.1 negative and fractional Age", request: [:], response: ["Age": "-9223372036854775808", "Cache-Control": "max-age=-1"]),
        HostileRow(
            note: "§5.2 unbalanced quotes and backslashes", request: ["Cache-Control": "\"\"\"\\\\\\\"max-age=1"],
            response: ["Cache-Control": "no-cache=\"\\", "Vary": "\"*\", ,,,"]),
        HostileRow(
            note: "§4.1 a Vary of ten thousand fields", request: [:],
            response: ["Vary": (0..<10_000).map { "X-\($0)" }.joined(separator: ","), "Cache-Control": "max-age=60"]),
        HostileRow(
            note: "§5.2 non-ASCII and control bytes", request: ["Cache-Control": "max-age=\u{663}\u{664}, \u{7}no-cache"],
            response: ["Cache-Control": "máx-age=5, max-age=٣", "Date": "Sun, 06 Nov 1994 08:49:37 GMT\u{0}"]),
    ]

    /// (when the entry was received, now): ordinary, far apart both ways, beyond Date's range, infinite.
    static let clocks: [(received: Date, now: Date)] = [
        (RuleClock.origin, RuleClock.at(10)), (RuleClock.origin, .distantPast), (.distantPast, .distantFuture),
        (.distantFuture, .distantPast), (Date(timeIntervalSince1970: 1e300), Date(timeIntervalSince1970: -1e300)),
        (Date(timeIntervalSince1970: .infinity), RuleClock.origin), (RuleClock.origin, Date(timeIntervalSince1970: .infinity)),
    ]

    @Test(arguments: hostileRows)
    func neverTrapsAndStaysBounded(_ row: HostileRow) {
        for shared in [false, true] {
            let rules = HTTPCacheRules(isShared: shared)
            _ = rules.refusalToStore(method: .get, requestHeaders: row.request, statusCode: 200, responseHeaders: row.response)
            let vary = rules.varyingRequestHeaders(requestHeaders: row.request, responseHeaders: row.response)
            for (received, now) in Self.clocks {
                let entry = CacheEntryHead(
                    statusCode: 200, headers: row.response, requestTime: received, responseTime: received,
                    varyingRequestHeaders: vary)
                let age = rules.currentAge(of: entry, now: now)
                let lifetime = rules.freshnessLifetime(of: entry)
                #expect(age >= 0 && lifetime >= 0, "\(row.note): age \(age), lifetime \(lifetime)")
                for policy in Self.policies {
                    let decision = rules.decide(method: .get, requestHeaders: row.request, policy: policy, entry: entry, now: now)
                    if case .serve(_, let servedAge, _) = decision { #expect(servedAge >= 0, "\(row.note)") }
                }
                _ = rules.mayServeStaleOnError(entry, now: now, requestHeaders: row.request)
                _ = rules.freshened(entry, with: row.response, requestTime: now, responseTime: now)
                _ = rules.mayFreshen(entry, with: row.response)
            }
        }
    }

    @Test func hugeInputsParseInLinearTime() {
        // §5.2: 100 KiB of directives and a 100 KiB quoted string parse quickly (no quadratic
        // rescans); the commas inside the quoted string split nothing, so the last no-store counts.
        let value = String(repeating: "no-cache, ", count: 10_000) + "ext=\"" + String(repeating: ",", count: 100_000) + "\", no-store"
        // The thread's processor time: a loaded machine makes the wall-clock time longer, not this.
        let elapsed = ThreadCPUTime.measure {
            #expect(
                CacheControl(value)
                    == .with {
                        $0.noCache = true; $0.noStore = true
                    })
        }
        #expect(elapsed < .seconds(5), "§5.2 parsing 200 KiB took \(elapsed) of processor time")
    }

    @Test func noStoreRequestIsNeverServed() {
        // §5.2.1.5: whatever is stored and whatever the policy, a no-store request is not served from the cache.
        let entry = StoredRow(["Cache-Control": "max-age=600, immutable, stale-while-revalidate=600", "ETag": "\"a\""]).head
        for policy in Self.policies {
            let decision = HTTPCacheRules().decide(
                method: .get, requestHeaders: ["Cache-Control": "no-store, max-stale"],
                policy: policy, entry: entry, now: RuleClock.at(1))
            if case .serve = decision { Issue.record("§5.2.1.5 served a no-store request under \(policy)") }
        }
    }
}
