import Courier
import Foundation

/// Pretty-prints JSON text for people: two-space indentation and, on a terminal, ANSI colours.
///
/// It re-indents the original tokens instead of re-serialising a parsed value, so key order,
/// number spelling (large integers, `1.50`) and string escapes are exactly what the server sent.
/// The text is first checked with Courier's `JSON(parsing:)`; invalid JSON is not formatted.
enum JSONColouring {
    /// ANSI colours for each kind of token.
    struct Palette: Sendable {
        var key: String
        var string: String
        var number: String
        var literal: String
        var reset: String

        /// Bold blue keys, green strings, cyan numbers, magenta `true`/`false`/`null`.
        static let ansi = Palette(
            key: "\u{1B}[1;34m", string: "\u{1B}[32m", number: "\u{1B}[36m",
            literal: "\u{1B}[35m", reset: "\u{1B}[0m")
        /// No colours.
        static let none = Palette(key: "", string: "", number: "", literal: "", reset: "")
    }

    /// The formatted text (ending with a newline), or nil if `data` is not JSON.
    static func format(_ data: Data, palette: Palette = .none, indentWidth: Int = 2) -> String? {
        formattedBytes(data, palette: palette, indentWidth: indentWidth).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The formatted text as UTF-8 bytes (ending with a newline), or nil if `data` is not JSON.
    /// What a terminal gets: no `String` in between, so the body is held about twice, not four times.
    static func formattedBytes(_ data: Data, palette: Palette = .none, indentWidth: Int = 2) -> [UInt8]? {
        guard (try? JSON(parsing: data)) != nil else { return nil }
        return reindentedBytes(Array(data), palette: palette, indentWidth: indentWidth)
    }

    /// Whether a `Content-Type` value names JSON (`application/json`, `application/problem+json`, ...).
    static func isJSONContentType(_ contentType: String?) -> Bool {
        guard let type = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() else {
            return false
        }
        return type == "application/json" || type.hasSuffix("+json") || type == "text/json"
    }

    /// Re-indents already-valid JSON bytes, as UTF-8 bytes.
    static func reindentedBytes(_ bytes: [UInt8], palette: Palette, indentWidth: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        var depth = 0
        var containers: [UInt8] = []
        var expectingKey = false
        var index = 0

        func emit(_ text: String) { out.append(contentsOf: text.utf8) }
        func newline() {
            out.append(0x0A)
            out.append(contentsOf: repeatElement(0x20, count: depth * indentWidth))
        }
        func skipSpace(from start: Int) -> Int {
            var position = start
            while position < bytes.count, isSpace(bytes[position]) { position += 1 }
            return position
        }

        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case _ where isSpace(byte):
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                let next = skipSpace(from: index + 1)
                if next < bytes.count, bytes[next] == close {
                    out.append(byte)
                    out.append(close)
                    index = next + 1
                    continue
                }
                out.append(byte)
                containers.append(byte)
                depth += 1
                expectingKey = byte == UInt8(ascii: "{")
                newline()
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth = max(0, depth - 1)
                _ = containers.popLast()
                newline()
                out.append(byte)
                index += 1
            case UInt8(ascii: ","):
                out.append(byte)
                newline()
                expectingKey = containers.last == UInt8(ascii: "{")
                index += 1
            case UInt8(ascii: ":"):
                emit(": ")
                expectingKey = false
                index += 1
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
                    end += bytes[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                end = min(end, bytes.count - 1)
                emit(expectingKey ? palette.key : palette.string)
                out.append(contentsOf: bytes[index...end])
                emit(palette.reset)
                index = end + 1
            default:
                var end = index
                while end < bytes.count, !isSpace(bytes[end]), !",:]}".utf8.contains(bytes[end]) { end += 1 }
                let isNumber = byte == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                emit(isNumber ? palette.number : palette.literal)
                out.append(contentsOf: bytes[index..<end])
                emit(palette.reset)
                index = max(end, index + 1)
            }
        }
        out.append(0x0A)
        return out
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
