/// An ordered list of header fields with case-insensitive lookup; repeated names are kept.
///
/// Iterating yields `(name, value)` pairs in the order they were sent or added.
public struct HeaderFields: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field as it appears on the wire.
    public typealias Element = (name: String, value: String)

    fileprivate struct Field: Sendable, Equatable {
        var name: String
        var value: String
    }

    private var fields: [Field]

    /// Creates an empty list.
    public init() {
        fields = []
    }

    /// Creates a list from ordered `(name, value)` pairs.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Creates a list from a literal such as `["Accept": "*/*"]`, keeping its order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields, counting repeated names separately.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The field names in order (repeated names appear repeatedly).
    public var names: [String] { fields.map(\.name) }

    /// The value of the first field called `name` (case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value of fields called `name` (case-insensitive), in order.
    public func values(for name: String) -> [String] {
        fields.filter { $0.name.equalsIgnoringASCIICase(name) }.map(\.value)
    }

    /// Whether a field called `name` (case-insensitive) is present.
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// Appends a field, keeping any existing fields with the same name.
    public mutating func add(_ name: String, _ value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Removes every field called `name` (case-insensitive).
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// Replaces every field called `name` with a single field holding `value`.
    public mutating func set(_ name: String, _ value: String) {
        if let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
            fields[index].value = value
            var seen = false
            fields.removeAll { field in
                guard field.name.equalsIgnoringASCIICase(name) else { return false }
                defer { seen = true }
                return seen
            }
        } else {
            add(name, value)
        }
    }

    /// Iterates over `(name, value)` pairs in order.
    public struct Iterator: IteratorProtocol {
        private var base: IndexingIterator<[Field]>

        fileprivate init(_ fields: [Field]) {
            base = fields.makeIterator()
        }

        /// The next field, or nil at the end.
        public mutating func next() -> Element? {
            base.next().map { ($0.name, $0.value) }
        }
    }

    /// Returns an iterator over the fields in order.
    public func makeIterator() -> Iterator {
        Iterator(fields)
    }

    /// The fields as `Name: value` lines.
    public var description: String {
        fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}

/// The headers of a ``RecordedRequest``.
public typealias RecordedHeaders = HeaderFields

extension StringProtocol {
    /// ASCII case-insensitive equality, as HTTP field names and tokens need.
    func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        let lhs = utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
    }
}

@inline(__always)
func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}
