import Foundation
import Testing
@testable import Courier
import CourierTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The download store's directory is input too (issue 36): what another process, another user or
/// a damaged disk leaves under one of the store's names is never followed, never waited on, never
/// written through, and a directory there is never removed. Each test plants one thing next to a
/// partial download and drives the store directly; ``HostileDownloadStoreTests`` plays the same
/// through requests on both transports.
@Suite("DownloadStore: hostile directory") struct DownloadStoreHostileDirectoryTests {
    typealias Fixtures = CacheDirectoryFixtures
    typealias Store = DownloadStoreFixtures

    static let url = URL(string: "http://127.0.0.1:9/files/big.bin")!
    static let count = 10_000
    static let total: Int64 = 50_000

    /// A store on a new directory holding a partial of the resource at ``url``.
    static func storeWithPartial(_ label: String) throws -> (DownloadStore, DownloadStore.Paths) {
        let directory = makeTemporaryDirectory("store-\(label)")
        let paths = try Store.plantPartial(in: directory, url: url, count: count, total: total)
        return (DownloadStore(directory: directory), paths)
    }

    static func temporary(_ paths: DownloadStore.Paths) -> URL {
        DownloadJournal.temporaryURL(for: paths.journal)
    }

    // MARK: FIFOs

    /// A FIFO where the journal is: reading it blocked until a writer came, which never does, so
    /// opening the entry (or listing the store, or pruning it) hung for ever.
    @Test func aJournalThatIsAFIFONeverBlocks() async throws {
        let (store, paths) = try Self.storeWithPartial("fifo-journal")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        try Fixtures.replaceWithFIFO(paths.journal)
        let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: store.directory) }

        let listed = await Fixtures.withWatchdog("listing the store", release: release) { store.partialDownloads().count }
        #expect(listed == 0, "a FIFO is no journal")
        let journal = await Fixtures.withWatchdog("opening the entry", release: release) {
            (try? store.open(url: Self.url, method: .get)).map { $0.journal == nil }
        }
        #expect(journal == true, "the entry starts afresh")
        #expect(Fixtures.kind(paths.journal) != S_IFIFO, "the FIFO's name was removed")
    }

    /// A FIFO named like the journal's temporary file: writing it blocked until a reader came.
    @Test func aJournalTemporaryFileThatIsAFIFONeverBlocks() async throws {
        let (store, paths) = try Self.storeWithPartial("fifo-temporary")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let entry = try store.open(url: Self.url, method: .get)
        #expect(entry.journal != nil)
        try Fixtures.replaceWithFIFO(Self.temporary(paths))
        let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: store.directory) }
        // The entry is used only by the watchdog's thread, which the test awaits before touching it again.
        nonisolated(unsafe) let held = entry
        let saved = await Fixtures.withWatchdog("saving the journal", release: release) { (try? held.saveJournal()) != nil }
        #expect(saved == true)
        #expect(DownloadJournal.load(from: paths.journal)?.durableLength == Int64(Self.count))
        #expect(Fixtures.kind(Self.temporary(paths)) == nil)
        entry.lock.releaseRemovingFile()
    }

    /// A FIFO where the lock file is: never locked, replaced by a lock file of the store's own.
    @Test func aLockFileThatIsAFIFOIsReplaced() async throws {
        let (store, paths) = try Self.storeWithPartial("fifo-lock")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        try Fixtures.replaceWithFIFO(paths.lock)
        let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: store.directory) }
        let kind = await Fixtures.withWatchdog("taking the lock", release: release) { () -> mode_t? in
            guard let lock = try? FileLock(url: paths.lock) else { return nil }
            defer { lock.releaseRemovingFile() }
            return Fixtures.kind(paths.lock)
        }
        #expect(kind == S_IFREG, "the lock is held on a regular file")
    }

    /// Pruning a store holding FIFOs and links under its names removes the names, and nothing else.
    @Test func pruningRemovesFIFOsAndLinksByName() async throws {
        let (store, paths) = try Self.storeWithPartial("prune")
        let victim = try Fixtures.Victim.make("prune")
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            victim.remove()
        }
        try Fixtures.replaceWithFIFO(paths.journal)
        try Fixtures.replaceWithLink(paths.part, to: victim.url)
        try Fixtures.replaceWithLink(Self.temporary(paths), to: victim.url)
        let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: store.directory) }
        let removed = await Fixtures.withWatchdog("pruning", release: release) { store.prune(olderThan: 0) }
        #expect(removed == 1)
        #expect(Store.names(in: store.directory).isEmpty, "left: \(Store.names(in: store.directory))")
        #expect(victim.isIntact)
    }

    // MARK: Links

    /// A journal replaced by a link to a valid journal elsewhere is never read: the entry starts
    /// afresh (no `Range` would be sent on the strength of a file outside the store).
    @Test func aJournalLinkedOutsideIsNeverRead() throws {
        let (store, paths) = try Self.storeWithPartial("link-journal")
        let outside = makeTemporaryDirectory("outside-journal")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            try? FileManager.default.removeItem(at: outside)
        }
        let copy = outside.appendingPathComponent("copy.journal")
        try FileManager.default.copyItem(at: paths.journal, to: copy)
        let copied = try Data(contentsOf: copy)
        try Fixtures.replaceWithLink(paths.journal, to: copy)

        #expect(store.partialDownloads().isEmpty, "a link is no journal")
        let entry = try store.open(url: Self.url, method: .get)
        #expect(entry.journal == nil)
        #expect(Fixtures.kind(paths.journal) == nil, "the link was removed")
        #expect((try? Data(contentsOf: copy)) == copied, "and its target left alone")
        entry.lock.releaseRemovingFile()
    }

    /// The security defect: the journal's temporary file replaced by a link to a file elsewhere
    /// got that file overwritten with the journal (`Data.write(to:)` follows links).
    @Test func aJournalTemporaryFileLinkedOutsideIsNeverWrittenThrough() throws {
        let (store, paths) = try Self.storeWithPartial("link-temporary")
        let victim = try Fixtures.Victim.make("journal-temporary")
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            victim.remove()
        }
        let entry = try store.open(url: Self.url, method: .get)
        try Fixtures.replaceWithLink(Self.temporary(paths), to: victim.url)
        try entry.saveJournal()
        #expect(victim.isIntact, "the link's target was written: \((try? Data(contentsOf: victim.url))?.prefix(80) ?? Data())")
        #expect(Fixtures.kind(paths.journal) == S_IFREG)
        #expect(DownloadJournal.load(from: paths.journal) == entry.journal)
        entry.lock.releaseRemovingFile()
    }

    /// A partial replaced by a link to a file elsewhere: the entry starts afresh, the link goes,
    /// and the next bytes go to a file of the store's own.
    @Test func aPartialLinkedOutsideStartsAfresh() throws {
        let (store, paths) = try Self.storeWithPartial("link-part")
        let victim = try Fixtures.Victim.make("part")
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            victim.remove()
        }
        try Fixtures.replaceWithLink(paths.part, to: victim.url)
        #expect(store.partialDownloads().first?.bytesOnDisk ?? 0 == 0, "a link holds none of the download's bytes")
        let entry = try store.open(url: Self.url, method: .get)
        #expect(entry.journal == nil, "the partial is not the store's: start afresh")
        #expect(entry.partSize == 0)
        #expect(Fixtures.kind(paths.part) == nil, "the link was removed")
        #expect(victim.isIntact)
        entry.lock.releaseRemovingFile()
    }

    /// A lock file that is a dangling link: taking the lock created the file the link names,
    /// outside the store (`open` with `O_CREAT` follows a link).
    @Test func aDanglingLinkForTheLockCreatesNothingOutside() throws {
        let (store, paths) = try Self.storeWithPartial("link-lock")
        let outside = makeTemporaryDirectory("outside-lock")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            try? FileManager.default.removeItem(at: outside)
        }
        let target = outside.appendingPathComponent("made-by-the-lock")
        try Fixtures.replaceWithLink(paths.lock, to: target)
        let lock = try #require(try FileLock(url: paths.lock))
        #expect(Fixtures.kind(paths.lock) == S_IFREG, "the lock is a file of the store's own")
        lock.releaseRemovingFile()
        #expect(Fixtures.kind(target) == nil, "a file appeared outside the store")
    }

    /// A partial that is a second (hard) link to a file elsewhere is not the store's: appending
    /// to it would have written the other file.
    @Test func aPartialHardLinkedElsewhereStartsAfresh() throws {
        let (store, paths) = try Self.storeWithPartial("hard-link")
        let victim = try Fixtures.Victim.make("hard-link-part")
        defer {
            try? FileManager.default.removeItem(at: store.directory)
            victim.remove()
        }
        // The temporary directory spans file systems here: nothing to test.
        guard try Store.replaceWithHardLink(paths.part, to: victim.url) else { return }
        let entry = try store.open(url: Self.url, method: .get)
        #expect(entry.journal == nil)
        #expect(Fixtures.kind(paths.part) == nil, "the second link was removed")
        #expect(victim.isIntact)
        entry.lock.releaseRemovingFile()
    }

    // MARK: Directories, sizes, owners

    /// A directory under one of the entry's names is never removed (a journal or partial
    /// directory used to be removed with everything in it); opening the entry fails, saying so.
    @Test(arguments: ["journal", "part", "temporary", "lock"])
    func aDirectoryUnderAStoreNameIsRefusedAndKept(_ which: String) throws {
        let (store, paths) = try Self.storeWithPartial("directory-\(which)")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        let planted =
            switch which {
            case "journal": paths.journal
            case "part": paths.part
            case "lock": paths.lock
            default: Self.temporary(paths)
            }
        try Fixtures.replaceWithDirectory(planted)
        let inside = planted.appendingPathComponent("keep.txt")
        try Data("mine".utf8).write(to: inside)

        let error = #expect(throws: CourierError.self) { try store.open(url: Self.url, method: .get) }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains("directory") == true, "\(error?.message ?? "")")
        _ = store.prune(olderThan: 0)
        _ = store.discard(Self.url)
        #expect(Fixtures.kind(planted) == S_IFDIR, "the directory stays")
        #expect((try? Data(contentsOf: inside)) == Data("mine".utf8), "with what it holds")
    }

    /// A journal larger than ``DownloadJournal/maximumFileSize`` is not read (it is not one the
    /// store wrote): the entry starts afresh.
    @Test func anOversizedJournalIsNoJournal() throws {
        let (store, paths) = try Self.storeWithPartial("oversized-journal")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        var padded = try Data(contentsOf: paths.journal)
        padded.append(Data(repeating: 0x20, count: DownloadJournal.maximumFileSize))
        try padded.write(to: paths.journal)
        #expect(DownloadJournal.load(from: paths.journal) == nil)
        #expect(store.partialDownloads().isEmpty)
    }

    /// A journal, partial or lock file owned by another user is never used: the entry starts
    /// afresh with files of this user's own.
    @Test(
        .enabled(if: CacheDirectoryFixtures.canChown, "SKIPPED: giving a file to another user needs root"),
        arguments: ["journal", "part", "lock"])
    func aFileOwnedBySomeoneElseIsNotUsed(_ which: String) throws {
        let (store, paths) = try Self.storeWithPartial("owner-\(which)")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        if which == "lock" { try Data().write(to: paths.lock) }
        let planted =
            switch which {
            case "journal": paths.journal
            case "part": paths.part
            default: paths.lock
            }
        try Fixtures.giveAway(planted)
        let entry = try store.open(url: Self.url, method: .get)
        if which != "lock" { #expect(entry.journal == nil, "another user's \(which) is not the store's") }
        #expect(Store.owner(paths.lock) == geteuid(), "the lock is this user's")
        #expect(Store.owner(planted) != Fixtures.otherUser, "another user's file was removed or replaced")
        entry.lock.releaseRemovingFile()
    }

    /// A store directory another user owns is not used at all: opening an entry fails with
    /// `.fileSystem`, and nothing is read, written or removed there.
    @Test(.enabled(if: CacheDirectoryFixtures.canChown, "SKIPPED: giving a directory to another user needs root"))
    func aStoreDirectoryOwnedBySomeoneElseIsRefused() throws {
        let (store, _) = try Self.storeWithPartial("owner-directory")
        defer { try? FileManager.default.removeItem(at: store.directory) }
        try Fixtures.giveAway(store.directory)
        let before = Store.names(in: store.directory)
        let error = #expect(throws: CourierError.self) { try store.open(url: Self.url, method: .get) }
        #expect(error?.kind == .fileSystem)
        #expect(error?.message.contains(store.directory.path) == true, "\(error?.message ?? "")")
        #expect(store.partialDownloads().isEmpty, "nothing read there")
        #expect(store.prune(olderThan: 0) == 0)
        #expect(store.discard(Self.url) == false)
        #expect(Store.names(in: store.directory) == before, "nothing written or removed there")
    }

    /// A file where the store directory should be fails with `.fileSystem`, and stays.
    @Test func aFileWhereTheStoreDirectoryShouldBeIsRefused() throws {
        let path = makeTemporaryDirectory("store-is-a-file")
        try Data("a file".utf8).write(to: path)
        defer { try? FileManager.default.removeItem(at: path) }
        let store = DownloadStore(directory: path)
        let error = #expect(throws: CourierError.self) { try store.open(url: Self.url, method: .get) }
        #expect(error?.kind == .fileSystem)
        #expect(store.partialDownloads().isEmpty)
        #expect((try? Data(contentsOf: path)) == Data("a file".utf8))
    }

    /// The store creates its directory private (0700) and its files readable by their owner only.
    @Test func theStoreIsCreatedPrivate() throws {
        let parent = makeTemporaryDirectory("store-private")
        defer { try? FileManager.default.removeItem(at: parent) }
        let store = DownloadStore(directory: parent.appendingPathComponent("store"))
        let entry = try store.open(url: Self.url, method: .get)
        entry.journal = Store.journal(url: Self.url, count: 0, total: Self.total)
        try entry.saveJournal()
        #expect(Store.mode(store.directory) == 0o700, "mode \(String(Store.mode(store.directory) ?? 0, radix: 8))")
        for name in Store.names(in: store.directory) {
            #expect(Store.mode(store.directory.appendingPathComponent(name)).map { $0 & 0o077 } == 0, "\(name) is private")
        }
        entry.lock.releaseRemovingFile()
    }
}
