import Foundation

/// A media type such as `application/json`, without parameters, for content-type validation.
///
/// Parsing strips parameters (`; charset=utf-8`) and surrounding whitespace and lowercases both
/// parts; a string without exactly one `/` separating two tokens is not a media type.
struct MIMEType: Hashable, Sendable, CustomStringConvertible {
    /// The top-level type, e.g. `application`, or `*`.
    let type: String
    /// The subtype, e.g. `json`, or `*`.
    let subtype: String

    /// Parses `"type/subtype; parameters"`; `"text"` and `""` give `nil`.
    init?(_ string: some StringProtocol) {
        if let parsed = Self.parseASCII(string.utf8) {
            guard let parsed else { return nil }
            type = parsed.0
            subtype = parsed.1
            return
        }
        let essence = string.prefix { $0 != ";" }
        let parts = essence.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let type = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
        let subtype = parts[1].trimmingCharacters(in: .whitespaces).lowercased()
        // RFC 9110 §8.3.1: both parts are tokens (ASCII; `*` is a token character). Anything else
        // (a combining mark on a space or a slash, say) is not a media type, so what parses also
        // prints and parses back the same.
        guard WireSyntax.isToken(type), WireSyntax.isToken(subtype) else { return nil }
        self.type = type
        self.subtype = subtype
    }

    /// The same parse for an all-ASCII string, without Foundation's trimming and with no allocation
    /// for parts of up to 15 bytes (validation parses a `Content-Type` on every response): `nil` when
    /// the string is not all ASCII (the caller then takes the general path), `.some(nil)` when it is
    /// not a media type. On ASCII, `.whitespaces` is space and tab, and `lowercased()` maps only A-Z.
    private static func parseASCII(_ utf8: some Collection<UInt8>) -> (String, String)?? {
        guard utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let essence = utf8.prefix { $0 != UInt8(ascii: ";") }
        guard let slash = essence.firstIndex(of: UInt8(ascii: "/")) else { return .some(nil) }
        let rest = essence[essence.index(after: slash)...]
        guard !rest.contains(UInt8(ascii: "/")) else { return .some(nil) }
        guard let type = token(essence[..<slash]), let subtype = token(rest) else { return .some(nil) }
        return (type, subtype)
    }

    /// `bytes` without surrounding spaces and tabs, lowercased, if that is a token.
    private static func token<C: Collection<UInt8>>(_ bytes: C) -> String? {
        let isBlank = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }) else { return nil }
        var end = first
        var index = first
        while index != bytes.endIndex {
            if !isBlank(bytes[index]) { end = bytes.index(after: index) }
            index = bytes.index(after: index)
        }
        let trimmed = bytes[first..<end]
        let value = String(unsafeUninitializedCapacity: trimmed.count) { buffer in
            for (offset, byte) in trimmed.enumerated() {
                buffer[offset] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            }
            return trimmed.count
        }
        return WireSyntax.isToken(value) ? value : nil
    }

    /// `*/*`.
    static let any = MIMEType(uncheckedType: "*", subtype: "*")

    private init(uncheckedType type: String, subtype: String) {
        self.type = type
        self.subtype = subtype
    }

    /// `type/subtype`.
    var description: String { "\(type)/\(subtype)" }

    /// Whether the two types are compatible, treating `*` on either side as a wildcard
    /// (`*/*`, `type/*`, `*/subtype`).
    func matches(_ other: MIMEType) -> Bool {
        (type == "*" || other.type == "*" || type == other.type)
            && (subtype == "*" || other.subtype == "*" || subtype == other.subtype)
    }

    /// The media types an `Accept` header value allows, most preferred first.
    ///
    /// Entries with `q=0` are excluded; other q-values only order the result (ties keep their
    /// order). Entries that are not media types are skipped, so a blank header gives `[]`.
    static func acceptableTypes(fromAcceptHeader header: String) -> [MIMEType] {
        var entries: [(type: MIMEType, quality: Double)] = []
        for entry in WireSyntax.split(Substring(header), outsideQuotesOn: ",") {
            guard let type = MIMEType(entry) else { continue }
            let quality = parameters(in: entry)["q"].flatMap { Double($0) } ?? 1
            guard quality > 0 else { continue }
            entries.append((type, quality))
        }
        // A stable sort on quality, highest first.
        return entries.enumerated()
            .sorted { $0.element.quality != $1.element.quality ? $0.element.quality > $1.element.quality : $0.offset < $1.offset }
            .map(\.element.type)
    }

    /// The parameters of a `Content-Type`-style value, names lowercased and values unquoted.
    static func parameters(in value: some StringProtocol) -> [String: String] {
        var result: [String: String] = [:]
        for parameter in WireSyntax.split(Substring(value), outsideQuotesOn: ";").dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            let name = parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            var rawValue = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if rawValue.count >= 2, rawValue.hasPrefix("\""), rawValue.hasSuffix("\"") {
                rawValue = String(rawValue.dropFirst().dropLast()).replacingOccurrences(of: "\\\"", with: "\"")
            }
            if !name.isEmpty, result[name] == nil { result[name] = rawValue }
        }
        return result
    }

    /// The `charset` parameter of a `Content-Type` value, lowercased, e.g. `utf-8`.
    static func charset(inContentType value: String) -> String? {
        parameters(in: value)["charset"].map { $0.lowercased() }.flatMap { $0.isEmpty ? nil : $0 }
    }
}
