/// The expected structure of a JSON body, for `validate(json:)`.
///
/// ```swift
/// let shape: JSONShape = .object(["nick": .string, "tags": .array(of: .string), "bio": .optional(.string)])
/// shape.firstMismatch(in: json)?.description   // "$.tags[2]: expected string, found number"
/// ```
/// Object shapes require each listed key and allow extra keys.
public indirect enum JSONShape: Sendable, Hashable {
    /// A string.
    case string
    /// A number.
    case number
    /// `true` or `false`.
    case bool
    /// `null`.
    case null
    /// Any value, including `null`; as an object member, the key must still be present.
    case any
    /// An object with at least these members, each matching its shape.
    case object([String: JSONShape])
    /// An array whose every element matches the shape.
    case array(of: JSONShape)
    /// The shape, or `null`; as an object member, the key may also be missing.
    case optional(JSONShape)

    /// The first place where `json` differs from this shape, or `nil` if it matches.
    ///
    /// Object members are checked in key order and array elements in index order, so the
    /// result is the same on every run.
    public func firstMismatch(in json: JSON) -> Mismatch? {
        firstMismatch(in: json, path: .root)
    }

    /// Whether `json` has this shape.
    public func matches(_ json: JSON) -> Bool {
        firstMismatch(in: json) == nil
    }

    /// Where and how a JSON value differs from a ``JSONShape``.
    public struct Mismatch: Sendable, Hashable, CustomStringConvertible {
        /// The location of the differing value, e.g. `$.user.tags[2]` or `$["first name"]`.
        public let path: String
        /// What the shape expected there, e.g. `"number"` or `"string or null"`.
        public let expected: String
        /// What was found there: `"string"`, `"number"`, `"bool"`, `"null"`, `"array"`, `"object"` or `"missing"`.
        public let found: String

        /// Creates a mismatch.
        public init(path: String, expected: String, found: String) {
            self.path = path
            self.expected = expected
            self.found = found
        }

        /// `"$.level: expected number, found string"`.
        public var description: String { "\(path): expected \(expected), found \(found)" }
    }

    /// A readable name for what this shape accepts.
    var expectedName: String {
        switch self {
        case .string: "string"
        case .number: "number"
        case .bool: "bool"
        case .null: "null"
        case .any: "any value"
        case .object: "object"
        case .array: "array"
        case .optional(let wrapped): wrapped.isNullable ? wrapped.expectedName : "\(wrapped.expectedName) or null"
        }
    }

    private var isNullable: Bool {
        switch self {
        case .null, .any, .optional: true
        default: false
        }
    }

    private func firstMismatch(in json: JSON, path: JSONPath) -> Mismatch? {
        let mismatch = Mismatch(path: path.description, expected: expectedName, found: json.typeName)
        switch (self, json) {
        case (.any, _), (.string, .string), (.number, .number), (.bool, .bool), (.null, .null):
            return nil
        case (.optional, .null):
            return nil
        case (.optional(let wrapped), _):
            // Report the wrapped shape's own mismatch when it is deeper than this value.
            let inner = wrapped.firstMismatch(in: json, path: path)
            guard let inner else { return nil }
            return inner.path == mismatch.path ? mismatch : inner
        case (.object(let required), .object(let members)):
            for key in required.keys.sorted() {
                // `key` came from `required`, so the lookup cannot miss.
                let shape = required[key] ?? .any
                let memberPath = path.appending(key: key)
                guard let member = members[key] else {
                    if case .optional = shape { continue }
                    return Mismatch(path: memberPath.description, expected: shape.expectedName, found: "missing")
                }
                if let found = shape.firstMismatch(in: member, path: memberPath) { return found }
            }
            return nil
        case (.array(let element), .array(let elements)):
            for (index, value) in elements.enumerated() {
                if let found = element.firstMismatch(in: value, path: path.appending(index: index)) { return found }
            }
            return nil
        default:
            return mismatch
        }
    }
}

extension JSON {
    /// The JSON type's name, as used in shape mismatches.
    var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}

/// A location inside a JSON value, written in JSONPath style (`$.a.b[0]["c d"]`).
struct JSONPath: CustomStringConvertible {
    private(set) var description: String

    /// The whole document, `$`.
    static let root = JSONPath(description: "$")

    /// The path to member `key` of the object here.
    func appending(key: String) -> JSONPath {
        if Self.isIdentifier(key) { return JSONPath(description: description + "." + key) }
        var quoted = ""
        for character in key.unicodeScalars {
            switch character {
            case "\"": quoted += "\\\""
            case "\\": quoted += "\\\\"
            case "\n": quoted += "\\n"
            case "\r": quoted += "\\r"
            case "\t": quoted += "\\t"
            default: quoted.unicodeScalars.append(character)
            }
        }
        return JSONPath(description: description + "[\"" + quoted + "\"]")
    }

    /// The path to element `index` of the array here.
    func appending(index: Int) -> JSONPath {
        JSONPath(description: description + "[\(index)]")
    }

    /// Whether `key` can follow a dot: an ASCII letter or `_`, then letters, digits or `_`.
    private static func isIdentifier(_ key: String) -> Bool {
        guard let first = key.utf8.first, first.isASCIILetter || first == UInt8(ascii: "_") else { return false }
        return key.utf8.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == UInt8(ascii: "_") }
    }
}

extension UInt8 {
    fileprivate var isASCIILetter: Bool { (self | 0x20) >= UInt8(ascii: "a") && (self | 0x20) <= UInt8(ascii: "z") }
    fileprivate var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}
