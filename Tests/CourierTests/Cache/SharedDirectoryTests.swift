import Testing
import Foundation
@testable import Courier
import CourierTestServer
import CourierTestSupport

extension ResponseCacheStore {
    /// Several caches, and several processes, on one directory: every entry read is whole and
    /// its head belongs to its body, the capacity holds, and nothing is left behind.
    @Suite("ResponseCacheStore: shared directory") struct SharedDirectoryTests {
        static let keyCount = 24
        static let rounds = 3
        static let childDirectoryVariable = "COURIER_STORE_CHILD_DIRECTORY"

        /// Body sizes by key: inline ones and body files.
        static func size(ofKey index: Int) -> Int {
            [3000, 90 << 10, 200 << 10, 10][index % 4]
        }

        static func seed(writer: Int, round: Int, key: Int) -> UInt64 {
            UInt64(key * 1000 + writer * 100 + round)
        }

        /// Writes every key `rounds` times, each body tagged in its head with who wrote it.
        static func writeAll(_ cache: ResponseCache, writer: Int) {
            for round in 0..<rounds {
                for index in 0..<keyCount {
                    let seed = seed(writer: writer, round: round, key: index)
                    let head = StoreFixtures.head(headers: ["X-Seed": String(seed)])
                    StoreFixtures.write(
                        cache, StoreFixtures.key("shared-\(index)"), StoreFixtures.body(size(ofKey: index), seed: seed),
                        head: head, piece: 32 << 10)
                    // Readers on the way: whatever they see must be whole.
                    if let entry = cache.entry(for: StoreFixtures.key("shared-\((index + 7) % keyCount)")) {
                        _ = check(entry, key: (index + 7) % keyCount)
                    }
                }
            }
        }

        /// Whether `entry`'s body is exactly the body its head says was written.
        static func check(_ entry: StoredEntry, key index: Int) -> Bool {
            guard let tag = entry.head.headers["X-Seed"], let seed = UInt64(tag) else { return false }
            return entry.body.readAll() == StoreFixtures.body(size(ofKey: index), seed: seed)
        }

        static func verify(_ directory: URL, writers: Set<Int>) throws {
            let reader = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            var seen = Set<Int>()
            for index in 0..<keyCount {
                let entry = try #require(reader.entry(for: StoreFixtures.key("shared-\(index)")), "key \(index) is stored")
                #expect(check(entry, key: index), "key \(index): the body is the one its head names, whole")
                if let seed = entry.head.headers["X-Seed"].flatMap(Int.init) { seen.insert(seed % 1000 / 100) }
            }
            #expect(seen.isSubset(of: writers))
            reader.scanDisk()
            // The writers' caches are alive and may each hold a few spares, locked.
            #expect(StoreFixtures.leftoverTemporaryFiles(in: directory).isEmpty)
            let bodies = StoreFixtures.bodyFiles(in: directory).count
            #expect(bodies == (0..<keyCount).filter { size(ofKey: $0) > 64 << 10 }.count, "one body file per large entry, no orphans")
        }

        @Test func twoCachesWritingAndReadingTheSameKeysAtOnce() async throws {
            let directory = makeTemporaryDirectory("store-two-caches")
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory)
            let second = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            async let firstWriter: Void = StoreFixtures.offThePool { Self.writeAll(first, writer: 1) }
            async let secondWriter: Void = StoreFixtures.offThePool { Self.writeAll(second, writer: 2) }
            _ = try await (firstWriter, secondWriter)
            try await StoreFixtures.offThePool { try Self.verify(directory, writers: [1, 2]) }
        }

        /// A reader that has read a head, when another writer replaces the entry (and removes
        /// the body file the old head named) before the reader opens that body, neither removes
        /// the new entry nor misses it: it reads the new one. Written as the interleaving that
        /// lost an entry under load (the reader removed whatever head was there by then).
        @Test func aReaderWhoseEntryIsReplacedMeanwhileReadsTheNewOne() throws {
            let directory = makeTemporaryDirectory("store-replaced-meanwhile")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = DiskResponseStore(directory: directory)
            let key = StoreFixtures.key("replaced-meanwhile")
            let limit = 64 << 10
            func entry(seed: UInt64) -> StoredEntry {
                StoredEntry(
                    key: key, head: StoreFixtures.head(headers: ["X-Seed": String(seed)]), url: nil, version: nil,
                    body: .data(StoreFixtures.body(200 << 10, seed: seed)))
            }
            _ = try #require(store.publish(entry(seed: 1), spilledBody: nil, inlineLimit: limit, now: Date()))
            let headURL = store.headURL(for: key)
            let (staleHead, staleFile) = try #require(store.readHeadFile(at: headURL))
            let staleBody = try #require(staleHead.metadata.bodyFile)

            _ = try #require(store.publish(entry(seed: 2), spilledBody: nil, inlineLimit: limit, now: Date()))
            #expect(!FileManager.default.fileExists(atPath: store.url(staleBody).path), "the replaced entry's body is gone")

            let attempt = store.entry(key, from: staleHead, readFrom: staleFile, touchingAt: nil)
            guard case .replacedMeanwhile = attempt else {
                Issue.record("a stale head whose body is gone is a replaced entry, not a damaged one: \(attempt)")
                return
            }
            let current = try #require(store.read(key, touchingAt: nil), "the new entry is still stored")
            #expect(current.head.headers["X-Seed"] == "2")
            #expect(current.body.readAll() == StoreFixtures.body(200 << 10, seed: 2))

            // A head whose body is gone and that nobody replaced is removed, as before.
            let (head, file) = try #require(store.readHeadFile(at: headURL))
            try FileManager.default.removeItem(at: store.url(try #require(head.metadata.bodyFile)))
            guard case .missing = store.entry(key, from: head, readFrom: file, touchingAt: nil) else {
                Issue.record("a head naming a missing body is a miss")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: headURL.path), "and its head is removed")
        }

        /// Two caches filling one directory keep it near its capacity: each rescans after every
        /// tenth of the capacity it writes, so neither can take it far past it unnoticed.
        @Test func twoCachesKeepTheDirectoryNearItsCapacity() async throws {
            let directory = makeTemporaryDirectory("store-two-capacity")
            defer { try? FileManager.default.removeItem(at: directory) }
            let capacity: Int64 = 2 << 20
            let caches = (0..<2).map { _ in ResponseCache(memoryCapacity: 0, diskDirectory: directory, diskCapacity: capacity) }
            let entry = 100 << 10
            let largest = try await StoreFixtures.offThePool { () throws -> Int64 in
                var largest: Int64 = 0
                for index in 0..<80 {
                    let cache = caches[index % 2]
                    try #require(
                        StoreFixtures.write(cache, StoreFixtures.key("fill-\(index)"), StoreFixtures.body(entry, seed: UInt64(index))) != nil)
                    largest = max(largest, cache.diskSize)
                }
                return largest
            }
            #expect(largest <= capacity + capacity / 5 + Int64(entry), "largest size seen \(largest), capacity \(capacity)")
            caches[0].scanDisk()
            #expect(caches[0].diskSize <= capacity)
            #expect(caches[1].entry(for: StoreFixtures.key("fill-79")) != nil, "the newest entry survives")
        }

        /// Another process writes the same keys while this one does.
        @Test(.enabled(if: SelfProcess.testBinary != nil, "needs the test binary (an .xctest runnable by itself) to start a child"))
        func aChildProcessWritingIntoTheSameDirectory() async throws {
            let directory = makeTemporaryDirectory("store-child")
            defer { try? FileManager.default.removeItem(at: directory) }
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let binary = try #require(SelfProcess.testBinary)
            var environment = ProcessInfo.processInfo.environment
            environment[Self.childDirectoryVariable] = directory.path
            // Every test named in the child's output (a quiet run would name none), so that the
            // check below sees that the helper ran.
            environment["COURIER_TEST_VERBOSE"] = "1"
            let logs = ["out", "err"].map { directory.deletingLastPathComponent().appendingPathComponent("\(directory.lastPathComponent).\($0)") }
            defer { logs.forEach { try? FileManager.default.removeItem(at: $0) } }
            let child = try ChildProcess(
                executable: binary.path,
                arguments: ["--testing-library", "swift-testing", "--filter", "childProcessWriterHelper"],
                environment: environment, stdout: .file(logs[0].path), stderr: .file(logs[1].path))
            try await StoreFixtures.offThePool { Self.writeAll(ResponseCache(diskDirectory: directory), writer: 1) }
            let exit = await child.wait(timeout: .seconds(120))
            let output = logs.map { (try? String(contentsOf: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n")
            #expect(exit == ChildProcess.Exit(status: 0, signalled: false), "\(output.suffix(3000))")
            #expect(output.contains("childProcessWriterHelper"), "the child ran the writer: \(output.suffix(2000))")
            try await StoreFixtures.offThePool { try Self.verify(directory, writers: [1, 2]) }
        }

        /// The child's side of ``aChildProcessWritingIntoTheSameDirectory()``; does nothing
        /// unless started by it.
        @Test(.enabled(if: ProcessInfo.processInfo.environment[SharedDirectoryTests.childDirectoryVariable] != nil))
        func childProcessWriterHelper() throws {
            let path = try #require(ProcessInfo.processInfo.environment[Self.childDirectoryVariable])
            Self.writeAll(ResponseCache(diskDirectory: URL(fileURLWithPath: path)), writer: 2)
        }
    }
}

/// The test binary itself, when it can be started again as a child (Linux: the `.xctest`
/// executable `swift test` runs).
enum SelfProcess {
    static let testBinary: URL? = {
        guard let first = CommandLine.arguments.first else { return nil }
        let url = URL(fileURLWithPath: first).resolvingSymlinksInPath()
        guard url.pathExtension == "xctest", FileManager.default.isExecutableFile(atPath: url.path) else { return nil }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else { return nil }
        return url
    }()
}
