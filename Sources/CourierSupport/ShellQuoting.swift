import Foundation

/// Quoting for POSIX `sh`, used to write commands that can be pasted into a terminal.
package enum Shell {
    /// `value` as one single-quoted word: everything inside is literal, and a single quote
    /// becomes `'\''` (close, escaped quote, reopen).
    package static func quote(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// `value` as it is when every character is plain (letters, digits and `_@%+=:,./-`),
    /// otherwise single-quoted like ``quote(_:)``.
    package static func word(_ value: String) -> String {
        let isPlain =
            !value.isEmpty
            && value.unicodeScalars.allSatisfy { scalar in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "_@%+=:,./-".unicodeScalars.contains(scalar))
            }
        return isPlain ? value : quote(value)
    }

    /// The quoted argument for `printf '%b'` that prints exactly `data`: printable ASCII as
    /// itself, every other byte (and `\`, `%`, `'`) as a `\0ooo` octal escape, which POSIX
    /// `printf` expands in `%b` arguments. (Using `%b` keeps a body starting with `-` from being
    /// read as an option.)
    package static func printfArgument(for data: Data) -> String {
        var argument = "'"
        argument.reserveCapacity(data.count * 2 + 2)
        for byte in data {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "%"), byte != UInt8(ascii: "'") {
                argument.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let octal = String(byte, radix: 8)
                argument += "\\0" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return argument + "'"
    }
}
