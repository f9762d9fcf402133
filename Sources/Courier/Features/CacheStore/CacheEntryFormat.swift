import Foundation

/// The disk store's file format, version 3: pure encoding and decoding, no I/O.
///
/// An entry is a **head file** `<sha256 of key>.response`:
///
///     COURIER-RESPONSE 3\n
///     <metadata as one line of JSON>\n
///     <inline body: bodyLength bytes, only when bodyFile is absent>
///     \ncheck64 <16 hex digits: ``CacheChecksum`` of everything above>\n
///
/// and, for a body too large to live inline, an immutable **body file** `<sha256 of key>-<uuid>.body`
/// named by the head:
///
///     COURIER-BODY 3\n
///     <bodyLength bytes>
///     <one ``CacheChecksum`` per 64 KiB block of the body, 8 bytes little-endian each>
///
/// whose checksums the head's metadata names by their own checksum (`bodyChecksum`, see
/// ``CacheBodyChecksums``). A 304 rewrites the head only. What is checked, and when:
/// - a head when it is read: magic and version, the checksum over all of it (so an inline body
///   is checked with it), metadata that decodes, an inline body of the announced length, a
///   body file name of the store's own form;
/// - a body file when it is opened: magic and version, the exact size (header, body, one
///   checksum per block) and the checksum of its checksums against the head's `bodyChecksum`;
/// - each block of a body file when it is read, before any of its bytes are handed out.
///
/// The checksums catch what a crash, a full or failing disk or a stray write can do (files cut
/// short, old or swapped bytes, flipped bits, another entry's body file); they are not a defence
/// against forgery, since whoever can write the directory can write valid files. Files of another
/// version (`COURIER-RESPONSE 2` and `1` of earlier Courier releases included) are never misread:
/// they are misses, and the store removes them.
enum CacheEntryFormat {
    /// The schema version written and the only one read.
    static let version = 3
    static let headPrefix = Data("COURIER-RESPONSE ".utf8)
    static let headMagic = Data("COURIER-RESPONSE \(version)\n".utf8)
    static let bodyMagic = Data("COURIER-BODY \(version)\n".utf8)
    static let headExtension = "response"
    static let bodyExtension = "body"
    /// Temporary files: `courier-<uuid>.tmp`, locked by their writer while it lives.
    static let temporaryPrefix = "courier-"
    static let temporaryExtension = "tmp"
    private static let trailerTag = Data("\ncheck64 ".utf8)
    static let trailerLength = trailerTag.count + 16 + 1

    /// What a head file's JSON line holds.
    struct Metadata: Codable, Equatable {
        var key: String
        var statusCode: Int
        var headers: [[String]]
        var requestTime: Double
        var responseTime: Double
        var varyingRequestHeaders: [String: String]?
        var requestHadAuthorization: Bool
        var url: String?
        var version: Int?
        /// The body file's name (in the same directory), or `nil` for an inline body.
        var bodyFile: String?
        var bodyLength: Int64
        /// The body file's checksums, by their own checksum (``CacheBodyChecksums/digest(of:)``);
        /// `nil` for an inline body, which the head's checksum covers.
        var bodyChecksum: String? = nil
    }

    /// A decoded head file.
    struct Head {
        var metadata: Metadata
        /// The inline body (empty when the body is in a file).
        var inlineBody: Data
    }

    /// What reading a head file found.
    enum Decoded {
        case valid(Head)
        /// Not a valid entry of this version (damaged, truncated, another version): remove it.
        case invalid
    }

    static func metadata(for entry: StoredEntry, bodyFile: String?) -> Metadata {
        Metadata(
            key: entry.key.rawValue, statusCode: entry.head.statusCode,
            headers: entry.head.headers.map { [$0.name, $0.value] },
            requestTime: entry.head.requestTime.timeIntervalSince1970,
            responseTime: entry.head.responseTime.timeIntervalSince1970,
            varyingRequestHeaders: entry.head.varyingRequestHeaders,
            requestHadAuthorization: entry.head.requestHadAuthorization,
            url: entry.url?.absoluteString, version: entry.version, bodyFile: bodyFile, bodyLength: entry.body.length)
    }

    /// The head file's bytes; `inlineBody` must be empty when `metadata.bodyFile` is set.
    static func encodeHead(_ metadata: Metadata, inlineBody: Data) -> Data? {
        var file = headMagic
        file.append(contentsOf: metadata.json.description.utf8)
        file.append(UInt8(ascii: "\n"))
        file.append(inlineBody)
        let digest = CacheChecksum.hex(of: file)
        file.append(trailerTag)
        file.append(Data(digest.utf8))
        file.append(UInt8(ascii: "\n"))
        return file
    }

    /// Reads a head file's bytes.
    static func decodeHead(_ file: Data) -> Decoded {
        guard file.count > headMagic.count + trailerLength, file.starts(with: headMagic) else { return .invalid }
        let trailerStart = file.endIndex - trailerLength
        let trailer = file[trailerStart...]
        guard trailer.starts(with: trailerTag), trailer.last == UInt8(ascii: "\n") else { return .invalid }
        let digest = trailer.dropFirst(trailerTag.count).dropLast()
        let covered = file[file.startIndex..<trailerStart]
        guard digest.elementsEqual(CacheChecksum.hex(of: covered).utf8) else { return .invalid }
        let metadataStart = file.startIndex + headMagic.count
        // Searched in the raw bytes: through `Data`'s own indexing, each byte costs a call and an
        // exclusivity check, which made this search most of the head's decoding.
        let newlineOffset = file.withUnsafeBytes { raw in
            raw[headMagic.count..<(trailerStart - file.startIndex)].firstIndex(of: UInt8(ascii: "\n"))
        }
        guard let newline = newlineOffset.map({ file.startIndex + $0 }),
            let json = try? JSONParser.parse(Data(covered[metadataStart..<newline])), let metadata = Metadata(json: json),
            metadata.bodyLength >= 0
        else { return .invalid }
        let inline = covered[(newline + 1)...]
        if metadata.bodyFile == nil {
            guard Int64(inline.count) == metadata.bodyLength else { return .invalid }
        } else {
            guard inline.isEmpty, let name = metadata.bodyFile, isBodyFileName(name), metadata.bodyChecksum?.utf8.count == 16 else {
                return .invalid
            }
        }
        return .valid(Head(metadata: metadata, inlineBody: Data(inline)))
    }

    /// The head as the rules and the TTL API see it.
    static func entryHead(_ metadata: Metadata) -> CacheEntryHead {
        var headers = HTTPHeaders()
        for pair in metadata.headers where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
        return CacheEntryHead(
            statusCode: metadata.statusCode, headers: headers,
            requestTime: Date(timeIntervalSince1970: metadata.requestTime),
            responseTime: Date(timeIntervalSince1970: metadata.responseTime),
            varyingRequestHeaders: metadata.varyingRequestHeaders,
            requestHadAuthorization: metadata.requestHadAuthorization)
    }

    static func headFileName(_ key: ResponseCacheKey) -> String {
        "\(key.fileName).\(headExtension)"
    }

    static func newBodyFileName(_ key: ResponseCacheKey) -> String {
        "\(key.fileName)-\(UUID().uuidString.lowercased()).\(bodyExtension)"
    }

    static func newTemporaryFileName() -> String {
        // Not UUID(): on Linux it opens and reads /dev/urandom each time (three system calls).
        var generator = SystemRandomNumberGenerator()
        let random = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        return "\(temporaryPrefix)\(random.hexString).\(temporaryExtension)"
    }

    /// The key digest a body file belongs to, or `nil` if `name` is not a body file's name.
    static func keyDigest(ofBodyFile name: String) -> Substring? {
        guard isBodyFileName(name) else { return nil }
        return name.prefix(64)
    }

    /// `<64 hex>-<uuid>.body`, nothing else (so a head can never name a file outside the store).
    static func isBodyFileName(_ name: String) -> Bool {
        guard name.hasSuffix(".\(bodyExtension)"), name.utf8.count == 64 + 1 + 36 + 1 + bodyExtension.utf8.count else { return false }
        let allowed = Set("0123456789abcdef-.body".utf8)
        return name.utf8.allSatisfy(allowed.contains) && name.utf8.dropFirst(64).first == UInt8(ascii: "-")
    }

    static func isHeadFileName(_ name: String) -> Bool {
        name.hasSuffix(".\(headExtension)") && name.utf8.count == 64 + 1 + headExtension.utf8.count
    }

    static func isTemporaryFileName(_ name: String) -> Bool {
        name.hasPrefix(temporaryPrefix) && name.hasSuffix(".\(temporaryExtension)")
    }
}

// The metadata line through Courier's own JSON parser and writer: `JSONDecoder` took as long as the
// rest of reading a 10 KiB entry from disk (`Benchmarks/PROFILES.md`, workload M-warm). The text is
// the same JSON `Codable` reads and writes (absent optionals omitted), so either can read the other's.
extension CacheEntryFormat.Metadata {
    /// The metadata in `json`, or nil when a field is missing or of the wrong type.
    init?(json: JSON) {
        guard let key = json["key"]?.stringValue, let statusCode = json["statusCode"]?.intValue,
            let pairs = json["headers"]?.arrayValue, let requestTime = json["requestTime"]?.doubleValue,
            let responseTime = json["responseTime"]?.doubleValue,
            let requestHadAuthorization = json["requestHadAuthorization"]?.boolValue,
            let length = json["bodyLength"]?.doubleValue, let bodyLength = Int64(exactly: length)
        else { return nil }
        var headers: [[String]] = []
        headers.reserveCapacity(pairs.count)
        for pair in pairs {
            guard let strings = pair.arrayValue else { return nil }
            let values = strings.compactMap(\.stringValue)
            guard values.count == strings.count else { return nil }
            headers.append(values)
        }
        var varying: [String: String]?
        switch json["varyingRequestHeaders"] {
        case nil, .null?: varying = nil
        case .object(let members)?:
            varying = members.compactMapValues(\.stringValue)
            guard varying?.count == members.count else { return nil }
        default: return nil
        }
        guard let url = Self.optionalString(json["url"]), let bodyFile = Self.optionalString(json["bodyFile"]),
            let bodyChecksum = Self.optionalString(json["bodyChecksum"])
        else { return nil }
        var version: Int?
        switch json["version"] {
        case nil, .null?: version = nil
        case let value?:
            guard let number = value.intValue else { return nil }
            version = number
        }
        self.init(
            key: key, statusCode: statusCode, headers: headers, requestTime: requestTime, responseTime: responseTime,
            varyingRequestHeaders: varying, requestHadAuthorization: requestHadAuthorization, url: url, version: version,
            bodyFile: bodyFile, bodyLength: bodyLength, bodyChecksum: bodyChecksum)
    }

    /// An optional string field: `.some(nil)` when absent or null, nil when of another type.
    private static func optionalString(_ value: JSON?) -> String?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let string)?: return .some(string)
        default: return nil
        }
    }

    /// The metadata as JSON (absent optionals omitted, as `Codable` writes them).
    var json: JSON {
        var members: [String: JSON] = [
            "key": .string(key), "statusCode": .number(Double(statusCode)),
            "headers": .array(headers.map { .array($0.map(JSON.string)) }),
            "requestTime": .number(requestTime), "responseTime": .number(responseTime),
            "requestHadAuthorization": .bool(requestHadAuthorization), "bodyLength": .number(Double(bodyLength)),
        ]
        if let varyingRequestHeaders { members["varyingRequestHeaders"] = .object(varyingRequestHeaders.mapValues(JSON.string)) }
        if let url { members["url"] = .string(url) }
        if let version { members["version"] = .number(Double(version)) }
        if let bodyFile { members["bodyFile"] = .string(bodyFile) }
        if let bodyChecksum { members["bodyChecksum"] = .string(bodyChecksum) }
        return .object(members)
    }
}
