import CourierSupport
import Foundation
import Testing
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("MIMEType") struct MIMETypeTests {
        @Test(
            "parsing strips parameters and whitespace and lowercases",
            arguments: [
                ("application/json", "application/json"),
                ("  Application/JSON ; charset=utf-8", "application/json"),
                ("text/html;q=0.8", "text/html"),
                ("*/*", "*/*"),
                ("application/*", "application/*"),
                ("*/json", "*/json"),
                ("application/problem+json", "application/problem+json"),
                ("\tText/PLAIN\t ;x=1", "text/plain"),
                ("application/X-WWW-Form-Urlencoded", "application/x-www-form-urlencoded"),
                // Not all ASCII: the general path trims Unicode spaces too.
                ("\u{A0}text/html\u{2003}", "text/html"),
            ])
        func parses(text: String, expected: String) throws {
            #expect(try #require(MIMEType(text)).description == expected)
        }

        @Test(
            "strings that are not media types parse to nil",
            arguments: ["text", "", " ", "/json", "text/", "a/b/c", "te xt/html", "; charset=utf-8", "text/\r\nhtml", "\t/json"])
        func rejects(text: String) {
            #expect(MIMEType(text) == nil)
        }

        /// Found by the fuzzer (header_values): a combining mark on the space after the slash made a
        /// subtype that printed differently from how it parsed. Both parts must be tokens.
        @Test("non-token parts are not media types", arguments: ["text/ \u{301}html", "t\u{e9}xt/html", "text/ht\u{FFFD}ml", "text/json;\u{301}x"])
        func rejectsNonTokens(text: String) {
            #expect(MIMEType(text) == nil)
        }

        @Test(
            "wildcards match on either side",
            arguments: [
                ("*/*", "text/html", true),
                ("application/*", "application/json", true),
                ("*/json", "application/json", true),
                ("application/json", "application/*", true),
                ("application/json; charset=utf-8; q=0.8", "application/json", true),
                ("application/json", "text/json", false),
                ("text/html", "text/plain", false),
                ("application/*", "text/json", false),
                ("*/xml", "application/json", false),
            ])
        func matches(acceptable: String, response: String, expected: Bool) throws {
            let lhs = try #require(MIMEType(acceptable))
            let rhs = try #require(MIMEType(response))
            #expect(lhs.matches(rhs) == expected)
        }

        @Test(
            "Accept headers give acceptable types by preference, without q=0",
            arguments: [
                (
                    "text/html, application/xhtml+xml, application/xml;q=0.9, image/webp, */*;q=0.8",
                    ["text/html", "application/xhtml+xml", "image/webp", "application/xml", "*/*"]
                ),
                ("application/json;q=0, text/plain", ["text/plain"]),
                ("application/json; q=0.000, text/*;q=0.5", ["text/*"]),
                ("", []),
                (" , bogus, */*", ["*/*"]),
                (#"text/plain; note="a,b", application/json"#, ["text/plain", "application/json"]),
                ("a/b;q=0.2, c/d;q=0.7, e/f;q=0.2, g/h;q=x", ["g/h", "c/d", "a/b", "e/f"]),
            ])
        func acceptHeader(header: String, expected: [String]) {
            #expect(MIMEType.acceptableTypes(fromAcceptHeader: header).map(\.description) == expected)
        }

        @Test(
            "the charset parameter is read unquoted and lowercased",
            arguments: [
                ("text/html; charset=\"UTF-8\"", "utf-8" as String?),
                ("text/plain;Charset=ISO-8859-1;format=flowed", "iso-8859-1"),
                ("application/json", nil),
                ("text/plain; charset=", nil),
            ])
        func charset(contentType: String, expected: String?) {
            #expect(MIMEType.charset(inContentType: contentType) == expected)
        }
    }

    @Suite("IANA charsets") struct StringEncodingTests {
        @Test(
            "names and aliases map to encodings, case-insensitively",
            arguments: [
                ("utf-8", String.Encoding.utf8), ("UTF8", .utf8), (" \"Utf-8\" ", .utf8),
                ("ISO-8859-1", .isoLatin1), ("latin1", .isoLatin1), ("iso_8859-1", .isoLatin1), ("ISO_8859-1:1987", .isoLatin1),
                ("us-ascii", .ascii), ("ASCII", .ascii),
                ("utf-16", .utf16), ("UTF-16BE", .utf16BigEndian), ("utf-16le", .utf16LittleEndian),
                ("utf-32", .utf32), ("utf-32be", .utf32BigEndian), ("UTF-32LE", .utf32LittleEndian),
                ("windows-1250", .windowsCP1250), ("windows-1251", .windowsCP1251), ("Windows-1252", .windowsCP1252),
                ("cp1252", .windowsCP1252), ("windows-1253", .windowsCP1253), ("windows-1254", .windowsCP1254),
                ("Shift_JIS", .shiftJIS), ("sjis", .shiftJIS), ("EUC-JP", .japaneseEUC), ("iso-2022-jp", .iso2022JP),
                ("macintosh", .macOSRoman), ("x-mac-roman", .macOSRoman), ("iso-8859-2", .isoLatin2),
            ])
        func lookUp(name: String, encoding: String.Encoding) {
            #expect(String.Encoding(ianaCharsetName: name) == encoding)
        }

        @Test("unknown names give nil", arguments: ["", "utf-7", "klingon", "utf-8x", "koi8-r"])
        func unknown(name: String) {
            #expect(String.Encoding(ianaCharsetName: name) == nil)
        }

        @Test(
            "every encoding's IANA name maps back to it",
            arguments: [
                String.Encoding.utf8, .ascii, .isoLatin1, .isoLatin2, .utf16, .utf16BigEndian, .utf16LittleEndian, .utf32,
                .utf32BigEndian, .utf32LittleEndian, .windowsCP1250, .windowsCP1251, .windowsCP1252, .windowsCP1253,
                .windowsCP1254, .shiftJIS, .japaneseEUC, .iso2022JP, .macOSRoman,
            ])
        func reverse(encoding: String.Encoding) throws {
            let name = try #require(encoding.ianaCharsetName)
            #expect(String.Encoding(ianaCharsetName: name) == encoding)
            #expect(name == name.lowercased())
        }

        @Test("an encoding outside the table has no IANA name")
        func noName() {
            #expect(String.Encoding.nonLossyASCII.ianaCharsetName == nil)
        }

        @Test(
            "mapped encodings decode real bytes on this platform",
            arguments: [
                ("utf-8", [0x41, 0xC3, 0xA9], "Aé"),
                ("us-ascii", [0x41, 0x7E], "A~"),
                ("iso-8859-1", [0x41, 0xE9, 0xFF], "Aéÿ"),
                ("iso-8859-2", [0xA1, 0xB1, 0xE6], "Ąąć"),
                ("utf-16", [0xFF, 0xFE, 0x41, 0x00], "A"),
                ("utf-16", [0x00, 0x41], "A"),
                ("utf-16be", [0x65, 0xE5], "日"),
                ("utf-16le", [0xE5, 0x65], "日"),
                ("utf-32", [0x00, 0x00, 0x00, 0x41], "A"),
                ("utf-32be", [0x00, 0x01, 0xF6, 0x00], "😀"),
                ("utf-32le", [0x00, 0xF6, 0x01, 0x00], "😀"),
                ("windows-1250", [0x8A, 0x9A], "Šš"),
                ("windows-1251", [0xC0, 0xFF], "Ая"),
                ("windows-1252", [0x80, 0x93, 0x94], "€“”"),
                ("windows-1253", [0xC1, 0xF9], "Αω"),
                ("windows-1254", [0xD0, 0xFD], "Ğı"),
                ("shift_jis", [0x93, 0xFA, 0x96, 0x7B], "日本"),
                ("iso-2022-jp", [0x1B, 0x24, 0x42, 0x46, 0x7C, 0x4B, 0x5C, 0x1B, 0x28, 0x42], "日本"),
                ("macintosh", [0x41, 0x7A], "Az"),
            ] as [(String, [UInt8], String)])
        func decodes(name: String, bytes: [UInt8], expected: String) throws {
            let encoding = try #require(String.Encoding(ianaCharsetName: name))
            #expect(String(data: Data(bytes), encoding: encoding) == expected)
        }

        @Test("EUC-JP decodes on Apple platforms; Linux Foundation cannot convert it")
        func eucJP() throws {
            let encoding = try #require(String.Encoding(ianaCharsetName: "euc-jp"))
            let decoded = String(data: Data([0xA4, 0xA2]), encoding: encoding)
            #if os(Linux)
            #expect(decoded == nil)
            #else
            #expect(decoded == "あ")
            #endif
        }
    }
}
