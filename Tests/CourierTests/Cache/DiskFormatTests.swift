import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

extension ResponseCacheStore {
    /// The disk format: what is written, and that nothing damaged, truncated or of another
    /// version is ever served (it is a miss, and the file is removed).
    @Suite("ResponseCacheStore: disk format") struct DiskFormatTests {
        @Test func aSmallBodyLivesInlineInOneVersionedFile() throws {
            let directory = makeTemporaryDirectory("store-format")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let key = StoreFixtures.key("small")
            var head = StoreFixtures.head(headers: ["ETag": "\"v1\"", "Vary": "Accept"])
            head.varyingRequestHeaders = ["accept": "application/json"]
            head.requestHadAuthorization = true
            try #require(StoreFixtures.write(cache, key, Data("hello".utf8), head: head) != nil)

            #expect(StoreFixtures.names(in: directory) == ["\(key.fileName).response"])
            let raw = try Data(contentsOf: StoreFixtures.headFile(key, in: directory))
            #expect(raw.starts(with: Data("COURIER-RESPONSE 3\n".utf8)))

            let loaded = try #require(ResponseCache(memoryCapacity: 0, diskDirectory: directory).entry(for: key))
            #expect(loaded.head == head)
            #expect(loaded.body.readAll() == Data("hello".utf8))
            #expect(loaded.key == key)
        }

        @Test func aLargeBodyLivesInAnImmutableBodyFileNamedByTheHead() throws {
            let directory = makeTemporaryDirectory("store-format-large")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory)
            let key = StoreFixtures.key("large")
            let body = StoreFixtures.body(300 << 10, seed: 3)
            let stored = try #require(StoreFixtures.write(cache, key, body))
            guard case .file = stored.body else {
                Issue.record("a body past 64 KiB is served from its file")
                return
            }
            #expect(cache.memoryCount == 0, "a body that lives in a file is not held in memory")
            let bodies = StoreFixtures.bodyFiles(in: directory)
            #expect(bodies.count == 1 && bodies[0].hasPrefix(key.fileName))
            let raw = try Data(contentsOf: directory.appendingPathComponent(bodies[0]))
            // The magic, the body, and one 8-byte checksum per 64 KiB block (five for 300 KiB).
            #expect(raw.starts(with: Data("COURIER-BODY 3\n".utf8)) && raw.count == 15 + body.count + 5 * 8)
            let loaded = try #require(ResponseCache(diskDirectory: directory).entry(for: key))
            #expect(loaded.body.readAll() == body)
            #expect(loaded.body.length == Int64(body.count))
            #expect(Data(loaded.body.chunks(size: 7000).joined()) == body)
        }

        /// Files of Courier before the HTTP cache (`COURIER-RESPONSE 1`), before body checksums
        /// (`COURIER-RESPONSE 2`) and of any other version are never misread: a miss, and the file
        /// is gone.
        @Test(arguments: ["COURIER-RESPONSE 1\n", "COURIER-RESPONSE 2\n", "COURIER-RESPONSE 4\n", "COURIER-RESPONSE 20\n"])
        func aFileOfAnotherVersionIsAMissAndIsRemoved(magic: String) throws {
            let directory = makeTemporaryDirectory("store-version")
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let key = ResponseCacheStoreTestsKeys.ttlKey
            // What a version 1 file looked like: magic, a JSON line, the body.
            let v1 =
                magic
                + #"{"key":"\#(key.rawValue.replacingOccurrences(of: "\n", with: "\\n"))","statusCode":200,"headers":[],"storedAt":1750000000,"version":null}"#
                + "\nold body"
            let file = StoreFixtures.headFile(key, in: directory)
            try Data(v1.utf8).write(to: file)

            let cache = ResponseCache(diskDirectory: directory)
            #expect(cache.latest(for: key) == nil)
            #expect(cache.fresh(for: key, maximumAge: .seconds(1_000_000_000), version: nil) == nil)
            #expect(!FileManager.default.fileExists(atPath: file.path), "the foreign file was removed")

            // A scan removes them too, without anyone asking for the key.
            try Data(v1.utf8).write(to: file)
            cache.scanDisk()
            #expect(!FileManager.default.fileExists(atPath: file.path))
        }

        @Test func damagedTruncatedOrForeignHeadsAreMissesAndAreRemoved() throws {
            let directory = makeTemporaryDirectory("store-damaged")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let key = StoreFixtures.key("damaged")
            let file = StoreFixtures.headFile(key, in: directory)
            try #require(StoreFixtures.write(cache, key, Data("fine body".utf8)) != nil)
            let whole = try Data(contentsOf: file)

            var damaged: [(String, Data)] = []
            for cut in [1, 10, whole.count / 2, whole.count - 1] { damaged.append(("truncated to \(cut)", whole.prefix(cut))) }
            var flipped = whole
            // The inline body's last byte, just before the trailer.
            flipped[flipped.startIndex + whole.count - CacheEntryFormat.trailerLength - 1] ^= 0x01
            damaged.append(("one bit flipped in the body", flipped))
            var metadata = whole
            metadata[metadata.startIndex + 25] ^= 0x20  // a byte of the JSON line
            damaged.append(("one bit flipped in the metadata", metadata))
            damaged.append(("extra bytes", whole + Data("x".utf8)))
            damaged.append(("garbage", Data("garbage".utf8)))
            damaged.append(("empty", Data()))

            for (label, bytes) in damaged {
                try bytes.write(to: file)
                #expect(cache.entry(for: key) == nil, "\(label): a miss")
                #expect(!FileManager.default.fileExists(atPath: file.path), "\(label): removed")
            }
            try whole.write(to: file)
            #expect(cache.entry(for: key)?.body.readAll() == Data("fine body".utf8), "the intact file still reads")
        }

        @Test func aMissingTruncatedOrForeignBodyFileMakesTheEntryAMiss() throws {
            let directory = makeTemporaryDirectory("store-damaged-body")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            let key = StoreFixtures.key("damaged-body")
            let body = StoreFixtures.body(200 << 10, seed: 5)

            let damages: [(String, (URL) throws -> Void)] = [
                ("truncated", { url in try Data(contentsOf: url).prefix(1000).write(to: url) }),
                ("longer", { url in try (Data(contentsOf: url) + Data([0])).write(to: url) }),
                (
                    "another version",
                    { url in
                        var data = try Data(contentsOf: url)
                        data.replaceSubrange(0..<15, with: Data("COURIER-BODY 9\n".utf8))
                        try data.write(to: url)
                    }
                ),
                ("missing", { url in try FileManager.default.removeItem(at: url) }),
            ]
            for (label, damage) in damages {
                try #require(StoreFixtures.write(cache, key, body) != nil)
                let bodyFile = directory.appendingPathComponent(try #require(StoreFixtures.bodyFiles(in: directory).first))
                try damage(bodyFile)
                #expect(cache.entry(for: key) == nil, "\(label): a miss")
                #expect(!FileManager.default.fileExists(atPath: StoreFixtures.headFile(key, in: directory).path), "\(label): head removed")
                cache.scanDisk()
                #expect(StoreFixtures.names(in: directory).isEmpty, "\(label): nothing left after a scan: \(StoreFixtures.names(in: directory))")
            }
        }

        @Test func aScanLeavesOtherFilesAloneAndRemovesOrphansAndAbandonedTemporaries() throws {
            let directory = makeTemporaryDirectory("store-scan")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let key = StoreFixtures.key("kept")
            let body = StoreFixtures.body(100 << 10, seed: 8)
            try #require(StoreFixtures.write(cache, key, body) != nil)
            let notes = directory.appendingPathComponent("notes.txt")
            try Data("keep me".utf8).write(to: notes)
            // What a killed process leaves: a temporary file nobody holds, and a body file whose
            // head was never written.
            let abandoned = directory.appendingPathComponent("courier-\(UUID().uuidString.lowercased()).tmp")
            try Data("partial".utf8).write(to: abandoned)
            let orphan = directory.appendingPathComponent("\(StoreFixtures.key("never").fileName)-\(UUID().uuidString.lowercased()).body")
            try Data("COURIER-BODY 3\nhalf".utf8).write(to: orphan)
            // A temporary file a live writer holds stays.
            let writer = cache.makeWriter(for: StoreFixtures.key("in-progress"), head: StoreFixtures.head(), url: nil, version: nil)
            #expect(writer.append(StoreFixtures.body(80 << 10, seed: 9)))
            #expect(StoreFixtures.temporaryFiles(in: directory).count == 2)

            cache.scanDisk()
            #expect(!FileManager.default.fileExists(atPath: abandoned.path))
            #expect(!FileManager.default.fileExists(atPath: orphan.path))
            #expect(FileManager.default.fileExists(atPath: notes.path))
            #expect(StoreFixtures.temporaryFiles(in: directory).count == 1, "the live writer's file stays")
            #expect(cache.entry(for: key)?.body.readAll() == body)
            writer.discard()
            #expect(StoreFixtures.temporaryFiles(in: directory).isEmpty)
            cache.removeAll()
            #expect(StoreFixtures.names(in: directory) == ["notes.txt"])
        }
    }
}

/// Keys shared by the format tests.
enum ResponseCacheStoreTestsKeys {
    static var ttlKey: ResponseCacheKey {
        ResponseCacheKey(URLRequest(url: URL(string: "https://example.com/ttl") ?? URL(fileURLWithPath: "/")))
    }
}
