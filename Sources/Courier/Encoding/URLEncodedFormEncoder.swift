import CourierSupport
import Foundation

/// Encodes any keyed `Encodable` (a struct, class or `[String: …]` dictionary) as ordered
/// `name=value` pairs for a query string or an `application/x-www-form-urlencoded` body.
///
/// ```swift
/// struct Search: Encodable { let q: String; let tags: [String]; let page: Int? }
/// try URLEncodedFormEncoder().encodeQuery(Search(q: "swift 6", tags: ["a", "b"], page: nil))
/// // "q=swift%206&tags%5B%5D=a&tags%5B%5D=b"
/// ```
/// Nested objects become `a[b]=c`; `nil` values are dropped along with their key; empty arrays and
/// objects produce nothing. A root array or a bare value (a string, a number) cannot be form-encoded
/// and throws `.encodingFailed`.
public struct URLEncodedFormEncoder: Sendable {
    /// How array elements are named.
    public enum ArrayEncoding: Sendable, Hashable {
        /// `key[]=1&key[]=2`.
        case brackets
        /// `key=1&key=2`.
        case noBrackets
        /// `key[0]=1&key[1]=2`; an element that encodes `nil` is dropped and keeps its index gap.
        case indexInBrackets
    }

    /// How Booleans are written.
    public enum BoolEncoding: Sendable, Hashable {
        /// `true` and `false`.
        case literal
        /// `1` and `0`.
        case numeric
    }

    /// How `Date`s are written.
    public enum DateEncoding: Sendable {
        /// Seconds since 1970-01-01 UTC, without a fraction when whole: `1700000000`, `1700000000.5`.
        case secondsSince1970
        /// Milliseconds since 1970-01-01 UTC, without a fraction when whole.
        case millisecondsSince1970
        /// ISO 8601 in UTC, e.g. `2023-11-14T22:13:20Z`.
        case iso8601
        /// The string a formatter produces.
        case formatted(DateFormatter)
        /// The string a closure produces; what it throws becomes `.encodingFailed`.
        case custom(@Sendable (Date) throws -> String)
    }

    /// The order of the members of each object.
    public enum KeyOrdering: Sendable, Hashable {
        /// Sorted by key, so the output does not depend on dictionary order.
        case sorted
        /// The order in which the value encoded them.
        case encodingOrder
    }

    /// How array elements are named; `.brackets` by default.
    public var arrayEncoding: ArrayEncoding
    /// How Booleans are written; `.literal` by default.
    public var boolEncoding: BoolEncoding
    /// How dates are written; `.secondsSince1970` by default.
    public var dateEncoding: DateEncoding
    /// The order of object members; `.sorted` by default.
    public var keyOrdering: KeyOrdering
    /// How member names are written (`.useDefaultKeys` by default; `.convertToSnakeCase` turns
    /// `pageSize` into `page_size`).
    public var keyEncoding: KeyEncoding
    /// How a nested member's name joins its parent's: `a[b]` (`.brackets`, the default) or `a.b` (`.dots`).
    public var keyPathEncoding: KeyPathEncoding
    /// What a `nil` value produces: nothing (`.dropKey`, the default), `key=` or `key=null`.
    public var nilEncoding: NilEncoding
    /// How a space is written: `%20` (`.percentEscaped`, the default) or `+`.
    public var spaceEncoding: SpaceEncoding

    /// Whether members are sorted by name (Alamofire's spelling of ``keyOrdering`` `== .sorted`).
    public var alphabetizeKeyValuePairs: Bool {
        get { keyOrdering == .sorted }
        set { keyOrdering = newValue ? .sorted : .encodingOrder }
    }

    /// Creates an encoder. `Data` is always written as Base64.
    ///
    /// ```swift
    /// let encoder = URLEncodedFormEncoder(arrayEncoding: .noBrackets, boolEncoding: .numeric,
    ///                                     keyEncoding: .convertToSnakeCase, spaceEncoding: .plusReplaced)
    /// struct Query: Encodable { let pageSize: Int; let tags: [String]; let draft: Bool }
    /// try encoder.encodeQuery(Query(pageSize: 10, tags: ["a b"], draft: true))
    /// // "draft=1&page_size=10&tags=a+b"
    /// ```
    public init(
        arrayEncoding: ArrayEncoding = .brackets, boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .secondsSince1970, keyOrdering: KeyOrdering = .sorted,
        keyEncoding: KeyEncoding = .useDefaultKeys, keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey, spaceEncoding: SpaceEncoding = .percentEscaped
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.keyOrdering = keyOrdering
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
    }

    /// Encodes `value` as unescaped `(name, value)` pairs in output order; an empty value gives `[]`.
    public func encode<T: Encodable>(_ value: T) throws(CourierError) -> [(name: String, value: String)] {
        let root = FormNode()
        do {
            try FormEncoding(options: self, node: root, codingPath: []).encodeValue(value, into: root)
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(.encodingFailed, "Could not form-encode a value of type \(T.self): \(error)", underlyingError: error)
        }
        switch root.role {
        case .unset, .null:
            return []
        case .object:
            var pairs: [(name: String, value: String)] = []
            flatten(root, name: "", into: &pairs)
            return pairs
        case .leaf, .array:
            let what = root.role == .array ? "an array" : "a single value"
            throw CourierError(
                .encodingFailed,
                "Cannot form-encode a value of type \(T.self): it encodes as \(what), but the top level must be keyed, like a struct or a [String: …] dictionary."
            )
        }
    }

    /// Encodes `value` as a percent-escaped query string (`a=1&b=2`); an empty value gives `""`.
    public func encodeQuery<T: Encodable>(_ value: T) throws(CourierError) -> String {
        spaceEncoding.apply(PercentEncoding.query(try encode(value)))
    }

    /// Encodes `value` as an `application/x-www-form-urlencoded` body.
    public func encodeFormBody<T: Encodable>(_ value: T) throws(CourierError) -> Data {
        let pairs = try encode(value)
        let body = pairs.map { PercentEncoding.escapeFormComponent($0.name) + "=" + PercentEncoding.escapeFormComponent($0.value) }
        return Data(spaceEncoding.apply(body.joined(separator: "&")).utf8)
    }

    private func flatten(_ node: FormNode, name: String, into pairs: inout [(name: String, value: String)]) {
        switch node.role {
        case .unset:
            return
        case .null:
            if let value = nilEncoding.value { pairs.append((name, value)) }
        case .leaf:
            pairs.append((name, node.leaf))
        case .array:
            for (index, element) in node.elements.enumerated() {
                let elementName =
                    switch arrayEncoding {
                    case .brackets: name + "[]"
                    case .noBrackets: name
                    case .indexInBrackets: name + "[\(index)]"
                    }
                flatten(element, name: elementName, into: &pairs)
            }
        case .object:
            var members = node.keys.map { (key: $0, name: keyEncoding.encode($0)) }
            if keyOrdering == .sorted { members.sort { $0.name < $1.name } }
            for member in members {
                guard let child = node.children[member.key] else { continue }
                let childName =
                    name.isEmpty
                    ? member.name
                    : keyPathEncoding == .brackets ? name + "[" + member.name + "]" : name + "." + member.name
                flatten(child, name: childName, into: &pairs)
            }
        }
    }

    /// Writes a date according to ``dateEncoding``.
    fileprivate func string(for date: Date) throws -> String {
        switch dateEncoding {
        case .secondsSince1970: JSON.format(number: date.timeIntervalSince1970)
        case .millisecondsSince1970: JSON.format(number: (date.timeIntervalSince1970 * 1000).rounded())
        case .iso8601: date.formatted(.iso8601)
        case .formatted(let formatter): formatter.string(from: date)
        case .custom(let closure): try closure(date)
        }
    }
}

// MARK: - The tree an encoding builds

/// One value in the tree an encoding builds before it is flattened into pairs.
///
/// A class because `Encoder` containers hand out nested containers that are filled in later.
private final class FormNode {
    enum Role { case unset, null, leaf, array, object }

    var role = Role.unset
    var leaf = ""
    var elements: [FormNode] = []
    /// Object keys in encoding order, each once.
    var keys: [String] = []
    var children: [String: FormNode] = [:]

    func become(_ newRole: Role) {
        guard role != newRole else { return }
        // A value that changes its mind about its own shape starts over, rather than trapping.
        role = newRole
        leaf = ""
        elements = []
        keys = []
        children = [:]
    }

    func setLeaf(_ value: String) {
        become(.leaf)
        leaf = value
    }

    /// A fresh node for `key`, replacing any earlier value, or the existing one when `reuse` is set.
    func child(forKey key: String, reuse: Bool = false) -> FormNode {
        become(.object)
        if let existing = children[key] {
            if reuse { return existing }
        } else {
            keys.append(key)
        }
        let node = FormNode()
        children[key] = node
        return node
    }

    func appendElement() -> FormNode {
        become(.array)
        let node = FormNode()
        elements.append(node)
        return node
    }
}

/// A key for `superEncoder()` and array positions in coding paths.
private struct FormCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue; self.intValue = nil }
    init(intValue: Int) { self.stringValue = String(intValue); self.intValue = intValue }
}

// MARK: - Encoder

/// The `Encoder` a value sees; it writes into one node of the tree.
private final class FormEncoding: Encoder {
    let options: URLEncodedFormEncoder
    let node: FormNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(options: URLEncodedFormEncoder, node: FormNode, codingPath: [any CodingKey]) {
        self.options = options
        self.node = node
        self.codingPath = codingPath
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.become(.object)
        return KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self, node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.become(.array)
        return FormUnkeyedContainer(encoder: self, node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self, node: node, codingPath: codingPath)
    }

    /// Writes `value` into `target`: leaf types directly, anything else through its own `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T, into target: FormNode, path: [any CodingKey]? = nil) throws {
        if let leaf = try leafString(for: value) {
            target.setLeaf(leaf)
        } else {
            try value.encode(to: FormEncoding(options: options, node: target, codingPath: path ?? codingPath))
        }
    }

    /// The string for values written as a single form value, or `nil` for values that encode themselves.
    private func leafString<T: Encodable>(for value: T) throws -> String? {
        switch value {
        case let string as String: return string
        case let flag as Bool: return options.boolEncoding == .literal ? (flag ? "true" : "false") : (flag ? "1" : "0")
        case let double as Double: return JSON.format(number: double)
        case let float as Float:
            return float.isFinite && float.rounded() == float && abs(float) < 1e15 ? JSON.format(number: Double(float)) : float.description
        case let integer as any BinaryInteger: return String(describing: integer)
        case let date as Date: return try options.string(for: date)
        case let data as Data: return data.base64EncodedString()
        case let url as URL: return url.absoluteString
        case let decimal as Decimal: return decimal.description
        default: return nil
        }
    }
}

private struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormEncoding
    let node: FormNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) {
        node.child(forKey: key.stringValue).become(.null)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.encodeValue(value, into: node.child(forKey: key.stringValue), path: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let child = node.child(forKey: key.stringValue, reuse: true)
        child.become(.object)
        return KeyedEncodingContainer(FormKeyedContainer<NestedKey>(encoder: encoder, node: child, codingPath: codingPath + [key]))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let child = node.child(forKey: key.stringValue, reuse: true)
        child.become(.array)
        return FormUnkeyedContainer(encoder: encoder, node: child, codingPath: codingPath + [key])
    }

    mutating func superEncoder() -> any Encoder {
        FormEncoding(options: encoder.options, node: node.child(forKey: "super"), codingPath: codingPath + [FormCodingKey(stringValue: "super")])
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        FormEncoding(options: encoder.options, node: node.child(forKey: key.stringValue), codingPath: codingPath + [key])
    }
}

private struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormEncoding
    let node: FormNode
    let codingPath: [any CodingKey]
    private(set) var count = 0

    init(encoder: FormEncoding, node: FormNode, codingPath: [any CodingKey]) {
        self.encoder = encoder
        self.node = node
        self.codingPath = codingPath
    }

    private mutating func nextElement() -> (node: FormNode, path: [any CodingKey]) {
        defer { count += 1 }
        return (node.appendElement(), codingPath + [FormCodingKey(intValue: count)])
    }

    mutating func encodeNil() {
        nextElement().node.become(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let element = nextElement()
        try encoder.encodeValue(value, into: element.node, path: element.path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let element = nextElement()
        element.node.become(.object)
        return KeyedEncodingContainer(FormKeyedContainer<NestedKey>(encoder: encoder, node: element.node, codingPath: element.path))
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let element = nextElement()
        element.node.become(.array)
        return FormUnkeyedContainer(encoder: encoder, node: element.node, codingPath: element.path)
    }

    mutating func superEncoder() -> any Encoder {
        let element = nextElement()
        return FormEncoding(options: encoder.options, node: element.node, codingPath: element.path)
    }
}

private struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormEncoding
    let node: FormNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() {
        node.become(.null)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.encodeValue(value, into: node, path: codingPath)
    }
}
