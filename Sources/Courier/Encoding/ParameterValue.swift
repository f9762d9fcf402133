import Foundation

/// An untyped parameter value checked and turned into something encoders can write: the JSON
/// values, plus dates, data and any `Encodable` nested inside.
///
/// Made and written within one call, so it need not be `Sendable`: the values it holds came from
/// ``Parameters`` (`Sendable` at the top level) and are never handed to another thread.
indirect enum ParameterValue: Encodable {
    case null
    case bool(Bool)
    case int(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case array([ParameterValue])
    case object([String: ParameterValue])
    /// A value that encodes itself (a `Date`, `Data`, `Decimal`, your own `Encodable`): each
    /// encoder writes it its own way (the form encoder's date encoding, JSONEncoder's strategies).
    case encodable(any Encodable)

    /// The value for `parameters`, or `.encodingFailed` naming the first value that is neither a
    /// JSON value nor `Encodable`.
    static func object(from parameters: [String: any Sendable]) throws(CourierError) -> ParameterValue {
        var members: [String: ParameterValue] = [:]
        members.reserveCapacity(parameters.count)
        for (key, value) in parameters {
            members[key] = try make(value, path: key)
        }
        return .object(members)
    }

    /// Checks one value; `path` names it in errors (`user.tags[2]`).
    static func make(_ value: Any, path: String) throws(CourierError) -> ParameterValue {
        // An Optional inside `Any`: nil is null, a value is unwrapped.
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return .null }
            return try make(wrapped, path: path)
        }
        switch value {
        case is NSNull:
            return .null
        case let flag as Bool where type(of: value) == Bool.self:
            return .bool(flag)
        case let string as String:
            return .string(string)
        case let substring as Substring:
            return .string(String(substring))
        case let character as Character:
            return .string(String(character))
        case let url as URL:
            return .string(url.absoluteString)
        default:
            break
        }
        // Foundation's numbers (from JSONSerialization, or NSNumber(value:)) before Swift's, since
        // a Swift integer in `Any` also casts to NSNumber.
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return number.parameterValue
        }
        if let integer = value as? any BinaryInteger {
            if let signed = Int64(exactly: integer) { return .int(signed) }
            if let unsigned = UInt64(exactly: integer) { return .unsigned(unsigned) }
            return .string(String(describing: integer))
        }
        if let double = value as? Double { return try finite(double, path: path) }
        if let float = value as? Float { return try finite(Double(float), path: path) }
        if let array = value as? [Any] {
            var elements: [ParameterValue] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                elements.append(try make(element, path: "\(path)[\(index)]"))
            }
            return .array(elements)
        }
        if let dictionary = value as? [String: Any] {
            var members: [String: ParameterValue] = [:]
            for (key, element) in dictionary {
                members[key] = try make(element, path: "\(path).\(key)")
            }
            return .object(members)
        }
        if let encodable = value as? any Encodable {
            return .encodable(encodable)
        }
        throw CourierError(
            .encodingFailed,
            "The parameter \"\(path)\" is a \(type(of: value)), which is neither a JSON value "
                + "(String, number, Bool, NSNull, array, [String: …] dictionary) nor Encodable.")
    }

    private static func finite(_ double: Double, path: String) throws(CourierError) -> ParameterValue {
        guard double.isFinite else {
            throw CourierError(.encodingFailed, "The parameter \"\(path)\" is \(double), which has no JSON or form representation.")
        }
        return .double(double)
    }

    func encode(to encoder: any Encoder) throws {
        switch self {
        case .object(let members):
            var container = encoder.container(keyedBy: ParameterKey.self)
            for (key, value) in members {
                try container.encode(value, forKey: ParameterKey(stringValue: key))
            }
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements {
                try container.encode(element)
            }
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let flag):
            var container = encoder.singleValueContainer()
            try container.encode(flag)
        case .int(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .unsigned(let integer):
            var container = encoder.singleValueContainer()
            try container.encode(integer)
        case .double(let double):
            var container = encoder.singleValueContainer()
            try container.encode(double)
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .encodable(let value):
            // Through a container, so the encoder sees the value's own type (a Date gets the date strategy).
            var container = encoder.singleValueContainer()
            try container.encode(value)
        }
    }
}

/// Any string as a coding key.
private struct ParameterKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

extension NSNumber {
    /// A Boolean for Foundation's Boolean numbers, a double for floating-point ones, an integer otherwise.
    fileprivate var parameterValue: ParameterValue {
        // Foundation's Booleans are their own class on Apple platforms and Linux alike.
        if String(describing: type(of: self)).contains("Boolean") { return .bool(boolValue) }
        switch String(cString: objCType) {
        case "f", "d": return .double(doubleValue)
        case "Q", "L": return .unsigned(uint64Value)
        default: return .int(int64Value)
        }
    }
}
