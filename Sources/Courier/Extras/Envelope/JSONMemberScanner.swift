import Foundation

/// Finds the exact bytes of one top-level member of a JSON object, so the payload of an envelope
/// can be decoded from the original text: numbers keep their full precision (``JSON`` holds them
/// as `Double`, which would round 64-bit identifiers) and a custom decoder sees what the server sent.
///
/// Only call it on text ``JSON`` has already parsed: it skips values without checking them.
enum JSONMemberScanner {
    /// The bytes of the value of member `name` (the last one if repeated, as ``JSON`` does), or
    /// `nil` when `data` is not an object or has no such member.
    static func value(of name: String, in data: Data) -> Data? {
        let bytes = [UInt8](data)
        var index = 0
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
        skipWhitespace(bytes, &index)
        guard index < bytes.count, bytes[index] == UInt8(ascii: "{") else { return nil }
        index += 1
        var found: Range<Int>?
        while true {
            skipWhitespace(bytes, &index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return found.map { Data(bytes[$0]) } }
            let keyStart = index
            skipString(bytes, &index)
            let key = decodeKey(bytes[keyStart..<min(index, bytes.count)])
            skipWhitespace(bytes, &index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return found.map { Data(bytes[$0]) } }
            index += 1
            skipWhitespace(bytes, &index)
            let valueStart = index
            skipValue(bytes, &index)
            if key == name { found = valueStart..<min(index, bytes.count) }
            skipWhitespace(bytes, &index)
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") else { return found.map { Data(bytes[$0]) } }
            index += 1
        }
    }

    private static func decodeKey(_ quoted: ArraySlice<UInt8>) -> String? {
        guard quoted.count >= 2 else { return nil }
        if !quoted.contains(UInt8(ascii: "\\")) {
            return String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self)
        }
        return (try? JSON(parsing: Data(quoted)))?.stringValue
    }

    private static func skipWhitespace(_ bytes: [UInt8], _ index: inout Int) {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    /// Moves past a string starting at `index` (on its opening quote).
    private static func skipString(_ bytes: [UInt8], _ index: inout Int) {
        index += 1
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): index += 1; return
            default: index += 1
            }
        }
    }

    /// Moves past any value starting at `index`.
    private static func skipValue(_ bytes: [UInt8], _ index: inout Int) {
        guard index < bytes.count else { return }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            skipString(bytes, &index)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    skipString(bytes, &index)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                default:
                    break
                }
                index += 1
                if depth == 0 { return }
            }
        default:
            // A number or a literal runs up to the next delimiter.
            while index < bytes.count, ![UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) {
                index += 1
            }
        }
    }
}
