import CourierSupport
import Foundation
import Testing
@testable import Courier

/// The byte-level speed tricks (``FastPaths``) that stand in for a general path: whatever they
/// accept, the general path gives the same answer for, and the forms servers and callers send
/// most do take them.
@Suite struct FastPathEquivalenceTests {
    static let now = Date(timeIntervalSince1970: 1_790_000_000)

    /// Each of `strings` the byte-level reader accepts reads as the general parser reads it.
    static func expectSameDates(_ strings: [String]) {
        for string in strings {
            if let fast = HTTPDate.canonicalIMFFixdate(string) {
                #expect(fast == HTTPDate.parseAnyForm(string, now: now), "\(string)")
            }
        }
    }

    /// `COURIER_FAST_PATHS`: `0` turns every trick off, a `-name` list only those (the benchmarks'
    /// per-trick measurement), anything else none.
    @Test(
        arguments: [
            (nil, []), ("1", []), ("", []), ("0", FastPaths.Trick.allCases),
            ("-batch", [.batch]), ("-batch,-callerpass", [.batch, .callerpass]), (" -memo , -disk ", [.memo, .disk]),
            ("batch", []), ("-nosuchtrick,-host", [.host]),
        ] as [(String?, [FastPaths.Trick])])
    func theSwitchTurnsOffAllTricksOrTheNamedOnes(value: String?, off: [FastPaths.Trick]) {
        #expect(FastPaths.disabled(by: value) == Set(off))
    }

    @Test func theByteLevelIMFFixdateReaderAgreesWithTheGeneralParser() {
        var random = SeededRandom(seed: 0xC0FFEE)
        let instants = (0..<2_000).map { _ in Double(Int64.random(in: -62_135_596_800...253_402_300_799, using: &random)) }
        let canonical = instants.map { HTTPDate.format(Date(timeIntervalSince1970: $0)) }
        for (string, instant) in zip(canonical, instants) {
            #expect(HTTPDate.canonicalIMFFixdate(string) == Date(timeIntervalSince1970: instant), "\(string)")
        }
        // Every single-byte change of some canonical dates: letters, digits, separators and bytes
        // outside ASCII in every position.
        let replacements: [UInt8] = Array("0189aAzZ:, -+GgTt\t".utf8) + [0x00, 0x7F, 0xC3, 0xFF]
        var mutated: [String] = []
        for string in canonical.prefix(40) + ["Sun, 06 Nov 1994 08:49:37 GMT", "Fri, 31 Dec 9999 23:59:60 GMT", "Thu, 29 Feb 2024 00:00:00 GMT"] {
            let bytes = Array(string.utf8)
            for index in bytes.indices {
                for replacement in replacements {
                    var changed = bytes
                    changed[index] = replacement
                    mutated.append(String(decoding: changed, as: UTF8.self))
                }
            }
        }
        Self.expectSameDates(mutated)
        Self.expectSameDates([
            "sun, 06 nov 1994 08:49:37 GMT", "SUN, 06 NOV 1994 08:49:37 GMT", "Sun, 29 Feb 2023 08:49:37 GMT",
            "Sun, 31 Apr 2023 08:49:37 GMT", "Sun, 00 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 0000 08:49:37 GMT",
            "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Nov 1994 08:60:00 GMT", "Sun, 06 Nov 1994 08:49:61 GMT",
            "Sun, 06 Nov 1994 08:49:37 gmt", "Sun,  6 Nov 1994 08:49:37 GMT", "Sun, +6 Nov 1994 08:49:37 GMT",
            "Xyz, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Xyz 1994 08:49:37 GMT",
        ])
        #expect(HTTPDate.canonicalIMFFixdate("sun, 06 nov 1994 08:49:37 GMT") != nil, "letters in any case")
        #expect(HTTPDate.canonicalIMFFixdate("Sun, 29 Feb 2023 08:49:37 GMT") == nil, "no 29 February in 2023")
    }

    @Test func theByteLevelURLKeyAgreesWithURLComponents() throws {
        let strings = [
            "http://example.com/", "https://example.com/a/b?c=1&a=2", "http://127.0.0.1:18280/cachewarm/fresh/f0001.bin",
            "https://api.example.com:8443/v1/items;x=1?q=%20a+b&z=~", "http://example.com", "http://example.com?x=1",
            "http://Example.com/", "HTTP://example.com/", "http://example.com:80/", "https://example.com:443/x",
            "http://example.com:080/", "http://example.com:8080/", "https://example.com:80/", "http://example.com/#top",
            "http://example.com/a#b?c", "http://user:pass@example.com/", "http://[::1]:8080/", "http://xn--bcher-kva.example/",
            "http://example.com/%7Euser/", "http://example.com/a/../b/./c", "http://example.com:/x", "http://example.com:99999/",
            "https://example.com/p?b=2&a=1&b=1", "http://exa_mple.com/", "http://example.com/a%2Fb?x=%E2%82%AC",
        ]
        var fastOnes = 0
        for string in strings {
            let url = try #require(URL(string: string), "\(string)")
            for sorting in [false, true] {
                if let fast = url.alreadyNormalised(sortingQuery: sorting) {
                    fastOnes += 1
                    #expect(fast == url.normalisedKeyThroughComponents(sortingQuery: sorting), "\(string), sorting: \(sorting)")
                }
            }
        }
        #expect(fastOnes >= 10)
        let common = try #require(URL(string: "http://127.0.0.1:18280/cachewarm/fresh/f0001.bin"))
        #expect(common.alreadyNormalised(sortingQuery: false) == common.absoluteString)
        let relative = try #require(URL(string: "items/7?b=1", relativeTo: URL(string: "https://api.example.com/v2/")))
        #expect(relative.alreadyNormalised(sortingQuery: false) == "https://api.example.com/v2/items/7?b=1")
        #expect(relative.normalisedKeyThroughComponents(sortingQuery: false) == "https://api.example.com/v2/items/7?b=1")
    }
}
