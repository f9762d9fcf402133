import Foundation

/// What the store remembers about one partial download, next to its `.part` file.
///
/// Written atomically (temporary file + rename) and only after the bytes it counts were
/// `fsync`ed, so ``durableLength`` never exceeds what is really on disk, whatever instant a
/// crash happens at.
struct DownloadJournal: Codable, Equatable {
    static let currentVersion = 1

    var version = DownloadJournal.currentVersion
    var url: String
    var method: String
    /// A strong ETag from the response that started the partial, if it had one.
    var etag: String?
    /// Its `Last-Modified`, if any.
    var lastModified: String?
    /// The full length, when the server announced it.
    var expectedLength: Int64?
    /// Bytes known to be on stable storage.
    var durableLength: Int64
    /// The boot the journal was last written in: within the same boot, bytes that `write()`
    /// accepted survive a killed process, so the file's size can be trusted beyond ``durableLength``.
    var bootID: String
    var createdAt: Date
    var updatedAt: Date

    /// The `If-Range` validator: the strong ETag, else Last-Modified.
    var validator: String? { etag ?? lastModified }

    /// Reads a journal; `nil` for a missing, truncated, garbage or future-version file.
    static func load(from url: URL) -> DownloadJournal? {
        guard let data = try? Data(contentsOf: url),
            let journal = try? JSONDecoder().decode(DownloadJournal.self, from: data),
            journal.version == currentVersion, journal.durableLength >= 0
        else { return nil }
        return journal
    }

    /// Writes the journal atomically: to `<journal>.tmp` beside it, then renamed over it. The
    /// temporary file has a name of the store's own (not Foundation's hidden one), so the store can
    /// clear what a process killed mid-write leaves (``temporaryURL(for:)``).
    func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temporary = Self.temporaryURL(for: url)
        do {
            try encoder.encode(self).write(to: temporary)
            guard rename(temporary.path, url.path) == 0 else {
                throw CourierError(.fileSystem, "Could not rename \(temporary.path) to \(url.path): \(String(cString: strerror(errno))).")
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw CourierError(.fileSystem, "Could not write the download journal \(url.path).", underlyingError: error, url: url)
        }
    }

    /// Where the journal at `url` is written before it is renamed into place.
    static func temporaryURL(for url: URL) -> URL {
        url.appendingPathExtension("tmp")
    }
}

/// Identifies the running boot of the machine, to tell a killed process from a crashed system.
enum BootIdentity {
    static let current: String = {
        #if os(Linux)
        if let id = try? String(contentsOfFile: "/proc/sys/kernel/random/boot_id", encoding: .utf8) {
            return id.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        #endif
        // Without a boot identifier, assume every start may follow a system crash (the safe side).
        let uptime = ProcessInfo.processInfo.systemUptime
        return "boot@\(Int(Date().timeIntervalSince1970 - uptime) / 10)"
    }()
}
