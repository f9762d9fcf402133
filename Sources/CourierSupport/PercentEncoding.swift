/// Percent-escaping for query strings and `application/x-www-form-urlencoded` bodies.
///
/// Only RFC 3986 unreserved characters (`A–Z a–z 0–9 - . _ ~`) and `?` and `/` are left as they
/// are; RFC 3986 allows those two in a query and servers read them literally. Everything else is
/// escaped as UTF-8 bytes with upper-case hex: the delimiters `& = + # [ ] : @ ! $ ' ( ) * , ;`,
/// space (always `%20`, never `+`, so a literal `+` is never read back as a space), `%` itself,
/// controls and every non-ASCII byte.
package enum PercentEncoding {
    /// Escapes a query-string name or value.
    package static func escapeQueryComponent(_ string: String) -> String {
        escape(string)
    }

    /// Escapes a name or value for an `application/x-www-form-urlencoded` body.
    ///
    /// The set is the same as for queries, so a body and a query encode the same parameters identically.
    package static func escapeFormComponent(_ string: String) -> String {
        escape(string)
    }

    /// Joins `name=value` pairs with `&`, escaping each name and value.
    package static func query(_ pairs: [(name: String, value: String)]) -> String {
        pairs.map { escapeQueryComponent($0.name) + "=" + escapeQueryComponent($0.value) }.joined(separator: "&")
    }

    /// Whether `byte` may appear unescaped.
    @inline(__always)
    package static func isUnescaped(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "?"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    private static func escape(_ string: String) -> String {
        let utf8 = string.utf8
        guard utf8.contains(where: { !isUnescaped($0) }) else { return string }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if isUnescaped(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hexDigits[Int(byte >> 4)])
                bytes.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
