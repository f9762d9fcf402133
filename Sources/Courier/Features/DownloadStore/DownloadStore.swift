import Foundation
import CourierLocking

/// Keeps partial downloads on disk so that they continue after a cancel, a failure or the death
/// of the process: the session's request-cache manager for downloads.
///
/// Each resumable download has a `.part` file (bytes appended as they arrive), a small journal
/// (URL, validator, expected length, bytes durably written) and a lock file, all named after a
/// hash of the method and URL. The lock keeps two sessions or processes from writing the same
/// partial: the second fails at once with a `.resumeFailed` error that says so.
public final class DownloadStore: Sendable {
    /// Where partial files and journals live.
    public let directory: URL
    /// Bytes written between two durability checkpoints (fsync + journal); also one per second.
    let checkpointBytes: Int64
    private let active = Locked([String: WeakDownload]())

    /// Creates a store in `directory` (created on first use).
    public convenience init(directory: URL) {
        self.init(directory: directory, checkpointBytes: 8 << 20)
    }

    init(directory: URL, checkpointBytes: Int64) {
        self.directory = directory
        self.checkpointBytes = checkpointBytes
    }

    /// A per-user cache directory: `$XDG_CACHE_HOME/courier/downloads` or `~/.cache/courier/downloads`
    /// on Linux, `Caches/Courier/Downloads` on Apple platforms.
    public static var defaultDirectory: URL {
        #if os(Linux)
        let base =
            ProcessInfo.processInfo.environment["XDG_CACHE_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache")
        return base.appendingPathComponent("courier/downloads", isDirectory: true)
        #else
        let base = FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("Courier/Downloads", isDirectory: true)
        #endif
    }

    // MARK: - Public API

    /// The resumable download of `url` running in this store right now, to suspend, resume or cancel it.
    ///
    /// `url` is matched the way the download was made: an absolute URL is compared after
    /// standardizing (`/a/./b/../c` is `/a/c`), and a relative one (`"files/big.iso"`) is first
    /// resolved against the base URL of the session each active download belongs to.
    ///
    /// ```swift
    /// let api = Session(baseURL: URL(string: "https://example.com/v2/"), downloadStore: store)
    /// let download = api.download("files/big.iso", resumable: true)
    /// store.activeDownload(for: "files/big.iso")?.suspend()   // same as ".../v2/files/big.iso"
    /// ```
    public func activeDownload(for url: any URLConvertible) -> DownloadRequest? {
        guard let url = try? url.asURL() else { return nil }
        return active.withLock { active in
            if url.scheme != nil { return active[Self.activeKey(url)]?.request }
            return active.lazy.compactMap { key, entry -> DownloadRequest? in
                guard let request = entry.request, let resolved = request.session.resolvedWithoutChecks(url) else { return nil }
                return Self.activeKey(resolved) == key ? request : nil
            }.first
        }
    }

    /// Every partial download on disk, newest first.
    public func partialDownloads() -> [PartialDownload] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".journal") }.compactMap { name -> PartialDownload? in
            let journalURL = directory.appendingPathComponent(name)
            guard let journal = DownloadJournal.load(from: journalURL), let url = URL(string: journal.url) else { return nil }
            let partURL = journalURL.deletingPathExtension().appendingPathExtension("part")
            let size = (try? FileManager.default.attributesOfItem(atPath: partURL.path)[.size] as? NSNumber)?.int64Value ?? 0
            return PartialDownload(
                url: url, bytesOnDisk: size, expectedLength: journal.expectedLength,
                validator: journal.validator, lastUpdated: journal.updatedAt)
        }.sorted { $0.lastUpdated > $1.lastUpdated }
    }

    /// Removes the partial download of `url`; returns `false` if a download is using it right now.
    @discardableResult
    public func discard(_ url: any URLConvertible, method: HTTPMethod = .get) -> Bool {
        guard let url = try? url.asURL() else { return false }
        let paths = Paths(directory: directory, key: Self.key(url: url, method: method))
        guard let lock = try? FileLock(url: paths.lock) else { return false }
        defer { lock.releaseRemovingFile() }
        paths.removeData()
        return true
    }

    /// Removes partial downloads not touched for `age` seconds (skipping those in use); returns how many.
    @discardableResult
    public func prune(olderThan age: TimeInterval) -> Int {
        let cutoff = Date().addingTimeInterval(-age)
        var removed = 0
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix(".journal") || name.hasSuffix(".part") || name.hasSuffix(".journal.tmp") {
            let key = String(name.prefix { $0 != "." })
            let paths = Paths(directory: directory, key: key)
            let updated =
                DownloadJournal.load(from: paths.journal)?.updatedAt
                ?? ((try? FileManager.default.attributesOfItem(atPath: paths.part.path)[.modificationDate]) as? Date)
                ?? .distantPast
            guard updated < cutoff, let lock = try? FileLock(url: paths.lock) else { continue }
            let temporary = DownloadJournal.temporaryURL(for: paths.journal)
            if FileManager.default.fileExists(atPath: paths.journal.path) || FileManager.default.fileExists(atPath: paths.part.path)
                || FileManager.default.fileExists(atPath: temporary.path)
            {
                paths.removeData()
                removed += 1
            }
            lock.releaseRemovingFile()
        }
        // Lock files whose data is gone (left by a killed process, or by an older Courier).
        for name in names where name.hasSuffix(".lock") {
            let paths = Paths(directory: directory, key: String(name.prefix { $0 != "." }))
            if !FileManager.default.fileExists(atPath: paths.journal.path), !FileManager.default.fileExists(atPath: paths.part.path) {
                _ = FileLock.isFree(paths.lock)
            }
        }
        return removed
    }

    // MARK: - Internals

    func makeSink(destination: DownloadDestination, temporaryDirectory: URL, integrity: DownloadIntegrity? = nil) -> StoreBodySink {
        StoreBodySink(store: self, destination: destination, temporaryDirectory: temporaryDirectory, integrity: integrity)
    }

    /// The store's files for one download, locked for the caller.
    final class Entry {
        let url: URL
        let method: HTTPMethod
        let paths: Paths
        let lock: FileLock
        var journal: DownloadJournal?

        init(url: URL, method: HTTPMethod, paths: Paths, lock: FileLock, journal: DownloadJournal?) {
            self.url = url
            self.method = method
            self.paths = paths
            self.lock = lock
            self.journal = journal
        }

        var partURL: URL { paths.part }

        var partSize: Int64 {
            (try? FileManager.default.attributesOfItem(atPath: paths.part.path)[.size] as? NSNumber)?.int64Value ?? 0
        }

        func saveJournal() throws {
            try journal?.save(to: paths.journal)
        }

        func removeJournal() {
            try? FileManager.default.removeItem(at: paths.journal)
        }

        /// Forgets the partial: the next bytes start a new one.
        func reset() throws {
            journal = nil
            paths.removeData()
        }
    }

    /// Opens (and locks) the entry for `url`; a corrupt or mismatching journal means a clean start.
    func open(url: URL, method: HTTPMethod) throws -> Entry {
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CourierError(.fileSystem, "Could not create the download store at \(directory.path).", underlyingError: error, url: url)
        }
        let paths = Paths(directory: directory, key: Self.key(url: url, method: method))
        guard let lock = try FileLock(url: paths.lock) else {
            throw CourierError(
                .resumeFailed,
                "Another download of \(url.absoluteString) is using its partial file (in another session or process); try again when it has finished.",
                url: url)
        }
        var journal = DownloadJournal.load(from: paths.journal)
        if journal == nil || journal?.url != url.absoluteString || journal?.method != method.rawValue
            || !FileManager.default.fileExists(atPath: paths.part.path)
        {
            journal = nil
            paths.removeData()
        }
        return Entry(url: url, method: method, paths: paths, lock: lock, journal: journal)
    }

    func markActive(_ request: DownloadRequest?, url: URL) {
        active.withLock { $0[Self.activeKey(url)] = WeakDownload(request: request) }
    }

    func markInactive(url: URL) {
        _ = active.withLock { $0.removeValue(forKey: Self.activeKey(url)) }
    }

    /// The key of an active download: the standardized absolute URL.
    private static func activeKey(_ url: URL) -> String {
        url.absoluteURL.standardized.absoluteString
    }

    static func key(url: URL, method: HTTPMethod) -> String {
        String(SHA256.hash(Data("\(method.rawValue) \(url.absoluteString)".utf8)).hexString.prefix(40))
    }

    /// The three files of one entry.
    struct Paths {
        let part: URL
        let journal: URL
        let lock: URL

        init(directory: URL, key: String) {
            part = directory.appendingPathComponent("\(key).part")
            journal = directory.appendingPathComponent("\(key).journal")
            lock = directory.appendingPathComponent("\(key).lock")
        }

        func removeData() {
            try? FileManager.default.removeItem(at: part)
            try? FileManager.default.removeItem(at: journal)
            try? FileManager.default.removeItem(at: DownloadJournal.temporaryURL(for: journal))
        }
    }

    private struct WeakDownload: Sendable {
        weak var request: DownloadRequest?
    }
}

/// A download the store can continue.
public struct PartialDownload: Sendable, Hashable {
    /// The URL it came from.
    public let url: URL
    /// Bytes already on disk.
    public let bytesOnDisk: Int64
    /// The full length, if the server announced it.
    public let expectedLength: Int64?
    /// The ETag or Last-Modified it will be resumed against.
    public let validator: String?
    /// When bytes were last recorded.
    public let lastUpdated: Date
}
