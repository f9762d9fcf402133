import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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

    /// The largest journal file read, 1 MiB: a journal holds a URL, two validators and a few
    /// numbers; a larger file is not one the store wrote, and is read as no journal.
    static let maximumFileSize = 1 << 20

    /// Reads a journal; `nil` for a missing, truncated, garbage, oversized or future-version file,
    /// and for anything but a kept file (``KeptFiles``): a link, a FIFO, a directory, another
    /// user's file or a file with other links is never opened, so never followed nor waited on.
    static func load(from url: URL) -> DownloadJournal? {
        guard let (descriptor, info) = KeptFiles.openExisting(url.path, access: O_RDONLY) else { return nil }
        defer { _ = close(descriptor) }
        guard let data = KeptFiles.readAll(descriptor, info: info, limit: maximumFileSize),
            let journal = try? JSONDecoder().decode(DownloadJournal.self, from: data),
            journal.version == currentVersion, journal.durableLength >= 0
        else { return nil }
        return journal
    }

    /// Writes the journal atomically: to `<journal>.tmp` beside it (a kept file, created `0600`:
    /// whatever else had that name is removed, never written through), then renamed over it
    /// (which replaces the name, never a link's target). The temporary file
    /// has a name of the store's own (not Foundation's hidden one), so the store can clear what a
    /// process killed mid-write leaves (``temporaryURL(for:)``).
    func save(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let temporary = Self.temporaryURL(for: url)
        do throws(CourierError) {
            let data: Data
            do {
                data = try encoder.encode(self)
            } catch {
                throw CourierError(.fileSystem, "Could not encode the download journal.", underlyingError: error, url: url)
            }
            let (descriptor, _) = try CourierError.mappingFileSystem { () throws(FileSystemFailure) in
                try KeptFiles.openOrCreate(temporary, access: O_WRONLY, what: "the download journal's temporary file")
            }
            let written = data.withUnsafeBytes { DescriptorIO.writeAll(descriptor, $0) } && ftruncate(descriptor, off_t(data.count)) == 0
            let code = errno
            _ = close(descriptor)
            guard written else {
                throw CourierError(
                    .fileSystem, "Could not write the download journal \(temporary.path): \(String(cString: strerror(code))).", url: url)
            }
            guard rename(temporary.path, url.path) == 0 else {
                let reason = errno == EISDIR ? "a directory is where the journal should be" : String(cString: strerror(errno))
                throw CourierError(.fileSystem, "Could not rename \(temporary.path) to \(url.path): \(reason).", url: url)
            }
        } catch {
            KeptFiles.removeName(temporary.path)
            throw error
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
