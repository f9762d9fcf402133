import Testing
import Foundation
@_spi(Transport) @testable import Courier

/// `ResponseHead` joins repeated fields by searching only when a name of the same length was seen;
/// that shortcut must give exactly the headers of the plain rule (join every field).
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
        for _ in 0..<2_000 {
            let count = Int(generator.next() % 12)
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
