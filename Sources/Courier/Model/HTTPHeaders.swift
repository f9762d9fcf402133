import Foundation

/// An ordered, case-insensitive collection of HTTP field lines.
///
/// Insertion order is kept. ``add(name:value:)`` and ``update(name:value:)`` keep one line per name
/// (Alamofire's meaning): writing a name that already exists (in any case) replaces its value in
/// place and keeps the spelling of the latest write. ``append(name:value:)`` adds a further line
/// for a name that never replaces one, for fields sent or received more than once (two `X-Test`
/// lines, every `Set-Cookie` of a response); ``values(for:)`` reads them all, in order. This is
/// swift-http-types' `HTTPFields` model, so the two convert line for line.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers.append(name: "X-Test", value: "a")
/// headers.append(name: "X-Test", value: "b")   // a second line, sent as its own
/// headers.values(for: "x-test")                // ["a", "b"]
/// headers["X-Test"]                            // "a, b"
/// ```
public struct HTTPHeaders: Sendable, Hashable {
    private var headers: [HTTPHeader] = []

    /// Creates an empty collection.
    public init() {}

    /// Creates an empty collection with room for `capacity` headers.
    init(minimumCapacity capacity: Int) {
        headers.reserveCapacity(capacity)
    }

    /// Creates headers from a list; later duplicates replace earlier ones (build repeated lines
    /// with ``append(name:value:)``).
    public init(_ headers: [HTTPHeader]) {
        self.headers.reserveCapacity(headers.count)
        headers.forEach { update($0) }
    }

    /// Creates headers from a dictionary; the order is the dictionary's iteration order.
    public init(_ dictionary: [String: String]) {
        headers.reserveCapacity(dictionary.count)
        dictionary.forEach { update(name: $0.key, value: $0.value) }
    }

    /// Adds a header, or replaces the value of a header with the same name (every line of it).
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Adds a header, or replaces the value of a header with the same name (every line of it).
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Sets `name` to `value`, keeping its position if it already exists; further lines of that
    /// name (made by ``append(name:value:)``) are removed.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Sets a header, keeping its position if one with the same name already exists; further lines
    /// of that name (made by ``append(_:)``) are removed.
    public mutating func update(_ header: HTTPHeader) {
        if let index = index(of: header.name) {
            headers[index] = header
            removeLines(named: header.name, after: index)
        } else {
            headers.append(header)
        }
    }

    /// Appends a field line, after every line already there, without replacing any: a name that
    /// is present gets a further line (`X-Test: a` then `X-Test: b`). The curl transport sends
    /// each line as its own; URLSession joins them (see ``dictionary``).
    public mutating func append(name: String, value: String) {
        headers.append(HTTPHeader(name: name, value: value))
    }

    /// Appends a field line without replacing any (see ``append(name:value:)``).
    public mutating func append(_ header: HTTPHeader) {
        headers.append(header)
    }

    /// Every value of the lines named `name` (compared case-insensitively), in order; empty when
    /// there is none.
    public func values(for name: String) -> [String] {
        headers.lazy.filter { $0.name.caseInsensitiveEquals(name) }.map(\.value)
    }

    /// Appends a header the caller knows is not present yet (no lookup).
    mutating func appendDistinct(name: String, value: String) {
        headers.append(HTTPHeader(name: name, value: value))
    }

    /// Adds a header, or appends `value` to the existing one with `", "` (RFC 9110 §5.3), in one lookup.
    mutating func addJoining(name: String, value: String) {
        if let index = index(of: name) {
            headers[index] = HTTPHeader(name: name, value: headers[index].value + ", " + value)
        } else {
            headers.append(HTTPHeader(name: name, value: value))
        }
    }

    /// Removes the header with this name (every line of it), whatever its case.
    public mutating func remove(name: String) {
        if let index = index(of: name) {
            headers.remove(at: index)
            removeLines(named: name, after: index - 1)
        }
    }

    /// The value for `name`, compared case-insensitively. A name with several lines gives their
    /// values joined as one field (RFC 9110 §5.3): with `", "`, or `"; "` for `Cookie`
    /// (RFC 9113 §8.2.3). ``values(for:)`` gives them apart.
    public func value(for name: String) -> String? {
        guard let index = index(of: name) else { return nil }
        var value = headers[index].value
        var next = index + 1
        while next < headers.endIndex {
            if headers[next].name.caseInsensitiveEquals(name) {
                value += Self.separator(joining: name) + headers[next].value
            }
            next += 1
        }
        return value
    }

    /// The value for `name`; setting `nil` removes the header.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let newValue {
                update(name: name, value: newValue)
            } else {
                remove(name: name)
            }
        }
    }

    /// Whether a header with this name is present.
    public func contains(_ name: String) -> Bool { index(of: name) != nil }

    /// The headers as a dictionary, for APIs such as `URLRequest.allHTTPHeaderFields`: one entry
    /// per name, under the spelling of its first line. Several lines of a name are joined as
    /// ``value(for:)`` joins them, never dropped; `URLRequest` cannot hold them apart, nor keep the
    /// order of names.
    public var dictionary: [String: String] {
        // Most headers repeat no name: one dictionary, no lower-cased copies.
        guard hasRepeatedName else { return Dictionary(headers.lazy.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last }) }
        var dictionary: [String: String] = [:]
        dictionary.reserveCapacity(headers.count)
        var spelling: [String: String] = [:]
        for header in headers {
            let key = header.name.lowercased()
            if let first = spelling[key], let value = dictionary[first] {
                dictionary[first] = value + Self.separator(joining: first) + header.value
            } else {
                spelling[key] = header.name
                dictionary[header.name] = header.value
            }
        }
        return dictionary
    }

    /// Returns these headers with `other`'s added or replacing: a name both have keeps its place
    /// here, with every line `other` has of it (in `other`'s order) instead of this one's; `other`'s
    /// other lines follow, in `other`'s order.
    public func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        guard !other.isEmpty else { return self }
        var merged = self
        // Names of `other` that were here: their lines replace this one's, in its place.
        var replaced: [String] = []
        // Names of `other` that were not here: their lines are appended as they come.
        var added: [String] = []
        for header in other {
            if added.contains(where: { $0.caseInsensitiveEquals(header.name) }) {
                merged.headers.append(header)
            } else if replaced.contains(where: { $0.caseInsensitiveEquals(header.name) }) {
                merged.headers.insert(header, at: merged.lastIndex(of: header.name).map { $0 + 1 } ?? merged.endIndex)
            } else if contains(header.name) {
                replaced.append(header.name)
                merged.update(header)
            } else {
                added.append(header.name)
                merged.headers.append(header)
            }
        }
        return merged
    }

    /// These headers (read back from a `URLRequest`, one line per name, in no order) with the lines
    /// and order of `lines` wherever they still hold: a name whose value here is what `lines`'
    /// lines of that name join to goes out as those lines, each at its place; a name an adapter or
    /// modifier changed keeps its new value as one line, at the place of its first line in `lines`;
    /// a name `lines` lacks follows, in this collection's order. A name only `lines` has was
    /// removed, and stays so.
    func restoringLines(of lines: HTTPHeaders) -> HTTPHeaders {
        guard !lines.isEmpty else { return self }
        var restored = HTTPHeaders(minimumCapacity: Swift.max(count, lines.count))
        guard lines.hasRepeatedName else {
            // No line to restore (every request without a repeated name): only the order comes
            // back, the lines' first, then the fields only the built request has.
            for line in lines {
                if let index = index(of: line.name) { restored.headers.append(headers[index]) }
            }
            for header in headers where !lines.contains(header.name) { restored.headers.append(header) }
            return restored
        }
        // For each name of `lines`: whether its lines there still join to its value here.
        var decided: [(name: String, intact: Bool)] = []
        for line in lines {
            if let decision = decided.first(where: { $0.name.caseInsensitiveEquals(line.name) }) {
                if decision.intact { restored.headers.append(line) }
                continue
            }
            let current = index(of: line.name).map { headers[$0] }
            let group = lines.values(for: line.name)
            let intact = current.map { group.count > 1 && group.joined(separator: Self.separator(joining: line.name)) == $0.value } ?? false
            decided.append((line.name, intact))
            if intact {
                restored.headers.append(line)
            } else if let current {
                restored.headers.append(current)
            }
        }
        for header in headers where !decided.contains(where: { $0.name.caseInsensitiveEquals(header.name) }) {
            restored.headers.append(header)
        }
        return restored
    }

    /// Request fields that take one value, so never go out as repeated lines: a request with two
    /// lines of one of them fails with `.invalidRequest` before anything is sent.
    package static let singleValueFieldNames = ["Content-Length", "Host", "Authorization", "Proxy-Authorization", "Content-Type"]

    /// What joins two lines of `name` into one field: `"; "` for `Cookie`, `", "` for the rest.
    static func separator(joining name: String) -> String {
        name.caseInsensitiveEquals("Cookie") ? "; " : ", "
    }

    /// Whether two lines share a name (in any case). Names of different lengths never compare, so
    /// the few headers of a request cost a few length checks.
    private var hasRepeatedName: Bool {
        for later in headers.indices.dropFirst() {
            for earlier in headers.startIndex..<later where headers[later].name.caseInsensitiveEquals(headers[earlier].name) { return true }
        }
        return false
    }

    private func index(of name: String) -> Int? {
        headers.firstIndex { $0.name.caseInsensitiveEquals(name) }
    }

    private func lastIndex(of name: String) -> Int? {
        headers.lastIndex { $0.name.caseInsensitiveEquals(name) }
    }

    /// Removes the lines named `name` that come after `index`.
    private mutating func removeLines(named name: String, after index: Int) {
        var kept = index + 1
        for position in (index + 1)..<headers.endIndex where !headers[position].name.caseInsensitiveEquals(name) {
            headers.swapAt(kept, position)
            kept += 1
        }
        headers.removeSubrange(kept...)
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates headers from a literal such as `["Accept": "application/json"]`, in source order.
    public init(dictionaryLiteral elements: (String, String)...) {
        elements.forEach { update(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Creates headers from a literal such as `[.authorization(bearerToken: token)]`.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: RandomAccessCollection {
    /// The position of the first header.
    public var startIndex: Int { headers.startIndex }
    /// The position after the last header.
    public var endIndex: Int { headers.endIndex }
    /// The header at `position`, in insertion order.
    public subscript(position: Int) -> HTTPHeader { headers[position] }
}

extension HTTPHeaders: CustomStringConvertible {
    /// One `Name: value` line per header, in insertion order.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}

extension HTTPHeaders {
    /// Courier's defaults: `Accept-Language` and `User-Agent` (a process whose locale names no
    /// language leaves out `Accept-Language`; see ``HTTPHeader/defaultAcceptLanguage``).
    ///
    /// `Accept-Encoding` is not among them: with ``SessionConfiguration/automaticDecompression``
    /// on, a request without one gets it from the transport, listing every coding that transport
    /// decodes on this machine (curl: `deflate, gzip`, plus `br` and `zstd` when their libraries
    /// load; URLSession: what FoundationNetworking adds and decodes). An `Accept-Encoding` the
    /// caller sets, on the session or the request, is sent as it is.
    public static var `default`: HTTPHeaders {
        HTTPHeaders([.defaultAcceptLanguage, .defaultUserAgent].compactMap { $0 })
    }
}

/// One HTTP header: a name and a value.
public struct HTTPHeader: Sendable, Hashable, CustomStringConvertible {
    /// The header name, as it will be written.
    public let name: String
    /// The header value.
    public let value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }

    /// `Name: value`.
    public var description: String { "\(name): \(value)" }

    /// Names compare case-insensitively for hashing and equality.
    public static func == (lhs: HTTPHeader, rhs: HTTPHeader) -> Bool {
        lhs.name.caseInsensitiveEquals(rhs.name) && lhs.value == rhs.value
    }

    /// Hashes the lower-cased name and the value.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name.lowercased())
        hasher.combine(value)
    }
}

extension HTTPHeader {
    /// `Accept: value`.
    public static func accept(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept", value: value) }
    /// `Accept-Charset: value`.
    public static func acceptCharset(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Charset", value: value) }
    /// `Accept-Encoding: value`.
    public static func acceptEncoding(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Encoding", value: value) }
    /// `Accept-Language: value`.
    public static func acceptLanguage(_ value: String) -> HTTPHeader { HTTPHeader(name: "Accept-Language", value: value) }
    /// `Authorization: value`.
    public static func authorization(_ value: String) -> HTTPHeader { HTTPHeader(name: "Authorization", value: value) }
    /// `Authorization: Bearer <token>`.
    public static func authorization(bearerToken: String) -> HTTPHeader { authorization("Bearer \(bearerToken)") }
    /// `Authorization: Basic <base64(username:password)>`.
    public static func authorization(username: String, password: String) -> HTTPHeader {
        authorization("Basic \(Data("\(username):\(password)".utf8).base64EncodedString())")
    }
    /// `Cache-Control: value`.
    public static func cacheControl(_ value: String) -> HTTPHeader { HTTPHeader(name: "Cache-Control", value: value) }
    /// `Content-Disposition: value`.
    public static func contentDisposition(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Disposition", value: value) }
    /// `Content-Encoding: value`.
    public static func contentEncoding(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Encoding", value: value) }
    /// `Content-Length: value`.
    public static func contentLength(_ value: Int64) -> HTTPHeader { HTTPHeader(name: "Content-Length", value: String(value)) }
    /// `Content-Type: value`.
    public static func contentType(_ value: String) -> HTTPHeader { HTTPHeader(name: "Content-Type", value: value) }
    /// `User-Agent: value`.
    public static func userAgent(_ value: String) -> HTTPHeader { HTTPHeader(name: "User-Agent", value: value) }

    /// `Accept-Encoding: gzip, deflate`: codings every transport decodes. Courier no longer sends it
    /// by default (a request without `Accept-Encoding` lists what its transport decodes, which may
    /// include `br` and `zstd`); set it to ask for these two only.
    public static let defaultAcceptEncoding = acceptEncoding("gzip, deflate")
    /// `Accept-Language` for what the process's locale says (at most six languages, with
    /// q-values); `nil` when it names no language, as under the C or POSIX locale, and then none is
    /// sent. On Linux the locale comes from `LC_ALL`, `LC_MESSAGES` and `LANG` (with `LANGUAGE`);
    /// on Apple platforms from the user's preferred languages.
    ///
    /// ```swift
    /// // LANG=de_DE.UTF-8  →  Accept-Language: de-DE
    /// // LANG=C.UTF-8      →  no Accept-Language
    /// print(HTTPHeader.defaultAcceptLanguage?.value ?? "none")
    /// ```
    public static let defaultAcceptLanguage: HTTPHeader? = AcceptLanguage.processValue.map(acceptLanguage)
    /// `User-Agent: <executable>/<version> Courier/<version>`.
    public static let defaultUserAgent: HTTPHeader = {
        let executable = ProcessInfo.processInfo.processName
        return userAgent("\(executable) Courier/\(Courier.version)")
    }()
}

/// Library-wide constants.
public enum Courier {
    /// Courier's version string.
    public static let version = "0.1.0"
}

extension String {
    /// The string without leading and trailing spaces and tabs (HTTP's optional whitespace).
    ///
    /// Byte-wise over UTF-8: both are single ASCII bytes, and walking `Character`s would run
    /// grapheme breaking on every header value read.
    var trimmedASCII: Substring {
        let isBlank: (UInt8) -> Bool = { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isBlank($0) }), let last = utf8.lastIndex(where: { !isBlank($0) }) else { return "" }
        return self[first...last]
    }
}

extension StringProtocol {
    /// ASCII case-insensitive equality without allocating lower-cased copies.
    func caseInsensitiveEquals(_ other: some StringProtocol) -> Bool {
        // ASCII case folding keeps the UTF-8 length, so names of different lengths differ (the common case).
        guard utf8.count == other.utf8.count else { return false }
        var lhs = utf8.makeIterator()
        var rhs = other.utf8.makeIterator()
        while true {
            switch (lhs.next(), rhs.next()) {
            case (nil, nil):
                return true
            case let (a?, b?):
                if a == b { continue }
                if a | 0x20 != b | 0x20 { return false }
                let folded = a | 0x20
                if folded < 0x61 || folded > 0x7A { return false }
            default:
                return false
            }
        }
    }
}
