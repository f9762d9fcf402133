import Foundation

/// A `-H 'Name: value'` header, checked to be valid HTTP.
struct HeaderField: Equatable, Sendable {
    /// The field name, as given.
    let name: String
    /// The value, without surrounding white space.
    let value: String

    /// `Name:` with nothing after it: curl's way to remove a header (see ``removes``).
    private(set) var removes = false

    init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// Parses `Name: value`, `Name:` (the header is removed, as in curl) or `Name;` (sent with an
    /// empty value). The name must be an HTTP token; the value may not contain CR or LF (which
    /// would let it inject further headers).
    static func parse(_ text: String) throws(UsageError) -> HeaderField {
        if text.hasSuffix(";"), !text.contains(":") {
            let name = String(text.dropLast())
            guard Token.isToken(name) else { throw UsageError("bad header name '\(name)' in '\(text)' (expected 'Name: value')") }
            return HeaderField(name: name, value: "")
        }
        guard let colon = text.firstIndex(of: ":") else {
            throw UsageError("bad header '\(text)' (expected 'Name: value')")
        }
        let name = String(text[..<colon])
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(Token.isTokenScalar) else {
            throw UsageError("bad header name '\(name)' in '\(text)' (expected 'Name: value')")
        }
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            throw UsageError("header '\(name)' contains a line break")
        }
        var field = HeaderField(name: name, value: value)
        field.removes = value.isEmpty && text[text.index(after: colon)...].allSatisfy { $0 == " " || $0 == "\t" }
        return field
    }
}

/// RFC 9110 tokens: header names and methods.
enum Token {
    /// Whether `scalar` may appear in a token.
    static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        guard scalar.isASCII else { return false }
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9": return true
        default: return "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
        }
    }

    /// Whether `text` is a non-empty token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy(isTokenScalar)
    }
}
