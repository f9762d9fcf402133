import Foundation

/// A strict RFC 8259 parser from UTF-8 bytes to ``JSON``.
///
/// It works on the raw buffer with a byte index, validates UTF-8 only inside strings (the only
/// place non-ASCII bytes may appear) and builds strings without escapes straight from the input.
struct JSONParser {
    /// How deeply arrays and objects may nest before parsing fails.
    static let maximumDepth = 512

    /// The reason and byte offset of a failure, before line and column are worked out.
    struct Failure: Error {
        let reason: String
        let offset: Int
    }

    /// Parses `data`, reporting failures as `.serializationFailed` with a ``JSON/ParseError`` underneath.
    static func parse(_ data: Data) throws(CourierError) -> JSON {
        let outcome: Result<JSON, Failure> = data.withUnsafeBytes { raw in
            guard let base = raw.bindMemory(to: UInt8.self).baseAddress, !raw.isEmpty else {
                return .failure(Failure(reason: "the input is empty; expected a JSON value", offset: 0))
            }
            var parser = JSONParser(base: base, count: raw.count)
            return Result { () throws(Failure) in try parser.parseDocument() }
        }
        switch outcome {
        case .success(let value):
            return value
        case .failure(let failure):
            let error = locate(failure, in: data)
            throw CourierError(.serializationFailed, "Invalid JSON at \(error)", underlyingError: error)
        }
    }

    /// Turns a byte offset into a one-based line and a column counted in Unicode scalars.
    static func locate(_ failure: Failure, in data: Data) -> JSON.ParseError {
        var line = 1
        var column = 1
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let start = data.starts(with: bom) ? 3 : 0
        var index = data.startIndex + start
        let stop = data.startIndex + min(failure.offset, data.count)
        while index < stop {
            let byte = data[index]
            if byte == UInt8(ascii: "\n") {
                line += 1
                column = 1
            } else if byte & 0xC0 != 0x80 {
                column += 1
            }
            index += 1
        }
        return JSON.ParseError(reason: failure.reason, offset: failure.offset, line: line, column: column)
    }

    private let base: UnsafePointer<UInt8>
    private let end: Int
    private var index = 0
    private var depth = 0
    /// Reused for strings that contain escapes.
    private var scratch: [UInt8] = []
    /// Elements of the arrays being parsed, innermost last; each array is built once at its final size.
    private var elementStack: [JSON] = []
    /// Members of the objects being parsed, innermost last; each object is built once at its final size.
    private var memberStack: [(key: String, value: JSON)] = []

    private init(base: UnsafePointer<UInt8>, count: Int) {
        self.base = base
        self.end = count
    }

    // MARK: Structure

    private mutating func parseDocument() throws(Failure) -> JSON {
        if end >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF {
            index = 3
        } else if end >= 2, (base[0] == 0xFE && base[1] == 0xFF) || (base[0] == 0xFF && base[1] == 0xFE) {
            throw Failure(reason: "the input starts with a UTF-16 or UTF-32 byte-order mark; JSON text must be UTF-8", offset: 0)
        }
        let value = try parseValue()
        skipWhitespace()
        if index < end {
            throw Failure(reason: "unexpected \(describe(index)) after the end of the JSON value", offset: index)
        }
        return value
    }

    private mutating func parseValue() throws(Failure) -> JSON {
        skipWhitespace()
        guard index < end else {
            throw Failure(reason: "unexpected end of input; expected a value", offset: index)
        }
        switch base[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default:
            throw Failure(reason: "unexpected \(describe(index)); expected a value", offset: index)
        }
    }

    private mutating func enterContainer() throws(Failure) {
        depth += 1
        if depth > Self.maximumDepth {
            throw Failure(reason: "arrays and objects nest deeper than \(Self.maximumDepth) levels", offset: index)
        }
        index += 1
    }

    private mutating func parseArray() throws(Failure) -> JSON {
        try enterContainer()
        skipWhitespace()
        if index < end, base[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array([])
        }
        let first = elementStack.count
        while true {
            let element = try parseValue()
            elementStack.append(element)
            skipWhitespace()
            guard index < end else {
                throw Failure(reason: "unexpected end of input inside an array; expected ',' or ']'", offset: index)
            }
            let byte = base[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "]") { break }
            throw Failure(reason: "expected ',' or ']' after an array element, found \(describe(index - 1))", offset: index - 1)
        }
        depth -= 1
        let elements = Array(elementStack[first...])
        elementStack.removeSubrange(first...)
        return .array(elements)
    }

    private mutating func parseObject() throws(Failure) -> JSON {
        try enterContainer()
        skipWhitespace()
        if index < end, base[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object([:])
        }
        let first = memberStack.count
        while true {
            skipWhitespace()
            guard index < end, base[index] == UInt8(ascii: "\"") else {
                let found = index < end ? describe(index) : "the end of input"
                throw Failure(reason: "expected a string key in an object, found \(found)", offset: index)
            }
            let key = try parseString()
            skipWhitespace()
            guard index < end, base[index] == UInt8(ascii: ":") else {
                let found = index < end ? describe(index) : "the end of input"
                throw Failure(reason: "expected ':' after the object key \"\(key)\", found \(found)", offset: index)
            }
            index += 1
            let value = try parseValue()
            memberStack.append((key, value))
            skipWhitespace()
            guard index < end else {
                throw Failure(reason: "unexpected end of input inside an object; expected ',' or '}'", offset: index)
            }
            let byte = base[index]
            index += 1
            if byte == UInt8(ascii: ",") { continue }
            if byte == UInt8(ascii: "}") { break }
            throw Failure(reason: "expected ',' or '}' after an object member, found \(describe(index - 1))", offset: index - 1)
        }
        depth -= 1
        var members = [String: JSON](minimumCapacity: memberStack.count - first)
        for position in first..<memberStack.count {
            // Assignment, not uniqueKeysWithValues: a repeated key keeps its last value.
            members[memberStack[position].key] = memberStack[position].value
        }
        memberStack.removeSubrange(first...)
        return .object(members)
    }

    private mutating func skipWhitespace() {
        while index < end {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(Failure) {
        let length = literal.utf8CodeUnitCount
        let bytes = literal.utf8Start
        for offset in 0..<length where index + offset >= end || base[index + offset] != bytes[offset] {
            throw Failure(reason: "invalid literal; expected '\(literal)'", offset: index)
        }
        index += length
    }

    /// Names the byte at `position` for an error message: `'x'` for printable ASCII, `byte 0xNN` otherwise.
    private func describe(_ position: Int) -> String {
        let byte = base[position]
        if byte >= 0x21, byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        return "byte 0x\(String(byte, radix: 16, uppercase: true).leftPadded(to: 2))"
    }

    // MARK: Strings

    /// Parses a string whose opening quote is at `index`.
    private mutating func parseString() throws(Failure) -> String {
        let open = index
        index += 1
        let start = index
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                let string = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
                index += 1
                return string
            } else if byte == UInt8(ascii: "\\") {
                return try parseEscapedString(open: open, start: start)
            } else if byte < 0x20 {
                throw Failure(reason: "unescaped control character \(describe(index)) in a string", offset: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw Failure(reason: "unterminated string starting at byte offset \(open)", offset: open)
    }

    /// Finishes a string that contains escapes, building it in `scratch`.
    private mutating func parseEscapedString(open: Int, start: Int) throws(Failure) -> String {
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(start: base + start, count: index - start))
        while index < end {
            let byte = base[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: scratch, as: UTF8.self)
            } else if byte == UInt8(ascii: "\\") {
                try parseEscape()
            } else if byte < 0x20 {
                throw Failure(reason: "unescaped control character \(describe(index)) in a string", offset: index)
            } else if byte < 0x80 {
                scratch.append(byte)
                index += 1
            } else {
                let sequenceStart = index
                try skipUTF8Sequence()
                scratch.append(contentsOf: UnsafeBufferPointer(start: base + sequenceStart, count: index - sequenceStart))
            }
        }
        throw Failure(reason: "unterminated string starting at byte offset \(open)", offset: open)
    }

    /// Parses the escape whose backslash is at `index` and appends its UTF-8 to `scratch`.
    private mutating func parseEscape() throws(Failure) {
        let escapeStart = index
        guard index + 1 < end else {
            throw Failure(reason: "unterminated escape sequence at the end of input", offset: escapeStart)
        }
        let code = base[index + 1]
        index += 2
        let simple: UInt8
        switch code {
        case UInt8(ascii: "\""): simple = UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): simple = UInt8(ascii: "\\")
        case UInt8(ascii: "/"): simple = UInt8(ascii: "/")
        case UInt8(ascii: "b"): simple = 0x08
        case UInt8(ascii: "f"): simple = 0x0C
        case UInt8(ascii: "n"): simple = 0x0A
        case UInt8(ascii: "r"): simple = 0x0D
        case UInt8(ascii: "t"): simple = 0x09
        case UInt8(ascii: "u"):
            let unit = try parseHex4(escapeStart: escapeStart)
            try appendScalar(forUTF16Unit: unit, escapeStart: escapeStart)
            return
        default:
            throw Failure(reason: "invalid escape sequence '\\\(Character(Unicode.Scalar(code)))' in a string", offset: escapeStart)
        }
        scratch.append(simple)
    }

    private mutating func appendScalar(forUTF16Unit unit: UInt16, escapeStart: Int) throws(Failure) {
        var value = UInt32(unit)
        switch unit {
        case 0xD800...0xDBFF:
            guard index + 1 < end, base[index] == UInt8(ascii: "\\"), base[index + 1] == UInt8(ascii: "u") else {
                throw Failure(reason: "unpaired high surrogate \\u\(hex(unit)) in a string", offset: escapeStart)
            }
            let lowStart = index
            index += 2
            let low = try parseHex4(escapeStart: lowStart)
            guard (0xDC00...0xDFFF).contains(low) else {
                throw Failure(reason: "high surrogate \\u\(hex(unit)) is followed by \\u\(hex(low)), not a low surrogate", offset: escapeStart)
            }
            value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
        case 0xDC00...0xDFFF:
            throw Failure(reason: "unpaired low surrogate \\u\(hex(unit)) in a string", offset: escapeStart)
        default:
            break
        }
        // Surrogates were handled above, so every remaining value is a valid scalar.
        guard let scalar = Unicode.Scalar(value) else {
            throw Failure(reason: "invalid Unicode scalar U+\(String(value, radix: 16, uppercase: true))", offset: escapeStart)
        }
        appendUTF8(scalar.value)
    }

    private mutating func appendUTF8(_ value: UInt32) {
        switch value {
        case 0..<0x80:
            scratch.append(UInt8(value))
        case 0x80..<0x800:
            scratch.append(UInt8(0xC0 | value >> 6))
            scratch.append(UInt8(0x80 | value & 0x3F))
        case 0x800..<0x10000:
            scratch.append(UInt8(0xE0 | value >> 12))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        default:
            scratch.append(UInt8(0xF0 | value >> 18))
            scratch.append(UInt8(0x80 | value >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | value >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | value & 0x3F))
        }
    }

    private mutating func parseHex4(escapeStart: Int) throws(Failure) -> UInt16 {
        guard index + 4 <= end else {
            throw Failure(reason: "incomplete \\u escape: expected four hexadecimal digits", offset: escapeStart)
        }
        var value: UInt16 = 0
        for offset in 0..<4 {
            let byte = base[index + offset]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default:
                throw Failure(reason: "invalid \\u escape: \(describe(index + offset)) is not a hexadecimal digit", offset: escapeStart)
            }
            value = value << 4 | UInt16(digit)
        }
        index += 4
        return value
    }

    private func hex(_ unit: UInt16) -> String {
        String(unit, radix: 16, uppercase: true).leftPadded(to: 4)
    }

    /// Checks the multi-byte UTF-8 sequence starting at `index` and moves past it.
    private mutating func skipUTF8Sequence() throws(Failure) {
        let lead = base[index]
        let length: Int
        var secondRange: ClosedRange<UInt8> = 0x80...0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; secondRange = 0xA0...0xBF
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; secondRange = 0x80...0x9F
        case 0xF0: length = 4; secondRange = 0x90...0xBF
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; secondRange = 0x80...0x8F
        default: throw Failure(reason: "invalid UTF-8: \(describe(index)) cannot start a character", offset: index)
        }
        guard index + length <= end else {
            throw Failure(reason: "invalid UTF-8: truncated sequence starting with \(describe(index))", offset: index)
        }
        guard secondRange.contains(base[index + 1]) else {
            throw Failure(reason: "invalid UTF-8: \(describe(index + 1)) cannot follow \(describe(index))", offset: index + 1)
        }
        for offset in 2..<length where base[index + offset] & 0xC0 != 0x80 {
            throw Failure(reason: "invalid UTF-8: \(describe(index + offset)) is not a continuation byte", offset: index + offset)
        }
        index += length
    }

    // MARK: Numbers

    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    private func isDigit(_ position: Int) -> Bool {
        position < end && base[position] &- UInt8(ascii: "0") < 10
    }

    /// Parses a number per the RFC 8259 grammar, converting common shapes without leaving the buffer.
    private mutating func parseNumber() throws(Failure) -> Double {
        let start = index
        let negative = base[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard isDigit(index) else {
            throw Failure(reason: "expected a digit after '-' in a number", offset: index)
        }
        var digits = DigitAccumulator()
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) {
                throw Failure(reason: "leading zeros are not allowed in numbers", offset: start)
            }
        } else {
            while isDigit(index) { digits.add(base[index]); index += 1 }
        }
        if index < end, base[index] == UInt8(ascii: ".") {
            index += 1
            guard isDigit(index) else {
                throw Failure(reason: "expected a digit after the decimal point in a number", offset: index)
            }
            while isDigit(index) {
                digits.add(base[index])
                if digits.exact { digits.fractionDigits += 1 }
                index += 1
            }
        }
        var exponent = 0
        if index < end, base[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            var exponentNegative = false
            if index < end, base[index] == UInt8(ascii: "-") || base[index] == UInt8(ascii: "+") {
                exponentNegative = base[index] == UInt8(ascii: "-")
                index += 1
            }
            guard isDigit(index) else {
                throw Failure(reason: "expected a digit in the exponent of a number", offset: index)
            }
            while isDigit(index) {
                // Saturate: anything this large is out of range or zero either way.
                if exponent < 100_000 { exponent = exponent * 10 + Int(base[index] &- UInt8(ascii: "0")) }
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }

        let scale = exponent - digits.fractionDigits
        if digits.exact, digits.mantissa <= 1 << 53, (-22...22).contains(scale) {
            // Both operands are exact doubles, so one IEEE operation rounds correctly (Clinger's fast path).
            let magnitude = Double(digits.mantissa)
            let value = scale < 0 ? magnitude / Self.exactPowersOfTen[-scale] : magnitude * Self.exactPowersOfTen[scale]
            return negative ? -value : value
        }
        let text = String(decoding: UnsafeBufferPointer(start: base + start, count: index - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            throw Failure(reason: "the number \(text) is out of range for a 64-bit floating-point value", offset: start)
        }
        return value
    }
}

/// Collects up to 19 significant decimal digits of a number into an integer mantissa.
private struct DigitAccumulator {
    var mantissa: UInt64 = 0
    var significantDigits = 0
    var fractionDigits = 0
    /// False once a digit did not fit, so the fast conversion path cannot be used.
    var exact = true

    mutating func add(_ byte: UInt8) {
        if significantDigits < 19 {
            mantissa = mantissa &* 10 &+ UInt64(byte &- UInt8(ascii: "0"))
            if mantissa != 0 { significantDigits += 1 }
        } else {
            exact = false
        }
    }
}

extension String {
    /// The string with leading zeros added up to `width` characters.
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
