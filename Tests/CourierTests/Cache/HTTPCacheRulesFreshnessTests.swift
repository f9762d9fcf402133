import Foundation
import Testing
@testable import Courier

/// RFC 9111 §4.2 (freshness lifetime, heuristics, age) and §5.2 (parsing Cache-Control), one row per rule.
@Suite struct HTTPCacheRulesFreshnessTests {
    struct LifetimeRow: Sendable, CustomTestStringConvertible {
        let note: String
        var stored: StoredRow
        var shared = false
        let lifetime: Int
        var testDescription: String { note }
    }

    static let lifetimeRows: [LifetimeRow] = [
        LifetimeRow(note: "§4.2.1 max-age", stored: StoredRow(["Cache-Control": "max-age=60"]), lifetime: 60),
        LifetimeRow(
            note: "§4.2.1 max-age quoted (§5.2: recipients accept the quoted form)",
            stored: StoredRow(["Cache-Control": "max-age=\"30\""]), lifetime: 30),
        LifetimeRow(
            note: "§4.2.1 s-maxage wins in a shared cache", stored: StoredRow(["Cache-Control": "max-age=60, s-maxage=120"]),
            shared: true, lifetime: 120),
        LifetimeRow(
            note: "§4.2.1 s-maxage is ignored by a private cache", stored: StoredRow(["Cache-Control": "max-age=60, s-maxage=120"]),
            lifetime: 60),
        LifetimeRow(
            note: "§4.2.1 max-age wins over Expires", stored: StoredRow(["Cache-Control": "max-age=10", "Expires": RuleClock.date(100)]),
            lifetime: 10),
        LifetimeRow(note: "§4.2.1 Expires − Date", stored: StoredRow(["Expires": RuleClock.date(100)]), lifetime: 100),
        LifetimeRow(
            note: "§4.2.1 Expires − response time when Date is missing",
            stored: StoredRow(["Expires": RuleClock.date(100)], dated: false, received: 40), lifetime: 60),
        LifetimeRow(
            note: "§4.2.1 Expires − Date uses the server's Date, not the local clock",
            stored: StoredRow(["Expires": RuleClock.date(-900), "Date": RuleClock.date(-1000)]), lifetime: 100),
        LifetimeRow(note: "§4.2.1 Expires before Date: 0", stored: StoredRow(["Expires": RuleClock.date(-100)]), lifetime: 0),
        LifetimeRow(note: "§5.3 Expires: 0 is already expired", stored: StoredRow(["Expires": "0"]), lifetime: 0),
        LifetimeRow(note: "§5.3 an invalid Expires is already expired", stored: StoredRow(["Expires": "next tuesday"]), lifetime: 0),
        LifetimeRow(
            note: "§4.2.1 two Expires fields (joined) are invalid: stale",
            stored: StoredRow(["Expires": RuleClock.date(100) + ", " + RuleClock.date(200)]), lifetime: 0),
        LifetimeRow(
            note: "§5.3 Expires in the obsolete RFC 850 form", stored: StoredRow(["Expires": "Sunday, 15-Jun-25 15:08:20 GMT"]),
            lifetime: 100),
        LifetimeRow(note: "§5.3 Expires in the asctime form", stored: StoredRow(["Expires": "Sun Jun 15 15:08:20 2025"]), lifetime: 100),
        LifetimeRow(
            note: "§4.2.1 an invalid max-age (non-numeric) is stale, even with Expires",
            stored: StoredRow(["Cache-Control": "max-age=soon", "Expires": RuleClock.date(100)]), lifetime: 0),
        LifetimeRow(note: "§1.2.2 a negative max-age is invalid: stale", stored: StoredRow(["Cache-Control": "max-age=-1"]), lifetime: 0),
        LifetimeRow(
            note: "§4.2.1 conflicting duplicate max-age: stale", stored: StoredRow(["Cache-Control": "max-age=60, max-age=120"]),
            lifetime: 0),
        LifetimeRow(
            note: "§4.2.1 equal duplicate max-age: that value", stored: StoredRow(["Cache-Control": "max-age=60, max-age=60"]),
            lifetime: 60),
        LifetimeRow(
            note: "§1.2.2 a max-age beyond 2^31 becomes 2147483648",
            stored: StoredRow(["Cache-Control": "max-age=99999999999999999999999999"]), lifetime: 2_147_483_648),
        LifetimeRow(
            note: "§4.2.2 heuristic: 10% of Date − Last-Modified", stored: StoredRow(["Last-Modified": RuleClock.date(-1000)]),
            lifetime: 100),
        LifetimeRow(
            note: "§4.2.2 heuristic for a heuristically cacheable 404", stored: StoredRow(status: 404, ["Last-Modified": RuleClock.date(-500)]),
            lifetime: 50),
        LifetimeRow(note: "§4.2.2 no heuristic for a 500", stored: StoredRow(status: 500, ["Last-Modified": RuleClock.date(-1000)]), lifetime: 0),
        LifetimeRow(
            note: "§4.2.2 heuristic allowed for a response marked public",
            stored: StoredRow(status: 500, ["Cache-Control": "public", "Last-Modified": RuleClock.date(-1000)]), lifetime: 100),
        LifetimeRow(
            note: "§4.2.2 no heuristic when max-age is present",
            stored: StoredRow(["Cache-Control": "max-age=5", "Last-Modified": RuleClock.date(-1000)]),
            lifetime: 5),
        LifetimeRow(
            note: "§4.2.2 no heuristic when Expires is present (even invalid)",
            stored: StoredRow(["Expires": "0", "Last-Modified": RuleClock.date(-1000)]), lifetime: 0),
        LifetimeRow(
            note: "§4.2.2 Last-Modified after Date gives no heuristic", stored: StoredRow(["Last-Modified": RuleClock.date(1000)]),
            lifetime: 0),
        LifetimeRow(note: "§4.2.2 no Last-Modified, no heuristic", stored: StoredRow([:]), lifetime: 0),
        LifetimeRow(
            note: "§4.2.2 heuristic measured from response time when Date is missing",
            stored: StoredRow(["Last-Modified": RuleClock.date(-1000)], dated: false, received: 1000), lifetime: 200),
    ]

    @Test(arguments: lifetimeRows)
    func freshnessLifetime(_ row: LifetimeRow) {
        let lifetime = HTTPCacheRules(isShared: row.shared).freshnessLifetime(of: row.stored.head)
        #expect(lifetime == row.lifetime, "\(row.note): \(lifetime)")
    }

    struct AgeRow: Sendable, CustomTestStringConvertible {
        let note: String
        var stored: StoredRow
        let now: TimeInterval
        let age: Int
        var testDescription: String { note }
    }

    static let ageRows: [AgeRow] = [
        AgeRow(note: "§4.2.3 resident time only", stored: StoredRow([:]), now: 10, age: 10),
        AgeRow(note: "§4.2.3 Age header plus resident time", stored: StoredRow(["Age": "30"]), now: 10, age: 40),
        AgeRow(note: "§4.2.3 apparent age from an older Date", stored: StoredRow(["Date": RuleClock.date(-20)]), now: 10, age: 30),
        AgeRow(
            note: "§4.2.3 a Date in the future (server clock ahead) is no negative age", stored: StoredRow(["Date": RuleClock.date(500)]),
            now: 10, age: 10),
        AgeRow(note: "§4.2.3 response_delay is added to age_value", stored: StoredRow(["Age": "10"], requested: -5), now: 0, age: 15),
        AgeRow(
            note: "§4.2.3 corrected_initial_age is the larger of apparent age and corrected age value",
            stored: StoredRow(["Age": "10", "Date": RuleClock.date(-60)]), now: 0, age: 60),
        AgeRow(note: "§5.1 a negative Age is invalid and ignored", stored: StoredRow(["Age": "-5"]), now: 10, age: 10),
        AgeRow(note: "§5.1 a non-numeric Age is ignored", stored: StoredRow(["Age": "old"]), now: 10, age: 10),
        AgeRow(note: "§5.1 a list Age uses its first member", stored: StoredRow(["Age": "5, 100"]), now: 10, age: 15),
        AgeRow(
            note: "§1.2.2 a huge Age saturates at 2^31", stored: StoredRow(["Age": String(repeating: "9", count: 1000)]), now: 0,
            age: 2_147_483_648),
        AgeRow(note: "§4.2.3 the clock going back (now before the response time) counts as no time", stored: StoredRow([:]), now: -100, age: 0),
        AgeRow(
            note: "§4.2.3 a response time before its request time is no negative delay", stored: StoredRow(["Age": "3"], requested: 50),
            now: 0, age: 3),
        AgeRow(note: "§4.2.3 an invalid Date is treated as missing", stored: StoredRow(["Date": "garbage"]), now: 7, age: 7),
    ]

    @Test(arguments: ageRows)
    func currentAge(_ row: AgeRow) {
        let age = HTTPCacheRules().currentAge(of: row.stored.head, now: RuleClock.at(row.now))
        #expect(age == row.age, "\(row.note): \(age)")
    }

    struct ParseRow: Sendable, CustomTestStringConvertible {
        let note: String
        let field: String?
        let expected: CacheControl
        var testDescription: String { note }
    }

    static let parseRows: [ParseRow] = [
        ParseRow(note: "§5.2 no field: no directives", field: nil, expected: CacheControl()),
        ParseRow(
            note: "§5.2 every boolean directive",
            field: "no-cache, no-store, no-transform, only-if-cached, must-revalidate, "
                + "proxy-revalidate, must-understand, public, private, immutable",
            expected: .with {
                $0.noCache = true; $0.noStore = true; $0.noTransform = true; $0.onlyIfCached = true; $0.mustRevalidate = true
                $0.proxyRevalidate = true; $0.mustUnderstand = true; $0.isPublic = true; $0.isPrivate = true; $0.immutable = true
            }),
        ParseRow(
            note: "§5.2 every delta-seconds directive",
            field: "max-age=1, s-maxage=2, max-stale=3, min-fresh=4, "
                + "stale-while-revalidate=5, stale-if-error=6",
            expected: .with {
                $0.maxAge = 1; $0.sharedMaxAge = 2; $0.maxStale = 3; $0.minFresh = 4; $0.staleWhileRevalidate = 5; $0.staleIfError = 6
            }),
        ParseRow(note: "§5.2.1.2 bare max-stale is any staleness", field: "max-stale", expected: .with { $0.maxStale = .max }),
        ParseRow(note: "§5.2.1.2 an invalid max-stale grants nothing", field: "max-stale=lots", expected: CacheControl()),
        ParseRow(
            note: "§5.2 names are case-insensitive, blanks around = are allowed", field: "  MAX-AGE = 5 ,Public",
            expected: .with {
                $0.maxAge = 5; $0.isPublic = true
            }),
        ParseRow(note: "§5.2 empty members and stray commas are skipped", field: ",,, no-store ,,", expected: .with { $0.noStore = true }),
        ParseRow(note: "§5.2 unknown extensions are ignored", field: "foo, bar=baz, max-age=3", expected: .with { $0.maxAge = 3 }),
        ParseRow(
            note: "§5.2 commas inside quoted strings do not split", field: "private=\"a, no-store, b\", max-age=5",
            expected: .with {
                $0.isPrivate = true; $0.maxAge = 5
            }),
        ParseRow(
            note: "§5.2 escaped quote inside a quoted string", field: "ext=\"a\\\", no-store\", max-age=5",
            expected: .with { $0.maxAge = 5 }),
        ParseRow(
            note: "§5.2 an unterminated quoted string swallows the rest", field: "no-cache=\"abc, max-age=5",
            expected: .with { $0.noCache = true }),
        ParseRow(
            note: "§1.2.2 delta-seconds with a sign or a fraction is invalid", field: "max-age=+5, min-fresh=1.5, stale-if-error=-3",
            expected: .with { $0.maxAge = 0 }),
        ParseRow(note: "§1.2.2 an empty max-age is invalid (stale)", field: "max-age=", expected: .with { $0.maxAge = 0 }),
        ParseRow(note: "§1.2.2 leading zeros are fine", field: "max-age=007", expected: .with { $0.maxAge = 7 }),
        ParseRow(
            note: "§1.2.2 a 1000-digit value saturates at 2^31", field: "s-maxage=" + String(repeating: "7", count: 1000),
            expected: .with { $0.sharedMaxAge = 2_147_483_648 }),
        ParseRow(
            note: "§4.2.1 duplicate directives keep the conservative value (min-fresh largest, the rest smallest)",
            field:
                "max-stale=50, max-stale=20, min-fresh=1, min-fresh=9, stale-if-error=8, stale-if-error=3, stale-while-revalidate=4, stale-while-revalidate=6",
            expected: .with {
                $0.maxStale = 20; $0.minFresh = 9; $0.staleIfError = 3; $0.staleWhileRevalidate = 4
            }),
        ParseRow(note: "§5.2 a name with junk inside is an unknown directive", field: "max age=5, no store", expected: CacheControl()),
    ]

    @Test(arguments: parseRows)
    func parsing(_ row: ParseRow) {
        let parsed = CacheControl(row.field)
        #expect(parsed == row.expected, "\(row.note): \(parsed)")
    }
}
