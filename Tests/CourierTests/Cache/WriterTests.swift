import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierLocking

extension ResponseCacheStore {
    /// ``ResponseCacheWriter``: nothing visible before commit, nothing left after discard, heads
    /// freshened without touching bodies, bodies readable while replaced, large bodies streamed.
    @Suite("ResponseCacheStore: writers") struct WriterTests {
        @Test func nothingIsVisibleBeforeCommitAndCommitReplacesAtomically() throws {
            let directory = makeTemporaryDirectory("store-commit")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("atomic")
            let old = StoreFixtures.body(200 << 10, seed: 1), new = StoreFixtures.body(300 << 10, seed: 2)
            try #require(StoreFixtures.write(cache, key, old) != nil)

            let writer = cache.makeWriter(
                for: key, head: StoreFixtures.head(status: 203), url: URL(string: "https://example.com/atomic"),
                version: nil)
            #expect(writer.append(new.prefix(250 << 10)))
            #expect(cache.entry(for: key)?.body.readAll() == old, "readers see the old entry while the new one is written")
            #expect(ResponseCache(diskDirectory: directory).entry(for: key)?.body.readAll() == old)
            #expect(writer.append(new.suffix(from: 250 << 10)))
            let committed = try #require(writer.commit())
            #expect(committed.head.statusCode == 203)
            #expect(committed.url?.absoluteString == "https://example.com/atomic")
            #expect(writer.commit() == nil, "a writer commits once")
            #expect(!writer.append(Data("late".utf8)))
            #expect(cache.entry(for: key)?.body.readAll() == new)
            #expect(ResponseCache(diskDirectory: directory).entry(for: key)?.head.statusCode == 203)
            #expect(StoreFixtures.bodyFiles(in: directory).count == 1, "the replaced body file is gone")
            #expect(StoreFixtures.leftoverTemporaryFiles(in: directory).isEmpty)
            #expect(StoreFixtures.temporaryFiles(in: directory).count <= CacheSpareFiles.limit)
        }

        @Test(arguments: [10, 100 << 10])
        func discardAndDeinitLeaveNoTemporaryFiles(size: Int) throws {
            let directory = makeTemporaryDirectory("store-discard")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("discarded")
            do {
                let writer = cache.makeWriter(for: key, head: StoreFixtures.head(), url: nil, version: nil)
                #expect(writer.append(StoreFixtures.body(size, seed: 1)))
                writer.discard()
                writer.discard()
                #expect(writer.commit() == nil)
            }
            do {
                let abandoned = cache.makeWriter(for: key, head: StoreFixtures.head(), url: nil, version: nil)
                #expect(abandoned.append(StoreFixtures.body(size, seed: 2)))
            }  // neither committed nor discarded: deinit discards
            #expect(StoreFixtures.names(in: directory).filter { $0 != "." }.allSatisfy { !$0.hasSuffix(".tmp") })
            #expect(StoreFixtures.names(in: directory).isEmpty, "\(StoreFixtures.names(in: directory))")
            #expect(cache.entry(for: key) == nil)
        }

        /// After a 304 only the head changes: the body file is the same file, untouched.
        @Test(arguments: [100, 200 << 10])
        func aHeadUpdateAfterA304KeepsTheBody(size: Int) throws {
            let directory = makeTemporaryDirectory("store-304")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("revalidated")
            let body = StoreFixtures.body(size, seed: 6)
            try #require(
                StoreFixtures.write(cache, key, body, head: StoreFixtures.head(headers: ["ETag": "\"1\"", "Cache-Control": "max-age=1"])) != nil)
            let bodyFilesBefore = StoreFixtures.bodyFiles(in: directory)
            let bodyStatusBefore = bodyFilesBefore.first.flatMap { CacheFileIO.status(directory.appendingPathComponent($0)) }

            let later = Date(timeIntervalSince1970: 1_750_000_600)
            let freshened = StoreFixtures.head(headers: ["ETag": "\"1\"", "Cache-Control": "max-age=600"], at: later)
            let updated = try #require(cache.updateHead(for: key, freshened))
            #expect(updated.head == freshened)
            #expect(updated.body.readAll() == body)
            #expect(StoreFixtures.bodyFiles(in: directory) == bodyFilesBefore)
            if let before = bodyStatusBefore, let name = bodyFilesBefore.first {
                let after = CacheFileIO.status(directory.appendingPathComponent(name))
                #expect(after?.inode == before.inode && after?.size == before.size, "the body file was not rewritten")
            }
            let reloaded = try #require(ResponseCache(diskDirectory: directory).entry(for: key))
            #expect(reloaded.head == freshened)
            #expect(reloaded.body.readAll() == body)
            #expect(cache.updateHead(for: StoreFixtures.key("nothing"), freshened) == nil)

            let memoryOnly = ResponseCache()
            try #require(StoreFixtures.write(memoryOnly, key, Data("tiny".utf8)) != nil)
            #expect(memoryOnly.updateHead(for: key, freshened)?.head == freshened)
            #expect(memoryOnly.entry(for: key)?.body.readAll() == Data("tiny".utf8))
        }

        /// A reader holding an entry keeps reading the bytes it opened, whole, while the entry is
        /// replaced, evicted and removed.
        @Test func aBodyStaysReadableWhileItsEntryIsReplacedOrRemoved() throws {
            let directory = makeTemporaryDirectory("store-replace")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let other = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("replaced")
            let first = StoreFixtures.body(1 << 20, seed: 11), second = StoreFixtures.body(700 << 10, seed: 12)
            try #require(StoreFixtures.write(cache, key, first) != nil)
            let reading = try #require(other.entry(for: key))
            var iterator = reading.body.chunks(size: 100 << 10).makeIterator()
            var received = Data()
            if let piece = iterator.next() { received.append(piece) }

            try #require(StoreFixtures.write(cache, key, second) != nil)  // replaced
            if let piece = iterator.next() { received.append(piece) }
            cache.remove(for: key)  // removed
            cache.scanDisk()
            #expect(StoreFixtures.bodyFiles(in: directory).isEmpty)
            while let piece = iterator.next() { received.append(piece) }
            #expect(received == first, "the reader got the whole first body, nothing of the second")
            #expect(cache.entry(for: key) == nil)
        }

        @Test func httpKeysKeepQueryOrderAndDropFragmentsAndDefaultPorts() throws {
            func key(_ text: String) throws -> String { ResponseCache.httpKey(for: try #require(URL(string: text))).rawValue }
            #expect(try key("HTTPS://Example.COM:443/a/b?z=1&a=2#frag") == "HTTP GET https://example.com/a/b?z=1&a=2")
            #expect(try key("http://example.com") == "HTTP GET http://example.com/")
            #expect(try key("http://example.com:8080/x") == "HTTP GET http://example.com:8080/x")
            #expect(try key("https://example.com/?b=1&a=2") != key("https://example.com/?a=2&b=1"))
            // Never the same key as a TTL entry for the same URL.
            let ttl = ResponseCacheKey(URLRequest(url: try #require(URL(string: "https://example.com/a"))))
            #expect(ResponseCache.httpKey(for: try #require(URL(string: "https://example.com/a"))) != ttl)
        }

        /// 64 MiB through a writer and back through a replay: the process's peak memory grows by
        /// a small fraction of it, and the replayed bytes are identical.
        @Test func aSixtyFourMebibyteBodyIsWrittenAndReplayedWithBoundedMemory() async throws {
            try await PeakMemoryGate.shared.run {
                let directory = makeTemporaryDirectory("store-64mib")
                defer { try? FileManager.default.removeItem(at: directory) }
                let size = 64 << 20, piece = 256 << 10, seed: UInt64 = 64
                let cache = ResponseCache(memoryCapacity: 10 << 20, diskDirectory: directory, diskCapacity: 1 << 30)
                #expect(cache.maximumEntrySize >= Int64(size))
                let key = StoreFixtures.key("big")
                PeakMemoryGate.resetPeak()
                let before = StoreFixtures.peakResidentBytes()
                let writer = cache.makeWriter(for: key, head: StoreFixtures.head(), url: nil, version: nil)
                try await StoreFixtures.offThePool {
                    var offset = 0
                    while offset < size {
                        #expect(writer.append(PatternBody.data(offset: Int64(offset), count: piece, seed: seed)))
                        offset += piece
                    }
                }
                let committed = try #require(writer.commit())
                #expect(committed.body.length == Int64(size))
                #expect(cache.memoryCount == 0)

                let entry = try #require(ResponseCache(diskDirectory: directory, diskCapacity: 1 << 30).entry(for: key))
                let sink = ReplayRecorder(keepsBody: false)
                let window = 1 << 20
                let replay = CacheReplayTransfer(entry, url: URL(fileURLWithPath: "/"), sink: sink, flowControlWindow: window)
                // The consumer checks each piece against the pattern as it acknowledges it.
                let checker = PatternChecker(seed: seed)
                let verifyingSink = VerifyingSink(checker: checker)
                let verified = CacheReplayTransfer(entry, url: URL(fileURLWithPath: "/"), sink: verifyingSink, flowControlWindow: window)
                verifyingSink.attach(verified)
                #expect(await verifyingSink.finished())
                #expect(checker.result == .init(bytes: Int64(size), mismatches: 0))
                // The recording sink never acknowledges: the replay stops at the window.
                #expect(await sink.wait { $0.received >= Int64(window) })
                #expect(sink.snapshot.received <= Int64(window + CacheReplayTransfer.chunkSize))
                replay.cancel()
                #expect(await sink.wait { $0.completions == 1 })
                #expect(sink.snapshot.error?.kind == .cancelled)
                let after = StoreFixtures.peakResidentBytes()
                if let before, let after {
                    TestEnvironment.note("64 MiB cache write + replay: peak RSS grew by \((after - before) >> 20) MiB")
                    // Peak RSS is process-wide: only meaningful with no other test running
                    // (`.ci/run` runs this one alone with COURIER_RESOURCE_TESTS=1).
                    if ResourceMeasurement.isolated { #expect(after - before < 32 << 20) }
                }
            }
        }
    }
}

/// Checks replayed bytes against a pattern as they arrive.
final class PatternChecker: Sendable {
    struct Result: Equatable, Sendable {
        var bytes: Int64 = 0
        var mismatches = 0
    }

    private let seed: UInt64
    private let state = Locked(Result())

    init(seed: UInt64) { self.seed = seed }

    var result: Result { state.withLock { $0 } }

    func check(_ data: Data) {
        let offset = state.withLock { $0.bytes }
        let expected = PatternBody.data(offset: offset, count: data.count, seed: seed)
        state.withLock { state in
            state.bytes += Int64(data.count)
            if expected != data { state.mismatches += 1 }
        }
    }
}
