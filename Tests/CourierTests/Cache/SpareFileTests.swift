import CourierSupport
import Foundation
import Testing
import CourierTestSupport
@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

extension ResponseCacheStore {
    /// A head rewritten on disk (a `304` that changes what the response says) swaps the new file
    /// in and keeps the replaced one to write the next head into, so a stream of rewrites creates
    /// no files (``CacheSpareFiles``, a ``FastPaths`` speed trick); the spares are locked while
    /// their cache lives, survive another cache's scan, and go with their cache.
    @Suite("ResponseCacheStore: spare files") struct SpareFileTests {
        static func inode(_ url: URL) -> UInt64? { CacheFileIO.status(url)?.inode }

        /// A head that says something new (not only new times), shorter as `maxAge` grows: a
        /// spare holding a longer head must be cut to the new one's length.
        static func head(maxAge: Int) -> CacheEntryHead {
            StoreFixtures.head(headers: [
                "ETag": "\"a\"", "Cache-Control": "max-age=\(maxAge)", "X-Padding": String(repeating: "p", count: 200 * max(0, 8 - maxAge)),
            ])
        }

        @Test func rewrittenHeadsReuseTheFilesTheyReplace() throws {
            let directory = makeTemporaryDirectory("store-spares")
            defer { try? FileManager.default.removeItem(at: directory) }
            // No memory tier: every update goes to disk.
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let key = StoreFixtures.key("spares")
            let body = Data("the body, inline".utf8)
            _ = try #require(StoreFixtures.write(cache, key, body, head: Self.head(maxAge: 1)))
            let headFile = StoreFixtures.headFile(key, in: directory)
            var replaced = try #require(Self.inode(headFile))

            for maxAge in 2...5 {
                let updated = try #require(cache.updateHead(for: key, Self.head(maxAge: maxAge)))
                #expect(updated.body.readAll() == body)
                let fromDisk = try #require(ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key))
                #expect(fromDisk.head.headers.value(for: "Cache-Control") == "max-age=\(maxAge)")
                #expect(fromDisk.body.readAll() == body)
                let spares = StoreFixtures.temporaryFiles(in: directory)
                #expect(StoreFixtures.leftoverTemporaryFiles(in: directory).isEmpty, "every temporary file is held")
                if FastPaths.isOn(.disk) {
                    #expect(spares.count == 1, "one spare: \(spares)")
                    let spare = try #require(spares.first.map { directory.appendingPathComponent($0) })
                    #expect(Self.inode(spare) == replaced, "the replaced head is the spare")
                } else {
                    #expect(spares.isEmpty, "without the fast paths every write creates a file and renames it")
                }
                replaced = try #require(Self.inode(headFile))
            }
            // After the first rewrite the two files take turns: no third inode.
            if FastPaths.isOn(.disk) {
                let spare = try #require(StoreFixtures.temporaryFiles(in: directory).first.map { directory.appendingPathComponent($0) })
                let pair = Set([Self.inode(headFile), Self.inode(spare)].compactMap { $0 })
                _ = try #require(cache.updateHead(for: key, Self.head(maxAge: 6)))
                let after = StoreFixtures.temporaryFiles(in: directory).first.map { directory.appendingPathComponent($0) }
                #expect(Set([Self.inode(headFile), after.flatMap(Self.inode)].compactMap { $0 }) == pair)
            }
        }

        @Test func sparesSurviveAnotherCachesScanAndGoWithTheirCache() throws {
            let directory = makeTemporaryDirectory("store-spares-scan")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = StoreFixtures.key("spares-scan")
            do {
                let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
                _ = try #require(StoreFixtures.write(cache, key, Data("x".utf8), head: Self.head(maxAge: 1)))
                _ = try #require(cache.updateHead(for: key, Self.head(maxAge: 2)))
                let held = StoreFixtures.temporaryFiles(in: directory)
                #expect(held.count == (FastPaths.isOn(.disk) ? 1 : 0))
                ResponseCache(memoryCapacity: 0, diskDirectory: directory).scanDisk()
                #expect(StoreFixtures.temporaryFiles(in: directory) == held, "a locked spare is not a leftover")
                // The spare still works after the scan.
                _ = try #require(cache.updateHead(for: key, Self.head(maxAge: 3)))
                let fromDisk = ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key)
                #expect(fromDisk?.head.headers.value(for: "Cache-Control") == "max-age=3")
            }
            #expect(StoreFixtures.temporaryFiles(in: directory).isEmpty, "a cache's spares are removed when it goes")
        }

        @Test(.enabled(if: FastPaths.isOnOrSaySo(.disk), "the spare files are a fast path (COURIER_FAST_PATHS=0)"))
        func aNewKeyTakesASpareInsteadOfCreatingAFile() throws {
            let directory = makeTemporaryDirectory("store-spares-new")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let first = StoreFixtures.key("first"), second = StoreFixtures.key("second")
            _ = try #require(StoreFixtures.write(cache, first, Data("1".utf8), head: Self.head(maxAge: 1)))
            _ = try #require(cache.updateHead(for: first, Self.head(maxAge: 2)))
            let spare = try #require(StoreFixtures.temporaryFiles(in: directory).first.map { directory.appendingPathComponent($0) })
            let spareInode = Self.inode(spare)
            _ = try #require(StoreFixtures.write(cache, second, Data("2".utf8), head: Self.head(maxAge: 1)))
            #expect(Self.inode(StoreFixtures.headFile(second, in: directory)) == spareInode, "the new head went into the spare")
            #expect(StoreFixtures.temporaryFiles(in: directory).isEmpty, "the spare was used")
            #expect(ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: second)?.body.readAll() == Data("2".utf8))
        }
    }
}
