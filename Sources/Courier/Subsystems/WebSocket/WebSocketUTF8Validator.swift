import Foundation

/// Validates UTF-8 incrementally (RFC 3629 §4, as RFC 6455 §8.1 requires for text), across chunks
/// split anywhere, even inside a code point, and stops at the first byte that cannot begin or
/// continue a well-formed sequence: overlong forms, surrogates (U+D800–U+DFFF) and code points
/// above U+10FFFF fail at the byte that rules them out, not at the end of the message.
struct WebSocketUTF8Validator: Sendable, Hashable {
    /// Continuation bytes still expected for the current code point.
    private var remaining = 0
    /// The range the next continuation byte must fall in; narrower than 0x80–0xBF right after
    /// E0, ED, F0 and F4, which is how overlongs, surrogates and values above U+10FFFF are excluded.
    private var lower: UInt8 = 0x80
    private var upper: UInt8 = 0xBF

    /// Whether the input so far ends on a code point boundary (a complete text).
    var isComplete: Bool { remaining == 0 }

    /// Checks `bytes` after everything fed before; false at the first invalid byte (the validator
    /// is then unusable and must be discarded).
    mutating func validate(_ bytes: Data) -> Bool {
        bytes.withUnsafeBytes { validate($0) }
    }

    /// Checks `buffer` after everything fed before.
    mutating func validate(_ buffer: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        let count = buffer.count
        while index < count {
            if remaining == 0 {
                // ASCII runs, eight bytes at a time.
                while index + 8 <= count, buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    index += 8
                }
                guard index < count else { return true }
                let byte = buffer[index]
                index += 1
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: begin(1, 0x80, 0xBF)
                case 0xE0: begin(2, 0xA0, 0xBF)
                case 0xE1...0xEC, 0xEE...0xEF: begin(2, 0x80, 0xBF)
                case 0xED: begin(2, 0x80, 0x9F)
                case 0xF0: begin(3, 0x90, 0xBF)
                case 0xF1...0xF3: begin(3, 0x80, 0xBF)
                case 0xF4: begin(3, 0x80, 0x8F)
                default: return false
                }
            } else {
                let byte = buffer[index]
                index += 1
                guard byte >= lower && byte <= upper else { return false }
                remaining -= 1
                lower = 0x80
                upper = 0xBF
            }
        }
        return true
    }

    private mutating func begin(_ continuationBytes: Int, _ lower: UInt8, _ upper: UInt8) {
        remaining = continuationBytes
        self.lower = lower
        self.upper = upper
    }
}
