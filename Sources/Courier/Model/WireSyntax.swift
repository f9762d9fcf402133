import Foundation

/// The HTTP syntax rules a request must follow before any byte of it is sent (RFC 9110 §5.6.2,
/// §5.5, §9.1), checked once by the engine for every transport: a method or header name that is
/// not a token, or a header value with CR, LF or NUL, would let a caller's (or a server's, through
/// cookies) text rewrite the request line or add headers. Also the list syntax of field values
/// that several readers share (quoted strings in comma- and semicolon-separated values).
enum WireSyntax {
    /// Whether `text` is a non-empty RFC 9110 token (`tchar`: ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``).
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `byte` is a `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "!"), UInt8(ascii: "#")...UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"),
            UInt8(ascii: "."), UInt8(ascii: "^")...UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Whether `value` can be sent as a field value: no CR, LF or NUL (RFC 9110 §5.5 calls them
    /// invalid and dangerous); HTAB, visible characters and obs-text (non-ASCII) are allowed.
    static func isFieldValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 }
    }

    /// Splits a field value on `separator` except inside quoted strings (RFC 9110 §5.6.4, backslash
    /// escapes kept), so `a="x,y", b` is two parts: lists (`Accept`, `Alt-Svc`) and parameters alike.
    static func split(_ value: Substring, outsideQuotesOn separator: Character) -> [Substring] {
        var parts: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        var index = value.startIndex
        while index < value.endIndex {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == separator, !quoted {
                parts.append(value[start..<index])
                start = value.index(after: index)
            }
            index = value.index(after: index)
        }
        parts.append(value[start...])
        return parts
    }

    /// Throws `.invalidRequest` naming the first part of the request that is not valid HTTP.
    static func check(method: HTTPMethod, headers: HTTPHeaders, url: URL?) throws(CourierError) {
        guard isToken(method.rawValue) else {
            throw CourierError(.invalidRequest, "The method \(quoted(method.rawValue)) is not a valid HTTP method token; nothing was sent.", url: url)
        }
        for header in headers {
            guard isToken(header.name) else {
                throw CourierError(
                    .invalidRequest, "The header name \(quoted(header.name)) is not a valid HTTP field name; nothing was sent.", url: url)
            }
            guard isFieldValue(header.value) else {
                throw CourierError(.invalidRequest, "The value of header \(header.name) contains CR, LF or NUL; nothing was sent.", url: url)
            }
        }
        // Lines made by HTTPHeaders.append: a field that is not a list must not be repeated
        // (RFC 9110 §5.3), and two of these would leave framing, routing or credentials to each
        // server's reading.
        if headers.count > 1 {
            for name in HTTPHeaders.singleValueFieldNames where headers.values(for: name).count > 1 {
                throw CourierError(
                    .invalidRequest, "The request has more than one \(name) line, a field that takes one value; nothing was sent.", url: url)
            }
        }
    }

    /// `text` in quotes with control characters escaped, so a message never carries a line break.
    static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\r": out += "\\r"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                out += "\\u{\(String(scalar.value, radix: 16))}"
            default:
                out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
