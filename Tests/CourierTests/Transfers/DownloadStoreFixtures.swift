import Foundation
import Testing
@testable import Courier
import CourierTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A partial download written straight into a store directory, as a killed process leaves it: a
/// `.part` file holding the first bytes of a ``PatternBody`` resource and a journal that says
/// they are durable. The hostile-directory tests plant something beside or in place of one of
/// its files.
enum DownloadStoreFixtures {
    /// The resource the planted partial belongs to.
    static let etag = "\"v1\""
    static let seed: UInt64 = 36

    /// Writes a partial of `count` of `total` bytes of the resource at `url` into `directory`
    /// (created if needed) and returns the entry's file names.
    @discardableResult
    static func plantPartial(in directory: URL, url: URL, count: Int, total: Int64) throws -> DownloadStore.Paths {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let paths = DownloadStore.Paths(directory: directory, key: DownloadStore.key(url: url, method: .get))
        try PatternBody.data(offset: 0, count: count, seed: seed).write(to: paths.part)
        try journal(url: url, count: count, total: total).save(to: paths.journal)
        return paths
    }

    /// The journal of a partial of `count` of `total` bytes, written in this boot.
    static func journal(url: URL, count: Int, total: Int64) -> DownloadJournal {
        DownloadJournal(
            url: url.absoluteString, method: "GET", etag: etag, lastModified: nil, expectedLength: total,
            durableLength: Int64(count), bootID: BootIdentity.current, createdAt: Date(), updatedAt: Date())
    }

    /// The names in `directory`, sorted.
    static func names(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    /// The permission bits of the name at `url` (`lstat`).
    static func mode(_ url: URL) -> mode_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_mode & 0o777
    }

    /// The owner of the name at `url` (`lstat`).
    static func owner(_ url: URL) -> uid_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_uid
    }

    /// Replaces the file at `url` with a second (hard) link to `target`; `false` when the two
    /// are on different file systems (nothing to test then).
    static func replaceWithHardLink(_ url: URL, to target: URL) throws -> Bool {
        try? FileManager.default.removeItem(at: url)
        return link(target.path, url.path) == 0
    }
}
