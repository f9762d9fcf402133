import Foundation

/// The disk store's file format, version 2: pure encoding and decoding, no I/O.
///
/// An entry is a **head file** `<sha256 of key>.response`:
///
///     COURIER-RESPONSE 2\n
///     <metadata as one line of JSON>\n
///     <inline body: bodyLength bytes, only when bodyFile is absent>
///     \nsha256 <64 hex digits of everything above>\n
///
/// and, for a body too large to live inline, an immutable **body file** `<sha256 of key>-<uuid>.body`
/// named by the head: `COURIER-BODY 2\n` followed by exactly `bodyLength` bytes. A 304 rewrites
/// the head only. A head is valid only with the right magic and version, a matching checksum,
/// metadata that decodes and an inline body of the announced length; a body file only with its
/// magic and the announced size. Files of another version (`COURIER-RESPONSE 1` of earlier Courier
/// releases included) are never misread: they are misses, and the store removes them.
enum CacheEntryFormat {
    /// The schema version written and the only one read.
    static let version = 2
    static let headPrefix = Data("COURIER-RESPONSE ".utf8)
    static let headMagic = Data("COURIER-RESPONSE \(version)\n".utf8)
    static let bodyMagic = Data("COURIER-BODY \(version)\n".utf8)
    static let headExtension = "response"
    static let bodyExtension = "body"
    /// Temporary files: `courier-<uuid>.tmp`, locked by their writer while it lives.
    static let temporaryPrefix = "courier-"
    static let temporaryExtension = "tmp"
    private static let trailerTag = Data("\nsha256 ".utf8)
    private static let trailerLength = trailerTag.count + 64 + 1

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
        guard let line = try? JSONEncoder().encode(metadata) else { return nil }
        var file = headMagic
        file.append(line)
        file.append(UInt8(ascii: "\n"))
        file.append(inlineBody)
        let digest = SHA256.hash(file).hexString
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
        guard Data(digest) == Data(SHA256.hash(Data(covered)).hexString.utf8) else { return .invalid }
        let metadataStart = file.startIndex + headMagic.count
        guard let newline = covered[metadataStart...].firstIndex(of: UInt8(ascii: "\n")),
            let metadata = try? JSONDecoder().decode(Metadata.self, from: covered[metadataStart..<newline]),
            metadata.bodyLength >= 0
        else { return .invalid }
        let inline = covered[(newline + 1)...]
        if metadata.bodyFile == nil {
            guard Int64(inline.count) == metadata.bodyLength else { return .invalid }
        } else {
            guard inline.isEmpty, let name = metadata.bodyFile, isBodyFileName(name) else { return .invalid }
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
        "\(temporaryPrefix)\(UUID().uuidString.lowercased()).\(temporaryExtension)"
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
