import Testing
import Foundation
@testable import Courier

extension ResponseCacheStore {
    /// Size bounds: least recently used eviction in memory and on disk, and the per-entry limit.
    @Suite("ResponseCacheStore: eviction") struct EvictionTests {
        /// Ten entries fill the disk; using the oldest makes it the newest, so the next write
        /// evicts the two used longest ago (down to 90% of the capacity), not it.
        @Test(arguments: [4000, 100 << 10])
        func theDiskEvictsTheLeastRecentlyUsedBeyondItsCapacity(bodySize: Int) throws {
            let directory = makeTemporaryDirectory("store-lru")
            defer { try? FileManager.default.removeItem(at: directory) }
            let time = TestTime()
            let key = { (index: Int) in StoreFixtures.key(String(format: "e%02d", index)) }
            // What one entry takes on disk.
            let probe = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            try #require(StoreFixtures.write(probe, key(99), StoreFixtures.body(bodySize, seed: 1)) != nil)
            let entrySize = probe.diskSize
            probe.removeAll()
            #expect(probe.diskSize == 0)

            let capacity = entrySize * 10 + entrySize / 2
            let cache = ResponseCache(
                memoryCapacity: 0, diskDirectory: directory, diskCapacity: capacity,
                maximumEntrySize: capacity, now: { time.now })
            for index in 0..<10 {
                try #require(StoreFixtures.write(cache, key(index), StoreFixtures.body(bodySize, seed: UInt64(index))) != nil)
                time.advance(by: .seconds(1))
            }
            #expect(cache.diskSize == entrySize * 10)
            #expect(cache.entry(for: key(0)) != nil)  // e00 is now the most recently used
            time.advance(by: .seconds(1))
            try #require(StoreFixtures.write(cache, key(10), StoreFixtures.body(bodySize, seed: 10)) != nil)

            let present = (0...10).filter { cache.entry(for: key($0)) != nil }
            #expect(present == [0] + Array(3...10), "e01 and e02 were used longest ago")
            #expect(cache.diskSize <= capacity / 10 * 9)
            #expect(StoreFixtures.bodyFiles(in: directory).count == (bodySize > 64 << 10 ? 9 : 0), "evicted bodies went with their heads")
        }

        @Test func memoryEvictsTheLeastRecentlyUsedWriterEntries() throws {
            let key = { (name: String) in StoreFixtures.key(name) }
            let body = StoreFixtures.body(1000, seed: 4)
            let probe = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: nil)
            try #require(StoreFixtures.write(probe, key("a"), body) != nil)
            let cost = probe.memoryCost
            let cache = ResponseCache(memoryCapacity: cost * 3, diskDirectory: nil, maximumEntrySize: 1 << 20, now: { Date() })
            for name in ["a", "b", "c"] { try #require(StoreFixtures.write(cache, key(name), body) != nil) }
            #expect(cache.entry(for: key("a")) != nil)
            try #require(StoreFixtures.write(cache, key("d"), body) != nil)
            #expect(cache.memoryKeysByRecency == [key("d"), key("a"), key("c")])
            #expect(cache.entry(for: key("b")) == nil)
            #expect(cache.memoryCost <= cost * 3)
        }

        @Test func aBodyPastTheEntryLimitIsDiscardedWithoutLeavingFiles() throws {
            let directory = makeTemporaryDirectory("store-limit")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory, maximumEntrySize: 100 << 10)
            #expect(cache.maximumEntrySize == 100 << 10)
            let key = StoreFixtures.key("too-large")
            let earlier = try #require(StoreFixtures.write(cache, key, Data("earlier".utf8)))
            #expect(earlier.body.readAll() == Data("earlier".utf8))

            let writer = cache.makeWriter(for: key, head: StoreFixtures.head(), url: nil, version: nil)
            #expect(writer.append(StoreFixtures.body(90 << 10, seed: 1)))
            #expect(StoreFixtures.temporaryFiles(in: directory).count == 1, "past 64 KiB the body is on disk")
            #expect(!writer.append(StoreFixtures.body(20 << 10, seed: 2)), "past the limit the writer gives up")
            #expect(!writer.append(Data("more".utf8)))
            #expect(writer.commit() == nil)
            #expect(StoreFixtures.temporaryFiles(in: directory).isEmpty)
            #expect(cache.entry(for: key)?.body.readAll() == Data("earlier".utf8), "what was stored before stays")

            // The TTL API keeps such a response in memory only.
            let ttlKey = ResponseCacheStoreTestsKeys.ttlKey
            cache.store(
                CachedResponse(
                    statusCode: 200, headers: [:], data: StoreFixtures.body(200 << 10, seed: 3),
                    storedAt: Date(), version: nil), for: ttlKey)
            #expect(cache.latest(for: ttlKey)?.data.count == 200 << 10)
            #expect(ResponseCache(diskDirectory: directory).latest(for: ttlKey) == nil)
        }

        @Test func defaultsAreDocumentedFractions() {
            let directory = makeTemporaryDirectory("store-defaults")
            #expect(ResponseCache().diskCapacity == 250 << 20)
            #expect(ResponseCache(diskDirectory: directory).maximumEntrySize == (250 << 20) / 8)
            #expect(ResponseCache(diskDirectory: directory, diskCapacity: 80 << 20).maximumEntrySize == 10 << 20)
            #expect(ResponseCache(memoryCapacity: 8 << 20).maximumEntrySize == 1 << 20)
            #expect(
                ResponseCache(memoryCapacity: 1 << 20, maximumEntrySize: 5 << 20).maximumEntrySize == 1 << 20,
                "never more than the tier holding it")
        }

        @Test func aMemoryOnlyCacheDiscardsBodiesPastAnEighthOfItsCapacity() {
            let cache = ResponseCache(memoryCapacity: 1 << 20)
            let key = StoreFixtures.key("memory-only")
            #expect(StoreFixtures.write(cache, key, StoreFixtures.body(200 << 10, seed: 1)) == nil)
            #expect(cache.entry(for: key) == nil)
            #expect(StoreFixtures.write(cache, key, StoreFixtures.body(100 << 10, seed: 1))?.body.length == 100 << 10)
            #expect(cache.entry(for: key)?.body.readAll() == StoreFixtures.body(100 << 10, seed: 1))
        }
    }
}
