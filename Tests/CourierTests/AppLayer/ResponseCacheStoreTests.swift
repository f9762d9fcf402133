import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

extension AppLayer {
    /// `ResponseCache` and `ResponseCacheKey` as values: eviction, expiry, disk format, concurrency.
    @Suite("AppLayer: response cache store") struct ResponseCacheStoreTests {
        static func key(_ url: String, headers: [String: String] = [:], method: HTTPMethod = .get, body: Data? = nil) -> ResponseCacheKey {
            var request = URLRequest(url: URL(string: url) ?? URL(fileURLWithPath: "/"))
            request.method = method
            for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
            request.httpBody = body
            return ResponseCacheKey(request)
        }

        static func response(_ text: String, at date: Date = Date(), version: Int? = nil) -> CachedResponse {
            CachedResponse(statusCode: 200, headers: ["Content-Type": "text/plain"], data: Data(text.utf8), storedAt: date, version: version)
        }

        @Test func theKeyIsCanonicalAndStable() {
            let key = Self.key(
                "HTTP://API.Example.com:80/users?b=2&a=1&a=0#top",
                headers: ["Accept": "application/json", "User-Agent": "x", "Authorization": "Bearer secret"])
            #expect(
                key.rawValue == """
                    GET http://api.example.com/users?a=1&a=0&b=2
                    accept: application/json
                    authorization: sha256:\(SHA256.hash(Data("Bearer secret".utf8)).hexString)
                    """)
            #expect(!key.rawValue.contains("secret"))
            // The file name is part of the disk format: it must not change between processes or releases.
            #expect(Self.key("https://example.com/").fileName == "06b9566227767dcb7544eec2cdf632fa4db4b4a97c65f506cf44adf2456554f2")
            #expect(Self.key("https://example.com") == Self.key("https://example.com:443/"))
            #expect(Self.key("https://example.com/", method: .post) != Self.key("https://example.com/"))
            #expect(
                Self.key("https://example.com/", method: .post, body: Data("a".utf8))
                    != Self.key("https://example.com/", method: .post, body: Data("b".utf8)))
        }

        @Test func freshnessNeedsAgeBelowTheMaximumAndTheSameVersion() {
            let time = TestTime()
            let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: nil, now: { time.now })
            let key = Self.key("https://example.com/a")
            cache.store(Self.response("one", at: time.now, version: 3), for: key)
            #expect(cache.fresh(for: key, maximumAge: .seconds(10), version: 3)?.data == Data("one".utf8))
            #expect(cache.fresh(for: key, maximumAge: .seconds(10), version: 4) == nil)
            #expect(cache.fresh(for: key, maximumAge: .seconds(10), version: nil) == nil)
            time.advance(by: .seconds(10))
            #expect(cache.fresh(for: key, maximumAge: .seconds(10), version: 3) == nil)
            #expect(cache.latest(for: key)?.version == 3)
        }

        @Test func memoryEvictsTheLeastRecentlyUsedBeyondItsCapacity() {
            let key = { (name: String) in Self.key("https://example.com/\(name)") }
            let body = String(repeating: "x", count: 1000)
            // What one entry costs once stored (the cache adds a Content-Length).
            let probe = ResponseCache()
            probe.store(Self.response(body), for: key("a"))
            let cost = probe.memoryCost
            let cache = ResponseCache(memoryCapacity: cost * 3, diskDirectory: nil, now: { Date() })
            for name in ["a", "b", "c"] { cache.store(Self.response(body), for: key(name)) }
            #expect(cache.memoryCount == 3)
            _ = cache.latest(for: key("a"))  // a is now the most recently used
            cache.store(Self.response(body), for: key("d"))
            #expect(cache.memoryCount == 3)
            #expect(cache.latest(for: key("b")) == nil)
            #expect(cache.memoryKeysByRecency == [key("d"), key("a"), key("c")])
            #expect(cache.memoryCost <= cost * 3)
            // A response larger than the whole capacity is not kept (and evicts nothing).
            cache.store(Self.response(String(repeating: "y", count: cost * 4)), for: key("huge"))
            #expect(cache.latest(for: key("huge")) == nil)
            #expect(cache.memoryCount == 3)
        }

        @Test func removalAndExpiry() throws {
            let time = TestTime()
            let directory = makeTemporaryDirectory("cache-removal")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory, now: { time.now })
            let old = Self.key("https://example.com/old"), new = Self.key("https://example.com/new"), other = Self.key("https://example.com/other")
            cache.store(Self.response("old", at: time.now), for: old)
            time.advance(by: .seconds(100))
            cache.store(Self.response("new", at: time.now), for: new)
            cache.store(Self.response("other", at: time.now), for: other)
            let unrelated = directory.appendingPathComponent("notes.txt")
            try Data("keep me".utf8).write(to: unrelated)

            cache.removeExpired(olderThan: .seconds(50))
            #expect(cache.latest(for: old) == nil)
            #expect(ResponseCache(diskDirectory: directory).latest(for: old) == nil)
            #expect(cache.latest(for: new) != nil)

            cache.remove(for: new)
            #expect(cache.latest(for: new) == nil)
            #expect(ResponseCache(diskDirectory: directory).latest(for: new) == nil)
            #expect(ResponseCache(diskDirectory: directory).latest(for: other)?.data == Data("other".utf8))

            cache.removeAll()
            #expect(cache.latest(for: other) == nil)
            #expect(cache.memoryCount == 0)
            #expect(FileManager.default.fileExists(atPath: unrelated.path))
        }

        @Test func theDiskStoreKeepsEverythingButCredentialsAndWireHeaders() throws {
            let directory = makeTemporaryDirectory("cache-disk")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = Self.key("https://example.com/me", headers: ["Authorization": "Bearer top-secret-token"])
            let stored = CachedResponse(
                statusCode: 203,
                headers: [
                    "Content-Type": "application/json", "Content-Encoding": "gzip",
                    "Set-Cookie": "a=b", "ETag": "\"1\"",
                ],
                data: Data(#"{"me":1}"#.utf8), storedAt: Date(timeIntervalSince1970: 1_700_000_000.25), version: 7)
            ResponseCache(memoryCapacity: 0, diskDirectory: directory).store(stored, for: key)

            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files == ["\(key.fileName).response"])
            let raw = try Data(contentsOf: directory.appendingPathComponent(files[0]))
            #expect(!String(decoding: raw, as: UTF8.self).contains("top-secret-token"))

            let loaded = try #require(ResponseCache(diskDirectory: directory).latest(for: key))
            #expect(loaded.statusCode == 203)
            #expect(loaded.data == stored.data)
            #expect(loaded.version == 7)
            #expect(loaded.storedAt == stored.storedAt)
            #expect(loaded.headers["ETag"] == "\"1\"")
            #expect(loaded.headers["Content-Encoding"] == nil)
            #expect(loaded.headers["Set-Cookie"] == nil)
            #expect(loaded.headers["Content-Length"] == "8")
        }

        @Test func aDamagedFileIsAMiss() throws {
            let directory = makeTemporaryDirectory("cache-damaged")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = Self.key("https://example.com/damaged")
            let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
            cache.store(Self.response("fine"), for: key)
            let file = directory.appendingPathComponent("\(key.fileName).response")
            let whole = try Data(contentsOf: file)
            try whole.prefix(10).write(to: file)
            #expect(cache.latest(for: key) == nil)
            try Data("garbage".utf8).write(to: file)
            #expect(cache.latest(for: key) == nil)
        }

        @Test func aCacheSeesWhatAnotherOneOnTheSameDirectoryStoredLater() {
            let directory = makeTemporaryDirectory("cache-shared")
            defer { try? FileManager.default.removeItem(at: directory) }
            let key = Self.key("https://example.com/shared")
            let first = ResponseCache(diskDirectory: directory), second = ResponseCache(diskDirectory: directory)
            first.store(Self.response("one", at: Date(timeIntervalSinceNow: -5)), for: key)
            second.store(Self.response("two"), for: key)
            #expect(first.latest(for: key)?.data == Data("two".utf8))
            #expect(first.fresh(for: key, maximumAge: .seconds(60), version: nil)?.data == Data("two".utf8))
        }

        @Test func concurrentStoresAndReadsAreSafe() {
            let directory = makeTemporaryDirectory("cache-concurrent")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(memoryCapacity: 64 << 10, diskDirectory: directory)
            let keys = (0..<16).map { Self.key("https://example.com/\($0)") }
            DispatchQueue.concurrentPerform(iterations: 400) { iteration in
                let key = keys[iteration % keys.count]
                switch iteration % 5 {
                case 0, 1: cache.store(Self.response(String(repeating: "z", count: 2000 + iteration)), for: key)
                case 2: _ = cache.fresh(for: key, maximumAge: .seconds(60), version: nil)
                case 3: _ = cache.latest(for: key)
                default: iteration % 50 == 4 ? cache.removeExpired(olderThan: .seconds(3600)) : cache.remove(for: key)
                }
            }
            #expect(cache.memoryCost <= 64 << 10)
            for key in keys {
                if let stored = cache.latest(for: key) { #expect(stored.data.count >= 2000) }
            }
        }
    }
}
