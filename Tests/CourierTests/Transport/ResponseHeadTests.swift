import Testing
import Foundation
import CourierTestSupport
@_spi(Transport) @testable import Courier

/// `ResponseHead` joins repeated fields by searching only when a name of the same length was seen,
/// and through an index for long heads; both must give exactly the headers of the plain rule (join
/// every field), and a hostile head must cost linear time.
@Suite struct ResponseHeadTests {
    static let names = [
        "Vary", "vary", "VARY", "Via", "Link", "link", "Content-Length", "content-length",
        "Content-Encoding", "X-A", "x-a", "X-B", "Set-Cookie", "set-cookie", "Cache-Control",
        String(repeating: "x", count: 63), String(repeating: "X", count: 63), String(repeating: "y", count: 70),
        String(repeating: "Y", count: 64), "Accept-Ranges", "ETag", "etag",
    ]

    @Test func theLengthShortcutJoinsExactlyLikeThePlainRule() {
        var generator = SeededRandom(seed: 42)
        let url = URL(string: "http://example.test/")!
        for round in 0..<2_000 {
            // One head in four is longer than ResponseHead.fieldsJoinedBySearching: joined through the index.
            let count = Int(generator.next() % (round % 4 == 0 ? 80 : 12))
            let fields = (0..<count).map { index -> (name: String, value: String) in
                (name: Self.names[Int(generator.next() % UInt64(Self.names.count))], value: "v\(index)")
            }
            let head = ResponseHead(statusCode: 200, fields: fields, url: url, httpVersion: "HTTP/1.1")
            var plain = HTTPHeaders()
            for field in fields { plain.addJoining(name: field.name, value: field.value) }
            #expect(
                head.headers.map { "\($0.name): \($0.value)" } == plain.map { "\($0.name): \($0.value)" },
                "fields: \(fields)")
            let cookies = fields.filter { $0.name.lowercased() == "set-cookie" }.map(\.value)
            #expect(head.setCookies == cookies)
        }
    }

    /// 42,000 distinct three-byte names fit in the default 256 KiB head limit (libcurl before 8.6
    /// counts no lines); searching the names so far for each took 14 s of processor time per
    /// response in a release build (90 s of wall time on a loaded machine), and joining one name
    /// 64,000 times copied its growing value each time. Joined through an index, both take
    /// milliseconds: the bound is the calling thread's processor time, with a margin a linear join
    /// never nears and the old search always passed.
    @Test func aHostileHeadIsJoinedInLinearTime() {
        let url = URL(string: "http://example.test/")!
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var distinct: [(name: String, value: String)] = []
        distinct.reserveCapacity(42_000)
        outer: for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    distinct.append((name: String(decoding: [a, b, c], as: UTF8.self), value: ""))
                    if distinct.count == 42_000 { break outer }
                }
            }
        }
        let repeated = Array(repeating: (name: "a", value: "x"), count: 64_000)
        var heads: [ResponseHead] = []
        let cost = ThreadCPUTime.measure {
            heads.append(ResponseHead(statusCode: 200, fields: distinct, url: url, httpVersion: "HTTP/1.1"))
            heads.append(ResponseHead(statusCode: 200, fields: repeated, url: url, httpVersion: "HTTP/1.1"))
        }
        #expect(heads[0].headers.count == 42_000)
        #expect(heads[1].headers.count == 1)
        #expect(heads[1].headers.value(for: "A")?.utf8.count == 64_000 * 3 - 2)
        #expect(cost < .seconds(10), "joining the hostile heads took \(cost) of processor time")
    }

    @Test func theAnnouncedLengthIsReadOnlyWithoutAContentCoding() {
        let url = URL(string: "http://example.test/")!
        func length(_ fields: [(String, String)]) -> Int64 {
            ResponseHead(statusCode: 200, fields: fields.map { (name: $0.0, value: $0.1) }, url: url, httpVersion: "HTTP/1.1")
                .expectedContentLength
        }
        #expect(length([("content-length", "12")]) == 12)
        #expect(length([("Content-Length", "12"), ("Content-Encoding", "gzip")]) == -1)
        #expect(length([("Content-Length", "12"), ("Content-Encoding", "identity")]) == 12)
        #expect(length([("X-Length-Of-14", "1"), ("Content-Length", "-3")]) == -1)
        #expect(length([]) == -1)
    }
}
