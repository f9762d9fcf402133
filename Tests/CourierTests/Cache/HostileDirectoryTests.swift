import Foundation
import Testing
import CourierTestSupport
@testable import Courier

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ResponseCacheStore {
    /// The cache directory is input too (issue 36): what another process, another user or a
    /// damaged disk leaves under a store file's name is never followed, never blocks, and is
    /// never written through. Each test plants one thing and drives the store directly; the
    /// hostile-server matrix (``HostileCacheDirectoryTests``) plays the same through requests.
    @Suite("ResponseCacheStore: hostile directory") struct HostileDirectoryTests {
        typealias Fixtures = CacheDirectoryFixtures

        static let inlineBody = Data("a small body, inline in its head".utf8)
        static let fileBody = StoreFixtures.body(200 << 10, seed: 36)

        /// A cache on a new directory holding one entry for `key`.
        static func storedEntry(_ label: String, key: ResponseCacheKey, body: Data) throws -> (ResponseCache, URL) {
            let directory = makeTemporaryDirectory(label)
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            try #require(StoreFixtures.write(cache, key, body) != nil)
            return (cache, directory)
        }

        // MARK: Links

        /// The security defect: a head replaced by a link to a file elsewhere came back, after
        /// the next write of its key, as a spare temporary file (``CacheSpareFiles``) opened
        /// through the link, and the write after that overwrote and cut the link's target.
        @Test func aHeadReplacedByALinkNeverGetsItsTargetWritten() throws {
            let key = StoreFixtures.key("linked-head")
            let (cache, directory) = try Self.storedEntry("hostile-link-head", key: key, body: Self.inlineBody)
            let victim = try Fixtures.Victim.make("head")
            defer {
                try? FileManager.default.removeItem(at: directory)
                victim.remove()
            }
            let head = StoreFixtures.headFile(key, in: directory)
            try Fixtures.replaceWithLink(head, to: victim.url)

            #expect(cache.entry(for: key) == nil, "a link is no entry")
            // The key written again (the link is replaced), then other keys, using any spare.
            try #require(StoreFixtures.write(cache, key, Data("again".utf8)) != nil)
            for index in 0..<6 { try #require(StoreFixtures.write(cache, StoreFixtures.key("other-\(index)"), Data("o\(index)".utf8)) != nil) }
            _ = cache.updateHead(for: key, StoreFixtures.head(headers: ["ETag": "\"changed\""]))

            #expect(victim.isIntact, "the link's target was written: \((try? Data(contentsOf: victim.url))?.prefix(80) ?? Data())")
            #expect(Fixtures.kind(head) == S_IFREG, "the key's head is a file of the store again")
            #expect(ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key)?.body.readAll() == Data("again".utf8))
            let links = StoreFixtures.names(in: directory).filter { Fixtures.kind(directory.appendingPathComponent($0)) == S_IFLNK }
            #expect(links.isEmpty, "no link is kept: \(links)")
        }

        /// A body file replaced by a link to a valid copy of itself elsewhere: never read.
        @Test func aBodyFileReplacedByALinkIsAMissAndItsTargetIsNeverRead() throws {
            let key = StoreFixtures.key("linked-body")
            let (_, directory) = try Self.storedEntry("hostile-link-body", key: key, body: Self.fileBody)
            let outside = makeTemporaryDirectory("outside-body")
            try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
            defer {
                try? FileManager.default.removeItem(at: directory)
                try? FileManager.default.removeItem(at: outside)
            }
            let body = directory.appendingPathComponent(try #require(StoreFixtures.bodyFiles(in: directory).first))
            let copy = outside.appendingPathComponent("copy.body")
            try FileManager.default.copyItem(at: body, to: copy)
            let copied = try Data(contentsOf: copy)
            try Fixtures.replaceWithLink(body, to: copy)

            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            #expect(cache.entry(for: key) == nil, "the body is reached through a link: a miss")
            cache.scanDisk()
            #expect(Fixtures.kind(body) == nil, "the scan removed the link")
            #expect((try? Data(contentsOf: copy)) == copied, "and left its target alone")
        }

        /// A link named like a temporary file: the scan removes the name only.
        @Test func aTemporaryFileReplacedByALinkIsRemovedByNameOnly() throws {
            let directory = makeTemporaryDirectory("hostile-link-temporary")
            let victim = try Fixtures.Victim.make("temporary")
            defer {
                try? FileManager.default.removeItem(at: directory)
                victim.remove()
            }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            try #require(StoreFixtures.write(cache, StoreFixtures.key("t"), Data("t".utf8)) != nil)
            let temporary = directory.appendingPathComponent("courier-0123456789abcdef0123456789abcdef.tmp")
            try Fixtures.replaceWithLink(temporary, to: victim.url)
            #expect(cache.diskSize < Int64(victim.contents.count), "a link is not counted as the store's bytes")
            cache.scanDisk()
            #expect(Fixtures.kind(temporary) == nil)
            #expect(victim.isIntact)
        }

        // MARK: FIFOs

        /// A FIFO named like a head, a body or a temporary file: opening one to read blocked
        /// until a writer came, which never does, so the first request (or scan) hung for ever.
        @Test(arguments: ["head", "body", "temporary"])
        func aFIFONamedLikeAStoreFileNeverBlocks(_ which: String) async throws {
            let key = StoreFixtures.key("fifo-\(which)")
            let (_, directory) = try Self.storedEntry("hostile-fifo-\(which)", key: key, body: Self.fileBody)
            defer { try? FileManager.default.removeItem(at: directory) }
            let planted: URL
            switch which {
            case "head": planted = StoreFixtures.headFile(key, in: directory)
            case "body": planted = directory.appendingPathComponent(try #require(StoreFixtures.bodyFiles(in: directory).first))
            default: planted = directory.appendingPathComponent("courier-00112233445566778899aabbccddeeff.tmp")
            }
            try Fixtures.replaceWithFIFO(planted)

            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let release: @Sendable () -> Void = { Fixtures.releaseFIFOReaders(in: directory) }
            let found = await Fixtures.withWatchdog("reading the entry", release: release) { cache.entry(for: key) != nil }
            if which != "temporary" { #expect(found == false, "a FIFO is no \(which)") }
            _ = await Fixtures.withWatchdog("a scan", release: release) { cache.scanDisk() }
            #expect(Fixtures.kind(planted) != S_IFIFO, "the scan removed the FIFO")
            let stored = await Fixtures.withWatchdog("storing the key again", release: release) {
                StoreFixtures.write(cache, key, Data("after".utf8)) != nil
            }
            #expect(stored == true)
            #expect(cache.entry(for: key)?.body.readAll() == Data("after".utf8))
        }

        // MARK: Kinds and owners

        /// A directory where a head should be: a miss, never moved or removed, and the key is
        /// simply not stored (no file can take the name).
        @Test func aDirectoryWhereAHeadShouldBeIsLeftAlone() throws {
            let key = StoreFixtures.key("directory-head")
            let (cache, directory) = try Self.storedEntry("hostile-directory-head", key: key, body: Self.inlineBody)
            defer { try? FileManager.default.removeItem(at: directory) }
            let head = StoreFixtures.headFile(key, in: directory)
            try Fixtures.replaceWithDirectory(head)
            #expect(cache.entry(for: key) == nil)
            _ = StoreFixtures.write(cache, key, Data("again".utf8))
            _ = StoreFixtures.write(cache, StoreFixtures.key("next"), Data("next".utf8))
            cache.scanDisk()
            #expect(Fixtures.kind(head) == S_IFDIR, "the directory is still where it was")
            #expect(
                StoreFixtures.names(in: directory).filter { $0.hasSuffix(".tmp") && Fixtures.kind(directory.appendingPathComponent($0)) == S_IFDIR }
                    .isEmpty)
            #expect(cache.entry(for: StoreFixtures.key("next"))?.body.readAll() == Data("next".utf8))
        }

        /// A head owned by another user is not the store's: a miss, and the next write replaces it.
        @Test(.enabled(if: CacheDirectoryFixtures.canChownOrSaySo, "giving a file to another user needs root"))
        func aHeadOwnedBySomeoneElseIsAMiss() throws {
            let key = StoreFixtures.key("foreign-head")
            let (cache, directory) = try Self.storedEntry("hostile-owner-head", key: key, body: Self.inlineBody)
            defer { try? FileManager.default.removeItem(at: directory) }
            let head = StoreFixtures.headFile(key, in: directory)
            try Fixtures.giveAway(head)
            #expect(cache.entry(for: key) == nil, "another user's file is never read")
            try #require(StoreFixtures.write(cache, key, Data("mine".utf8)) != nil)
            #expect(cache.entry(for: key)?.body.readAll() == Data("mine".utf8))
            var info = stat()
            #expect(lstat(head.path, &info) == 0 && info.st_uid == geteuid(), "the head is this user's again")
        }

        /// A head that is a second link to a file (a hard link) is not written through either: here
        /// a `304` that changes the head rewrites it without reading it first (the memory tier
        /// holds the entry), which swapped the link out as a spare and wrote the next head into it.
        @Test func aHeadHardLinkedToAnotherFileIsNeverWritten() throws {
            let directory = makeTemporaryDirectory("hostile-hard-link")
            let victim = try Fixtures.Victim.make("hard-link")
            defer {
                try? FileManager.default.removeItem(at: directory)
                victim.remove()
            }
            let cache = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("hard-linked-head")
            try #require(StoreFixtures.write(cache, key, Self.inlineBody, head: StoreFixtures.head(headers: ["ETag": "\"1\""])) != nil)
            let head = StoreFixtures.headFile(key, in: directory)
            try FileManager.default.removeItem(at: head)
            guard link(victim.url.path, head.path) == 0 else {
                // The temporary directory spans file systems here: nothing to test.
                return
            }
            _ = cache.updateHead(for: key, StoreFixtures.head(headers: ["ETag": "\"2\"", "X-Changed": "yes"]))
            for index in 0..<6 { _ = StoreFixtures.write(cache, StoreFixtures.key("hard-\(index)"), Data("h\(index)".utf8)) }
            #expect(victim.isIntact, "the hard link's other name was written")
            #expect(ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key)?.head.headers["X-Changed"] == "yes")
        }

        /// A cache directory owned by another user is not used at all: nothing read, nothing
        /// written, nothing removed.
        @Test(.enabled(if: CacheDirectoryFixtures.canChownOrSaySo, "giving a directory to another user needs root"))
        func aDirectoryOwnedBySomeoneElseIsNotUsed() throws {
            let key = StoreFixtures.key("foreign-directory")
            let (_, directory) = try Self.storedEntry("hostile-owner-directory", key: key, body: Self.inlineBody)
            defer { try? FileManager.default.removeItem(at: directory) }
            try Fixtures.giveAway(directory)
            let before = StoreFixtures.names(in: directory)
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            #expect(cache.entry(for: key) == nil, "nothing is read from another user's directory")
            _ = StoreFixtures.write(cache, StoreFixtures.key("new"), Data("new".utf8))
            cache.removeAll()
            cache.scanDisk()
            #expect(StoreFixtures.names(in: directory) == before, "nothing written or removed there")
        }

        /// A directory the cache creates is private to its user.
        @Test func theDirectoryIsCreatedPrivate() throws {
            let parent = makeTemporaryDirectory("private-parent")
            defer { try? FileManager.default.removeItem(at: parent) }
            let directory = parent.appendingPathComponent("cache")
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            try #require(StoreFixtures.write(cache, StoreFixtures.key("p"), StoreFixtures.body(100 << 10, seed: 1)) != nil)
            var info = stat()
            #expect(stat(directory.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700, "mode \(String(info.st_mode & 0o777, radix: 8))")
            for name in StoreFixtures.names(in: directory) {
                #expect(stat(directory.appendingPathComponent(name).path, &info) == 0 && info.st_mode & 0o077 == 0, "\(name) is private")
            }
        }
    }
}
