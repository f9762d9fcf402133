import Testing
import Foundation
@testable import Courier

/// Incremental UTF-8 validation (RFC 3629, RFC 6455 §8.1), checked against the standard library on
/// every split of each input, and for where it stops.
struct WebSocketUTF8ValidatorTests {
    /// (bytes, valid as a complete text, index of the first byte that must fail or nil).
    static let cases: [(String, [UInt8], Bool, Int?)] = [
        ("empty", [], true, nil),
        ("ASCII", Array("Hello, world! 0123456789".utf8), true, nil),
        ("κόσμε (Autobahn 6.2)", Array("κόσμε".utf8), true, nil),
        ("euro, four-byte emoji", Array("€ 𝄞 😀".utf8), true, nil),
        ("U+10FFFF, the last code point", [0xF4, 0x8F, 0xBF, 0xBF], true, nil),
        ("U+FFFF noncharacter is valid", [0xEF, 0xBF, 0xBF], true, nil),
        ("truncated two-byte", [0xC3], false, nil),
        ("truncated four-byte", [0xF0, 0x9F, 0x98], false, nil),
        ("lone continuation", [0x41, 0x80], false, 1),
        ("overlong slash C0 AF", [0xC0, 0xAF], false, 0),
        ("overlong C1", [0xC1, 0xBF], false, 0),
        ("overlong three-byte E0 80 AF", [0xE0, 0x80, 0xAF], false, 1),
        ("overlong four-byte F0 80 80 AF", [0xF0, 0x80, 0x80, 0xAF], false, 1),
        ("surrogate U+D800", [0xED, 0xA0, 0x80], false, 1),
        ("surrogate U+DFFF", [0xED, 0xBF, 0xBF], false, 1),
        ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80], false, 1),
        ("F5 never appears", [0xF5, 0x80, 0x80, 0x80], false, 0),
        ("FE, FF never appear", [0x61, 0xFE], false, 1),
        ("ASCII run then bad byte at 9", Array("abcdefghi".utf8) + [0xFF], false, 9),
        (
            "κόσμε then a broken sequence (Autobahn 6.3)",
            [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xCE, 0xBC, 0xCE, 0xB5] + [0xED, 0xA0, 0x80, 0x65, 0x64, 0x69, 0x74, 0x65, 0x64], false, 12
        ),
        ("continuation where a start is due", [0xE2, 0x82, 0xAC, 0xAC], false, 3),
        ("start where a continuation is due", [0xE2, 0x41], false, 1),
    ]

    @Test func agreesWithTheStandardLibraryOnEverySplit() {
        for (name, bytes, valid, failIndex) in Self.cases {
            #expect((String(validating: bytes, as: UTF8.self) != nil) == valid, "\(name): the table disagrees with the standard library")
            for split in 0...bytes.count {
                var validator = WebSocketUTF8Validator()
                let first = validator.validate(Data(bytes[..<split]))
                let both = first && validator.validate(Data(bytes[split...]))
                #expect((both && validator.isComplete) == valid, "\(name) split at \(split)")
            }
            // Byte by byte, the first false must come exactly at the offending byte.
            var validator = WebSocketUTF8Validator()
            let firstFailure = bytes.indices.first { !validator.validate(Data([bytes[$0]])) }
            #expect(firstFailure == failIndex, "\(name): failed at \(String(describing: firstFailure))")
        }
    }
}
