import Foundation

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme and its parameters.
struct HTTPChallenge: Equatable {
    /// The scheme, lower-cased (`basic`, `digest`).
    let scheme: String
    /// The parameters, names lower-cased, values unquoted.
    var parameters: [String: String] = [:]

    /// Every challenge in `field` (several fields joined with ", " work too), in order; what
    /// cannot be read is skipped rather than guessed at.
    static func parse(_ field: String) -> [HTTPChallenge] {
        var scanner = ChallengeScanner(Array(field.utf8))
        var challenges: [HTTPChallenge] = []
        while scanner.skipSeparators() {
            guard let token = scanner.token() else {
                scanner.skipOne()
                continue
            }
            scanner.skipSpaces()
            if scanner.peek == UInt8(ascii: "=") {
                scanner.skipOne()
                if scanner.peek == UInt8(ascii: "=") || scanner.atEnd || scanner.peek == UInt8(ascii: ",") {
                    // A token68 (`Basic dXNlcg==`) or an empty value: not a parameter this code needs.
                    scanner.skipToComma()
                    continue
                }
                scanner.skipSpaces()
                let value = scanner.quotedString() ?? scanner.token() ?? ""
                if !challenges.isEmpty { challenges[challenges.count - 1].parameters[token.lowercased()] = value }
            } else {
                challenges.append(HTTPChallenge(scheme: token.lowercased()))
            }
        }
        return challenges
    }
}

/// Reads the pieces of a `WWW-Authenticate` field.
private struct ChallengeScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[index] }

    mutating func skipOne() { index += 1 }

    mutating func skipSpaces() {
        while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") { index += 1 }
    }

    /// Skips spaces and commas; false at the end.
    mutating func skipSeparators() -> Bool {
        while let byte = peek, byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: ",") { index += 1 }
        return !atEnd
    }

    mutating func skipToComma() {
        while let byte = peek, byte != UInt8(ascii: ",") { index += 1 }
    }

    /// An RFC 9110 token, or nil when none starts here.
    mutating func token() -> String? {
        let start = index
        while let byte = peek, WireSyntax.isTokenByte(byte) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// A quoted-string without its quotes and escapes, or nil when none starts here.
    mutating func quotedString() -> String? {
        guard peek == UInt8(ascii: "\"") else { return nil }
        index += 1
        var value: [UInt8] = []
        while let byte = peek {
            index += 1
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\"), let escaped = peek {
                index += 1
                value.append(escaped)
            } else {
                value.append(byte)
            }
        }
        return String(decoding: value, as: UTF8.self)
    }
}
