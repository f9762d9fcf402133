import Foundation

/// The disk tier of ``ResponseCache``: one file per key in a directory, named by a hash of the
/// key, holding a metadata line and the body.
///
/// Files are written atomically (temporary file + rename), so a reader, another cache on the
/// same directory or a later process sees either the old entry or the new one, never a torn
/// file. A file that cannot be read back (truncated, another format, a hash collision) is
/// treated as absent. Every method does file I/O on the caller's thread and never throws:
/// the disk tier is best effort and a failure only means a cache miss.
struct DiskResponseStore: Sendable {
    static let fileExtension = "response"
    private static let magic = Data("COURIER-RESPONSE 1\n".utf8)

    /// What the metadata line holds.
    private struct Metadata: Codable {
        var key: String
        var statusCode: Int
        var headers: [[String]]
        var storedAt: Double
        var version: Int?
    }

    let directory: URL

    func fileURL(for key: ResponseCacheKey) -> URL {
        directory.appendingPathComponent("\(key.fileName).\(Self.fileExtension)", isDirectory: false)
    }

    /// The stored response for `key`, if a valid file for exactly that key exists.
    func read(_ key: ResponseCacheKey) -> CachedResponse? {
        guard let (storedKey, response) = Self.decode(try? Data(contentsOf: fileURL(for: key))),
              storedKey == key.rawValue else { return nil }
        return response
    }

    /// Writes `response` for `key`, replacing any earlier file.
    func write(_ response: CachedResponse, for key: ResponseCacheKey) {
        let metadata = Metadata(key: key.rawValue, statusCode: response.statusCode,
                                headers: response.headers.map { [$0.name, $0.value] },
                                storedAt: response.storedAt.timeIntervalSince1970, version: response.version)
        guard let line = try? JSONEncoder().encode(metadata) else { return }
        var file = Self.magic
        file.append(line)
        file.append(UInt8(ascii: "\n"))
        file.append(response.data)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try? file.write(to: fileURL(for: key), options: .atomic)
    }

    /// Deletes the file for `key`.
    func remove(_ key: ResponseCacheKey) {
        try? FileManager.default.removeItem(at: fileURL(for: key))
    }

    /// Deletes every cache file for which `shouldRemove` returns `true` (files that cannot be
    /// read count as removable); other files in the directory are left alone.
    func removeAll(where shouldRemove: (CachedResponse) -> Bool) {
        for url in cacheFiles() {
            let response = Self.decode(try? Data(contentsOf: url, options: .mappedIfSafe))?.1
            if response.map(shouldRemove) ?? true { try? FileManager.default.removeItem(at: url) }
        }
    }

    private func cacheFiles() -> [URL] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".\(Self.fileExtension)") }
            .map { directory.appendingPathComponent($0, isDirectory: false) }
    }

    /// Splits a file into its key and response; `nil` for anything that is not a valid entry.
    private static func decode(_ file: Data?) -> (String, CachedResponse)? {
        guard let file, file.starts(with: magic) else { return nil }
        let metadataStart = file.startIndex + magic.count
        guard let newline = file[metadataStart...].firstIndex(of: UInt8(ascii: "\n")),
              let metadata = try? JSONDecoder().decode(Metadata.self, from: file[metadataStart..<newline]) else { return nil }
        var headers = HTTPHeaders()
        for pair in metadata.headers where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
        let response = CachedResponse(statusCode: metadata.statusCode, headers: headers, data: Data(file[(newline + 1)...]),
                                      storedAt: Date(timeIntervalSince1970: metadata.storedAt), version: metadata.version)
        return (metadata.key, response)
    }
}
