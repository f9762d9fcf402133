import Foundation

// Courier keeps its own IANA charset table rather than asking CoreFoundation, so a `charset`
// parameter maps to the same `String.Encoding` on Linux and Apple platforms.
//
// Checked on Linux (Swift 6.3.1) with `String(data:encoding:)`:
// - EUC-JP (`.japaneseEUC`) cannot be converted at all (every input gives nil). It stays in the
//   table so an `euc-jp` body fails with a clear error instead of falling back to ISO-8859-1.
// - Mac OS Roman (`.macOSRoman`) decodes ASCII correctly but maps bytes 0x80–0xFF to the wrong
//   characters (0x80 becomes U+00A0, not "Ä"). It stays so the mapping matches Apple platforms.
// - All the others decode correctly; UTF-16 and UTF-32 without a byte-order mark are read
//   big-endian, as RFC 2781 says.

extension String.Encoding {
    /// The encoding for an IANA charset name such as `"utf-8"` or `"ISO-8859-1"`, or `nil` if Courier does not know it.
    ///
    /// The name is compared case-insensitively, surrounding whitespace and quotes are ignored, and
    /// common aliases (`utf8`, `latin1`, `ascii`, `cp1252`, `sjis`, `x-mac-roman`, …) are accepted.
    package init?(ianaCharsetName name: String) {
        let key = name.trimmingCharacters(in: CharacterSet.whitespaces.union(CharacterSet(charactersIn: "\"'"))).lowercased()
        guard let encoding = Self.ianaTable[key] else { return nil }
        self = encoding
    }

    /// The preferred IANA charset name for this encoding, for a `Content-Type` `charset` parameter.
    package var ianaCharsetName: String? {
        Self.preferredNames[self]
    }

    private static let preferredNames: [String.Encoding: String] = [
        .utf8: "utf-8",
        .ascii: "us-ascii",
        .isoLatin1: "iso-8859-1",
        .isoLatin2: "iso-8859-2",
        .utf16: "utf-16",
        .utf16BigEndian: "utf-16be",
        .utf16LittleEndian: "utf-16le",
        .utf32: "utf-32",
        .utf32BigEndian: "utf-32be",
        .utf32LittleEndian: "utf-32le",
        .windowsCP1250: "windows-1250",
        .windowsCP1251: "windows-1251",
        .windowsCP1252: "windows-1252",
        .windowsCP1253: "windows-1253",
        .windowsCP1254: "windows-1254",
        .shiftJIS: "shift_jis",
        .japaneseEUC: "euc-jp",
        .iso2022JP: "iso-2022-jp",
        .macOSRoman: "macintosh",
    ]

    private static let ianaTable: [String: String.Encoding] = {
        let aliases: [(String.Encoding, [String])] = [
            (.utf8, ["utf-8", "utf8", "unicode-1-1-utf-8", "unicode-2-0-utf-8", "x-unicode20utf8"]),
            (.ascii, ["us-ascii", "ascii", "ansi_x3.4-1968", "ansi_x3.4-1986", "iso-ir-6", "iso646-us", "us", "ibm367", "cp367", "csascii"]),
            (
                .isoLatin1,
                ["iso-8859-1", "iso8859-1", "iso_8859-1", "iso_8859-1:1987", "latin1", "l1", "iso-ir-100", "ibm819", "cp819", "csisolatin1"]
            ),
            (.isoLatin2, ["iso-8859-2", "iso8859-2", "iso_8859-2", "iso_8859-2:1987", "latin2", "l2", "iso-ir-101", "csisolatin2"]),
            (.utf16, ["utf-16", "utf16", "unicode", "csunicode"]),
            (.utf16BigEndian, ["utf-16be", "utf16be", "unicodefffe"]),
            (.utf16LittleEndian, ["utf-16le", "utf16le", "unicodefeff"]),
            (.utf32, ["utf-32", "utf32"]),
            (.utf32BigEndian, ["utf-32be", "utf32be"]),
            (.utf32LittleEndian, ["utf-32le", "utf32le"]),
            (.windowsCP1250, ["windows-1250", "cp1250", "x-cp1250"]),
            (.windowsCP1251, ["windows-1251", "cp1251", "x-cp1251"]),
            (.windowsCP1252, ["windows-1252", "cp1252", "x-cp1252"]),
            (.windowsCP1253, ["windows-1253", "cp1253", "x-cp1253"]),
            (.windowsCP1254, ["windows-1254", "cp1254", "x-cp1254"]),
            (.shiftJIS, ["shift_jis", "shift-jis", "sjis", "x-sjis", "ms_kanji", "csshiftjis"]),
            (.japaneseEUC, ["euc-jp", "eucjp", "x-euc-jp", "extended_unix_code_packed_format_for_japanese", "cseucpkdfmtjapanese"]),
            (.iso2022JP, ["iso-2022-jp", "csiso2022jp"]),
            (.macOSRoman, ["macintosh", "mac", "x-mac-roman", "macroman", "csmacintosh"]),
        ]
        var table: [String: String.Encoding] = [:]
        for (encoding, names) in aliases {
            for name in names { table[name] = encoding }
        }
        return table
    }()
}
