import Foundation
import Testing
@_spi(Transport) @testable import Courier

extension ResponseCacheStore {
    /// Body files are checked as README says every file is (issue 36): one checksum per 64 KiB
    /// block, written with the body and checked before any byte of a block is handed out, and a
    /// checksum of those in the head, so a body replaced by other bytes of the same length, or by
    /// another entry's body file, is never served.
    @Suite("ResponseCacheStore: body checksums") struct BodyChecksumTests {
        static let body = StoreFixtures.body(300 << 10, seed: 11)
        static let block = CacheBodyChecksums.blockSize

        /// A cache on a new directory with `body` stored for `key` in a body file; returns the file.
        static func stored(_ label: String, key: ResponseCacheKey, body: Data = body) throws -> (directory: URL, bodyFile: URL) {
            let directory = makeTemporaryDirectory(label)
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            try #require(StoreFixtures.write(cache, key, body) != nil)
            let name = try #require(StoreFixtures.bodyFiles(in: directory).first)
            return (directory, directory.appendingPathComponent(name))
        }

        /// Overwrites `count` bytes of the body at `offset` (after the 15-byte format header) with
        /// other bytes: the file keeps its length.
        static func overwriteBody(_ file: URL, at offset: Int, count: Int) throws {
            var bytes = try Data(contentsOf: file)
            let start = bytes.startIndex + CacheEntryFormat.bodyMagic.count + offset
            for index in start..<(start + count) { bytes[index] ^= 0x5A }
            try bytes.write(to: file)
        }

        @Test func checksumsComputedPieceByPieceMatchTheWholeBody() {
            let body = StoreFixtures.body(5 * Self.block + 1234, seed: 4)
            let whole = CacheBodyChecksums.of(body)
            #expect(whole.count == 6)
            for piece in [3, 4093, Self.block - 1, Self.block, Self.block + 1, 3 * Self.block] {
                var checksums = CacheBodyChecksums()
                body.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let end = min(raw.count, offset + piece)
                        checksums.add(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                        offset = end
                    }
                }
                #expect(checksums.finish() == whole, "pieces of \(piece)")
            }
            var fromData = CacheBodyChecksums()
            fromData.add(body.prefix(5))
            fromData.add(body.dropFirst(5))
            #expect(fromData.finish() == whole, "pieces given as Data (slices included)")
            #expect(CacheBodyChecksums.of(Data()).isEmpty)
            #expect(CacheBodyChecksums.sums(inTrailer: CacheBodyChecksums.trailer(whole)) == whole)
        }

        @Test func aBodyReplacedByOtherBytesOfTheSameLengthIsNeverServed() throws {
            let key = StoreFixtures.key("swapped-bytes")
            let (directory, bodyFile) = try Self.stored("checksum-swapped", key: key)
            defer { try? FileManager.default.removeItem(at: directory) }
            // Inside the third block: the first two read fine, the third fails.
            try Self.overwriteBody(bodyFile, at: 2 * Self.block + 100, count: 64)

            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let entry = try #require(cache.entry(for: key), "the head and the file's own checksums are intact")
            #expect(entry.body.read(at: 0, count: 2 * Self.block) == Self.body.prefix(2 * Self.block), "intact blocks read")
            #expect(entry.body.read(at: Int64(2 * Self.block) + 50, count: 10) == nil, "a damaged block is never handed out")
            #expect(entry.body.readAll() == nil)
            let pieces = entry.body.chunks(size: Self.block).reduce(into: Data()) { $0.append($1) }
            // (Compared as a Bool: a failed comparison of two long byte collections is diffed byte by byte.)
            let stoppedBeforeDamage = pieces == Self.body.prefix(2 * Self.block)
            #expect(stoppedBeforeDamage, "reading in pieces stops before the damaged block: \(pieces.count) bytes")
            #expect(!FileManager.default.fileExists(atPath: StoreFixtures.headFile(key, in: directory).path), "the entry was removed")
            #expect(!FileManager.default.fileExists(atPath: bodyFile.path))
            #expect(cache.entry(for: key) == nil)
        }

        @Test func aBodyFileOfAnotherEntryRenamedIntoPlaceIsAMiss() throws {
            let key = StoreFixtures.key("mine"), other = StoreFixtures.key("theirs")
            let (directory, bodyFile) = try Self.stored("checksum-renamed", key: key)
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            // Another body of exactly the same length, stored for another key.
            try #require(StoreFixtures.write(cache, other, StoreFixtures.body(Self.body.count, seed: 99)) != nil)
            let theirs = try #require(StoreFixtures.bodyFiles(in: directory).first { $0 != bodyFile.lastPathComponent })
            try FileManager.default.removeItem(at: bodyFile)
            try FileManager.default.copyItem(at: directory.appendingPathComponent(theirs), to: bodyFile)
            #expect(cache.entry(for: key) == nil, "the head's checksum of the body's checksums does not match")
            #expect(cache.entry(for: other)?.body.readAll() == StoreFixtures.body(Self.body.count, seed: 99))
        }

        @Test func theTTLCacheNeverReturnsADamagedBody() throws {
            let directory = makeTemporaryDirectory("checksum-ttl")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = ResponseCacheStoreTestsKeys.ttlKey
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            cache.store(CachedResponse(statusCode: 200, headers: [:], data: Self.body, storedAt: Date(), version: 1), for: key)
            let bodyFile = directory.appendingPathComponent(try #require(StoreFixtures.bodyFiles(in: directory).first))
            try Self.overwriteBody(bodyFile, at: Self.body.count - 10, count: 10)
            #expect(cache.fresh(for: key, maximumAge: .seconds(600), version: 1) == nil)
            #expect(cache.latest(for: key) == nil)
            #expect(StoreFixtures.names(in: directory).isEmpty, "removed: \(StoreFixtures.names(in: directory))")
        }

        /// A replay that reaches a damaged block fails with a clear error after handing out only
        /// intact bytes, and the entry is gone, so the next request goes to the network.
        @Test func aReplayThatReachesADamagedBlockFailsAndTheEntryIsRemoved() async throws {
            let key = StoreFixtures.key("replay-damaged")
            let (directory, bodyFile) = try Self.stored("checksum-replay", key: key)
            defer { try? FileManager.default.removeItem(at: directory) }
            try Self.overwriteBody(bodyFile, at: Self.body.count - 1, count: 1)  // the very last byte
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let entry = try #require(cache.entry(for: key))
            let recorder = ReplayRecorder()
            // The window holds the whole body: nothing waits for an acknowledgement.
            let replay = CacheReplayTransfer(entry, url: URL(fileURLWithPath: "/replay"), sink: recorder, flowControlWindow: 1 << 20)
            #expect(await recorder.wait { $0.completions == 1 })
            replay.waitUntilIdle()
            let snapshot = recorder.snapshot
            #expect(snapshot.error?.kind == .fileSystem)
            #expect(snapshot.error?.message.contains("damaged") == true, "\(snapshot.error.map { "\($0)" } ?? "no error")")
            let intact = snapshot.kept == Self.body.prefix(snapshot.kept.count)
            #expect(intact, "only intact bytes were handed out")
            #expect(snapshot.kept.count == 4 * Self.block, "every block before the damaged one")
            #expect(cache.entry(for: key) == nil, "the damaged entry is gone")
        }
    }
}
