import Foundation

/// A JSON value: what `responseJSON` and `serializingJSON()` produce.
///
/// Read it with the typed accessors and subscripts, which return `nil` rather than trapping
/// when a key or index is absent or the value has another type:
/// `json["user"]?["tags"]?[0]?.stringValue`.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number; JSON does not distinguish integers from other numbers.
    case number(Double)
    /// A string.
    case string(String)
    /// An ordered list of values.
    case array([JSON])
    /// An object; duplicate keys in parsed input keep the last value.
    case object([String: JSON])
}

// MARK: - Accessors

extension JSON {
    /// The string, if this is a `.string`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number, if this is a `.number`.
    public var doubleValue: Double? {
        if case .number(let value) = self { return value }
        return nil
    }

    /// The number as an `Int`, if this is a `.number` holding an integer that `Int` represents exactly.
    public var intValue: Int? {
        if case .number(let value) = self { return Int(exactly: value) }
        return nil
    }

    /// The Boolean, if this is a `.bool`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The elements, if this is an `.array`.
    public var arrayValue: [JSON]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The members, if this is an `.object`.
    public var objectValue: [String: JSON]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is `.null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The member named `key`, or `nil` if this is not an object or has no such member.
    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index`, or `nil` if this is not an array or the index is out of bounds.
    public subscript(index: Int) -> JSON? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }
}

// MARK: - Literals

extension JSON: ExpressibleByNilLiteral {
    /// Creates `.null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSON: ExpressibleByBooleanLiteral {
    /// Creates a `.bool`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSON: ExpressibleByIntegerLiteral {
    /// Creates a `.number`.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
}

extension JSON: ExpressibleByFloatLiteral {
    /// Creates a `.number`.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSON: ExpressibleByStringLiteral {
    /// Creates a `.string`.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSON: ExpressibleByArrayLiteral {
    /// Creates an `.array`.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}

extension JSON: ExpressibleByDictionaryLiteral {
    /// Creates an `.object`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

// MARK: - Parsing

extension JSON {
    /// Parses UTF-8 JSON text (RFC 8259); a leading byte-order mark is skipped.
    ///
    /// Any top-level value is accepted. Failures throw `.serializationFailed` with the line,
    /// column and byte offset in the message and a ``JSON/ParseError`` as the underlying error.
    public init(parsing data: Data) throws(CourierError) {
        self = try JSONParser.parse(data)
    }

    /// Parses JSON text held in a string.
    public init(parsing text: String) throws(CourierError) {
        self = try JSONParser.parse(Data(text.utf8))
    }

    /// Where and why JSON text could not be parsed.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, e.g. `"expected ',' or ']' after an array element, found '}'"`.
        public let reason: String
        /// The zero-based byte offset of the problem in the input.
        public let offset: Int
        /// The one-based line of the problem.
        public let line: Int
        /// The one-based column of the problem, counted in Unicode scalars.
        public let column: Int

        /// `line L, column C (byte offset O): reason`.
        public var description: String {
            "line \(line), column \(column) (byte offset \(offset)): \(reason)"
        }
    }
}

// MARK: - Serialization

extension JSON {
    /// The value as UTF-8 JSON text.
    ///
    /// Integral numbers are written without a fraction (`3`, not `3.0`). JSON has no NaN or
    /// infinity, so non-finite numbers are written as `null`. Pretty printing indents by two spaces.
    public func data(prettyPrinted: Bool = false, sortedKeys: Bool = true) -> Data {
        var writer = JSONWriter(prettyPrinted: prettyPrinted, sortedKeys: sortedKeys)
        writer.write(self, depth: 0)
        return Data(writer.bytes)
    }

    /// Formats a number the way Courier writes JSON and form values: exact integers without `.0`.
    static func format(number value: Double) -> String {
        guard value.isFinite else { return "null" }
        if value == 0 { return value.sign == .minus ? "-0" : "0" }
        if let integer = Int64(exactly: value) { return String(integer) }
        return value.description
    }
}

extension JSON: CustomStringConvertible {
    /// Compact JSON text with sorted keys.
    public var description: String {
        var writer = JSONWriter(prettyPrinted: false, sortedKeys: true)
        writer.write(self, depth: 0)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

/// Writes JSON text into a byte buffer.
private struct JSONWriter {
    let prettyPrinted: Bool
    let sortedKeys: Bool
    var bytes: [UInt8] = []

    init(prettyPrinted: Bool, sortedKeys: Bool) {
        self.prettyPrinted = prettyPrinted
        self.sortedKeys = sortedKeys
        bytes.reserveCapacity(256)
    }

    mutating func write(_ value: JSON, depth: Int) {
        switch value {
        case .null: bytes.append(contentsOf: "null".utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        case .number(let number): bytes.append(contentsOf: JSON.format(number: number).utf8)
        case .string(let string): writeString(string)
        case .array(let elements):
            guard !elements.isEmpty else { return bytes.append(contentsOf: "[]".utf8) }
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1)
                write(element, depth: depth + 1)
            }
            newline(depth: depth)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { return bytes.append(contentsOf: "{}".utf8) }
            bytes.append(UInt8(ascii: "{"))
            let keys = sortedKeys ? members.keys.sorted() : Array(members.keys)
            for (index, key) in keys.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                newline(depth: depth + 1)
                writeString(key)
                bytes.append(UInt8(ascii: ":"))
                if prettyPrinted { bytes.append(UInt8(ascii: " ")) }
                // The key came from `members`, so the lookup cannot miss.
                write(members[key] ?? .null, depth: depth + 1)
            }
            newline(depth: depth)
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private mutating func newline(depth: Int) {
        guard prettyPrinted else { return }
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * 2))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private mutating func writeString(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x00..<0x20:
                bytes.append(contentsOf: "\\u00".utf8)
                bytes.append(Self.hexDigits[Int(byte >> 4)])
                bytes.append(Self.hexDigits[Int(byte & 0x0F)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

// MARK: - Codable

extension JSON: Codable {
    /// Decodes any JSON-like value from a decoder's single-value container.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let elements = try? container.decode([JSON].self) {
            self = .array(elements)
        } else if let members = try? container.decode([String: JSON].self) {
            self = .object(members)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "The value is not null, a Boolean, number, string, array or object.")
        }
    }

    /// Encodes the value into an encoder's single-value container.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .number(let number): try container.encode(number)
        case .string(let string): try container.encode(string)
        case .array(let elements): try container.encode(elements)
        case .object(let members): try container.encode(members)
        }
    }

    /// Decodes a `Decodable` type from this value by way of its JSON text.
    ///
    /// Failures throw `.serializationFailed` naming the type, with the `DecodingError` underneath.
    public func decode<T: Decodable>(_ type: T.Type, using decoder: JSONDecoder = JSONDecoder()) throws(CourierError) -> T {
        do {
            return try decoder.decode(T.self, from: data(sortedKeys: false))
        } catch {
            throw CourierError(.serializationFailed, "Could not decode \(T.self) from JSON: \(error)", underlyingError: error)
        }
    }
}
