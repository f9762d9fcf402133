import Testing
import Foundation
@testable import Courier
import CourierTestServer

extension ResponseCacheStore {
    /// What the disk store is spared on the hot paths: a `304` that only changes when the response
    /// was received does not rewrite the head file of an entry held in memory, and hits in memory
    /// mark the disk copy used at most once a minute.
    @Suite("ResponseCacheStore: disk writes spared") struct DiskWriteEconomyTests {
        static func modified(_ url: URL) -> Date? {
            (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
        }

        @Test func aNotModifiedThatOnlyChangesTimesLeavesTheHeadFileAlone() throws {
            let directory = makeTemporaryDirectory("store-304")
            defer { try? FileManager.default.removeItem(at: directory) }
            let time = TestTime()
            let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory, now: { time.now })
            let key = StoreFixtures.key("economy")
            let stored: HTTPHeaders = ["ETag": "\"a\"", "Cache-Control": "no-cache", "Date": "Sun, 15 Jun 2025 15:06:40 GMT"]
            _ = try #require(StoreFixtures.write(cache, key, Data("body".utf8), head: StoreFixtures.head(headers: stored, at: time.now)))
            let headFile = StoreFixtures.headFile(key, in: directory)
            let written = try Data(contentsOf: headFile)

            time.advance(by: .seconds(10))
            var timesOnly = StoreFixtures.head(headers: stored, at: time.now)
            timesOnly.headers.update(name: "Date", value: "Sun, 15 Jun 2025 15:06:50 GMT")
            timesOnly.headers.update(name: "Expires", value: "Sun, 15 Jun 2025 16:06:50 GMT")
            #expect(cache.updateHead(for: key, timesOnly)?.head == timesOnly)
            #expect(cache.entry(for: key)?.head == timesOnly, "memory answers with the new head")
            #expect(try Data(contentsOf: headFile) == written, "the disk copy is not rewritten")

            var changed = timesOnly
            changed.headers.update(name: "Cache-Control", value: "max-age=600")
            #expect(cache.updateHead(for: key, changed)?.head == changed)
            #expect(try Data(contentsOf: headFile) != written, "a 304 that changes what the response says is written to disk")
            let fromDisk = ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key)
            #expect(fromDisk?.head.headers.value(for: "Cache-Control") == "max-age=600")
        }

        @Test func hitsInMemoryMarkTheDiskCopyUsedAtMostOnceAMinute() throws {
            let directory = makeTemporaryDirectory("store-touch")
            defer { try? FileManager.default.removeItem(at: directory) }
            let time = TestTime()
            let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory, now: { time.now })
            let key = StoreFixtures.key("touched")
            _ = try #require(StoreFixtures.write(cache, key, Data("body".utf8)))
            let headFile = StoreFixtures.headFile(key, in: directory)
            let writtenAt = try #require(Self.modified(headFile))

            time.advance(by: .seconds(30))
            #expect(cache.entry(for: key) != nil)
            #expect(Self.modified(headFile) == writtenAt, "a hit 30 s after the write leaves the file's time")
            time.advance(by: .seconds(31))
            #expect(cache.entry(for: key) != nil)
            let marked = try #require(Self.modified(headFile))
            #expect(abs(marked.timeIntervalSince(time.now)) < 1, "a hit a minute later marks it used")
            time.advance(by: .seconds(1))
            #expect(cache.entry(for: key) != nil)
            #expect(Self.modified(headFile) == marked)
        }
    }
}
