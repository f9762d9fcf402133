@_spi(Transport) @testable import Courier
import CourierSupport
import Foundation
import Testing

/// Regressions for what the fuzz targets in Fuzz/ found (see Fuzz/README.md).
@Suite("Fuzzer findings")
struct FuzzFindingsTests {
    private let url = URL(string: "http://example.test/x")!

    private func finalHead(_ lines: [String]) -> ResponseHead? {
        var parser = CurlResponseParser()
        var head: ResponseHead?
        for line in lines {
            head = Array(line.utf8).withUnsafeBytes { parser.consume($0, url: url) } ?? head
        }
        return head
    }

    @Test("a status line with a code below 100 is no status line (fuzz: response_head)")
    func statusBelow100IsRejected() {
        #expect(finalHead(["HTTP/1.1 050 Switching Protocols\r\n", "Upgrade: websocket\r\n", "\r\n"]) == nil)
        #expect(finalHead(["HTTP/1.1 000\r\n", "\r\n"]) == nil)
        #expect(finalHead(["HTTP/1.1 099 x\r\n", "\r\n"]) == nil)
        // A later valid head is still read.
        #expect(finalHead(["HTTP/1.1 007\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "\r\n"])?.statusCode == 200)
        #expect(finalHead(["HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 204\r\n", "\r\n"])?.statusCode == 204)
    }

    @Test("a leap second is the minute's last second, so the last one of year 9999 formats and parses back (fuzz: header_values)")
    func leapSecondAtTheEndOfYear9999() throws {
        let now = Date(timeIntervalSince1970: 1_750_000_000)
        let leap = try #require(HTTPDate.parse("Fri, 31 Dec 9999 23:59:60 GMT", now: now))
        #expect(HTTPDate.format(leap) == "Fri, 31 Dec 9999 23:59:59 GMT")
        #expect(HTTPDate.parse(HTTPDate.format(leap), now: now) == leap)
        #expect(HTTPDate.parse("Tue, 30 Jun 2015 23:59:60 GMT", now: now) == HTTPDate.parse("Tue, 30 Jun 2015 23:59:59 GMT", now: now))
        #expect(HTTPDate.parse("Fri, 31 Dec 9999 23:59:61 GMT", now: now) == nil)
    }

    @Test("a combining mark after a slash does not smuggle the slash into a file name (fuzz: header_values)")
    func combiningMarkAfterSeparator() throws {
        // "/" + U+0337 is one Character that is not "/", so a Character-based split kept the slash.
        // (Literals with escapes are kept out of #expect and #require, whose expansion mangles them.)
        let found = "\u{FFFD}/\u{337}", mark = "\u{337}"
        let name = try #require(SuggestedFileName.sanitize(found))
        #expect(!name.unicodeScalars.contains("/"))
        #expect(name == mark)
        let traversalInput = "a/\u{301}../\u{301}..\\\u{301}passwd"
        let traversal = try #require(SuggestedFileName.sanitize(traversalInput))
        #expect(!traversal.unicodeScalars.contains { $0 == "/" || $0 == "\\" })
        let header = "attachment; filename=\"x/\u{301}y.txt\""
        let fromHeader = try #require(SuggestedFileName.fromContentDisposition(header).flatMap(SuggestedFileName.sanitize))
        #expect(!fromHeader.unicodeScalars.contains("/"))
    }

    @Test("a combining mark after a leading dot does not leave a hidden file name (fuzz: header_values)")
    func combiningMarkAfterDot() throws {
        let dotFile = ".\u{301}bashrc", dots = "..\u{301}"
        let name = try #require(SuggestedFileName.sanitize(dotFile))
        #expect(name.unicodeScalars.first != ".")
        let fromDots = try #require(SuggestedFileName.sanitize(dots))
        #expect(fromDots.unicodeScalars.first != ".")
    }

    @Test("a long non-ASCII file name is cut to 255 UTF-8 bytes (NAME_MAX), not by Characters (fuzz: header_values)")
    func longNamesFitNameMax() throws {
        // 250 × "e" + U+0301 is 750 bytes; 200 Characters of it were 600, past NAME_MAX (255).
        let longCombining = String(repeating: "e\u{301}", count: 250) + ".txt"
        let combining = try #require(SuggestedFileName.sanitize(longCombining))
        #expect(combining.utf8.count <= 255)
        let accented = try #require(
            SuggestedFileName.fromContentDisposition(
                "attachment; filename*=UTF-8''" + String(repeating: "%C3%A9", count: 300) + ".bin"
            ).flatMap(SuggestedFileName.sanitize))
        #expect(accented.utf8.count == 254)
        #expect(accented == String(repeating: "é", count: 127))
        // Four-byte scalars are never split.
        let emoji = try #require(SuggestedFileName.sanitize(String(repeating: "😀", count: 70)))
        #expect(emoji.utf8.count == 252 && emoji == String(repeating: "😀", count: 63))
        // Short names are unchanged.
        #expect(SuggestedFileName.sanitize("report é.pdf") == "report é.pdf")
    }
}
