import CourierSupport
import Foundation
import CourierLocking

/// Keeps partial downloads on disk so that they continue after a cancel, a failure or the death
/// of the process: the session's request-cache manager for downloads.
///
/// Each resumable download has a `.part` file (bytes appended as they arrive), a small journal
/// (URL, validator, expected length, bytes durably written) and a lock file, all named after a
/// hash of the method and URL. The lock keeps two sessions or processes from writing the same
/// partial: the second fails at once with a `.resumeFailed` error that says so.
///
/// The directory and its files are input too: the store uses a directory only if it is one that
/// this process's user owns (creating it `0700` when absent; anything else fails a download with
/// `.fileSystem`), and uses a file in it only if it is a regular file of that user with one link.
/// A link, a FIFO, a device or another user's file under one of the store's names is never
/// opened, followed or written through: it is removed and the download starts afresh; a directory
/// under one of them is never removed, and fails the download with `.fileSystem`.
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

    /// Every partial download on disk, newest first (none when the directory is not one the store
    /// may use: see ``DownloadStore``).
    public func partialDownloads() -> [PartialDownload] {
        return names().filter { $0.hasSuffix(".journal") }.compactMap { name -> PartialDownload? in
            let journalURL = directory.appendingPathComponent(name)
            guard let journal = DownloadJournal.load(from: journalURL), let url = URL(string: journal.url) else { return nil }
            let partURL = journalURL.deletingPathExtension().appendingPathExtension("part")
            let size = Self.keptStatus(partURL)?.size ?? 0
            return PartialDownload(
                url: url, bytesOnDisk: size, expectedLength: journal.expectedLength,
                validator: journal.validator, lastUpdated: journal.updatedAt)
        }.sorted { $0.lastUpdated > $1.lastUpdated }
    }

    /// Removes the partial download of `url`; returns `false` if a download is using it right now.
    @discardableResult
    public func discard(_ url: any URLConvertible, method: HTTPMethod = .get) -> Bool {
        guard let url = try? url.asURL(), KeptFiles.directoryState(directory) == .usable else { return false }
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
        let names = names()
        for name in names where name.hasSuffix(".journal") || name.hasSuffix(".part") || name.hasSuffix(".journal.tmp") {
            let key = String(name.prefix { $0 != "." })
            let paths = Paths(directory: directory, key: key)
            // Anything but the store's own files (a link, a FIFO...) counts as old: it goes.
            let updated = DownloadJournal.load(from: paths.journal)?.updatedAt ?? Self.keptStatus(paths.part)?.modified ?? .distantPast
            guard updated < cutoff, let lock = try? FileLock(url: paths.lock) else { continue }
            if paths.removeData() > 0 { removed += 1 }
            lock.releaseRemovingFile()
        }
        // Lock files whose data is gone (left by a killed process, or by an older Courier).
        for name in names where name.hasSuffix(".lock") {
            let paths = Paths(directory: directory, key: String(name.prefix { $0 != "." }))
            if KeptFiles.kind(atPath: paths.journal.path) == .absent, KeptFiles.kind(atPath: paths.part.path) == .absent {
                _ = FileLock.isFree(paths.lock)
            }
        }
        return removed
    }

    // MARK: - Internals

    /// The names in the directory; none when it is absent or not one the store may use.
    private func names() -> [String] {
        guard KeptFiles.directoryState(directory) == .usable else { return [] }
        return (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
    }

    /// The size and modification time of the file at `url` if it is a kept file (``KeptFiles``),
    /// without following a link; `nil` for anything else.
    static func keptStatus(_ url: URL) -> (size: Int64, modified: Date)? {
        guard let status = KeptFiles.status(atPath: url.path), status.isKept else { return nil }
        return (status.size, status.modified)
    }

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

        /// The size of the partial file, if it is a kept file (a link or a FIFO holds nothing).
        var partSize: Int64 {
            DownloadStore.keptStatus(paths.part)?.size ?? 0
        }

        func saveJournal() throws {
            try journal?.save(to: paths.journal)
        }

        func removeJournal() {
            KeptFiles.removeName(paths.journal.path)
        }

        /// Forgets the partial: the next bytes start a new one.
        func reset() throws {
            journal = nil
            paths.removeData()
        }
    }

    /// Opens (and locks) the entry for `url`; a corrupt or mismatching journal, or a partial file
    /// that is not a kept file (``KeptFiles``: a link, a FIFO, another user's...), means a clean
    /// start. A directory that is not the store's own, or a directory under one of the entry's
    /// names, is a `.fileSystem` error.
    func open(url: URL, method: HTTPMethod) throws -> Entry {
        try CourierError.mappingFileSystem { () throws(FileSystemFailure) in try KeptFiles.prepareDirectory(directory, for: "the download store") }
        let paths = Paths(directory: directory, key: Self.key(url: url, method: method))
        guard let lock = try FileLock(url: paths.lock) else {
            throw CourierError(
                .resumeFailed,
                "Another download of \(url.absoluteString) is using its partial file (in another session or process); try again when it has finished.",
                url: url)
        }
        try paths.checkNoDirectory(url: url)
        var journal = DownloadJournal.load(from: paths.journal)
        if journal == nil || journal?.url != url.absoluteString || journal?.method != method.rawValue
            || KeptFiles.kind(atPath: paths.part.path) != .kept
        {
            journal = nil
            paths.removeData()
        } else {
            // Under the lock nobody writes the journal: a temporary file beside it is what a killed
            // writer (or someone else) left.
            KeptFiles.removeName(DownloadJournal.temporaryURL(for: paths.journal).path)
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

        /// Removes the partial file, the journal and its temporary file (their names: a link
        /// goes, its target stays; a directory stays); returns how many names it removed.
        @discardableResult
        func removeData() -> Int {
            [part, journal, DownloadJournal.temporaryURL(for: journal)].filter { KeptFiles.removeName($0.path) }.count
        }

        /// Fails with `.fileSystem` when a directory has one of the entry's data names: the store
        /// never removes a directory, so it could neither write the partial nor its journal.
        func checkNoDirectory(url: URL) throws(CourierError) {
            for file in [part, journal, DownloadJournal.temporaryURL(for: journal)] where KeptFiles.kind(atPath: file.path) == .directory {
                throw CourierError(
                    .fileSystem, "A directory is where the download store keeps a file (\(file.path)); Courier never removes a directory: remove it.",
                    underlyingError: POSIXError(.EISDIR), url: url)
            }
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
