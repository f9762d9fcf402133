import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer
import CourierLocking

/// The HTTP cache through real requests on both transports, with the clock injected: what is
/// served from the store, what is revalidated, what reaches the server.
@Suite("HTTP cache: end to end") struct HTTPCacheEndToEndTests {
    /// Records the cache events a session's requests report.
    final class CacheEvents: EventMonitor {
        private let events = Locked<[HTTPCacheEvent]>([])
        var all: [HTTPCacheEvent] { events.withLock { $0 } }
        func request(_ request: any Request, didUseCache event: HTTPCacheEvent) { events.withLock { $0.append(event) } }
        func reset() { events.withLock { $0.removeAll() } }
    }

    struct Fixture {
        let server: TestServer
        let time: TestTime
        let cache: ResponseCache
        let session: Session
        let events: CacheEvents

        func get(_ path: String, headers: HTTPHeaders = [:], policy: HTTPCachePolicy? = nil) async -> DataResponse<String, CourierError> {
            let request = session.request(path, headers: headers)
            if let policy { request.cachePolicy(policy) }
            return await request.serializingString().response
        }

        /// The requests for `path` the server saw, in order.
        func seen(_ path: String) -> [RecordedRequest] { server.recordedRequests.filter { $0.path == path } }
    }

    static func withFixture(
        _ transport: TransportUnderTest, mode: HTTPCacheMode = .enabled, directory: URL? = nil,
        deduplication: DeduplicationPolicy = .disabled, _ body: (Fixture) async throws -> Void
    ) async throws {
        try await withServer { server async throws in
            let time = TestTime()
            let cache = ResponseCache(memoryCapacity: 8 << 20, diskDirectory: directory, now: { time.now })
            var configuration = appConfiguration(transport)
            configuration.httpCache = mode
            let events = CacheEvents()
            let session = Session(
                configuration: configuration, baseURL: server.baseURL, eventMonitors: [events],
                deduplication: deduplication, responseCache: cache, callbackQueue: testCallbackQueue)
            try await body(Fixture(server: server, time: time, cache: cache, session: session, events: events))
        }
    }

    /// Serves `path` with a body that counts the requests it answered ("v1", "v2"…) and `headers`;
    /// a request whose `If-None-Match` names the current ETag gets a 304.
    static func routeVersioned(
        _ server: TestServer, _ path: String, headers: [(String, String)], etag: Bool = true,
        changesEvery: Int = .max
    ) {
        let served = Locked(0)
        server.route(path) { request in
            let count = served.withLock { count -> Int in
                count += 1
                return count
            }
            let version = (count - 1) / changesEvery + 1
            let tag = "\"v\(version)\""
            if etag, request.headers["If-None-Match"] == tag {
                var response = MockResponse.status(304).header("ETag", tag)
                for (name, value) in headers { response = response.header(name, value) }
                return response
            }
            var response = MockResponse.text("v\(version)")
            if etag { response = response.header("ETag", tag) }
            for (name, value) in headers { response = response.header(name, value) }
            return response
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aFreshResponseIsServedFromTheStoreWithItsAge(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/fresh", headers: [("Cache-Control", "max-age=60")])
            let first = await f.get("fresh")
            #expect(first.value == "v1")
            #expect(first.source == .network)
            f.time.advance(by: .seconds(30))
            let second = await f.get("fresh")
            #expect(second.value == "v1")
            #expect(second.source == .cache)
            #expect(second.metrics?.source == .cache)
            #expect(second.response?.statusCode == 200)
            #expect(second.response?.value(forHTTPHeaderField: "Age") == "30")
            #expect(second.response?.value(forHTTPHeaderField: "ETag") == "\"v1\"")
            #expect(f.seen("/fresh").count == 1)
            #expect(f.events.all.contains(.stored(bytes: 2)))
            #expect(f.events.all.last == .hit(.cache))
        }
    }

    /// Hits on one stored response in the same second share one `HTTPURLResponse` (a speed
    /// trick, ``HTTPResponseMemo``); a hit a second later, with another `Age`, gets its own.
    @Test(arguments: TransportUnderTest.available)
    func hitsShareAFoundationResponseOnlyWhileTheirHeadsAreTheSame(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/shared", headers: [("Cache-Control", "max-age=60")])
            #expect(await f.get("shared").source == .network)
            f.time.advance(by: .seconds(3))
            let first = await f.get("shared"), second = await f.get("shared")
            let (one, two) = (try #require(first.response), try #require(second.response))
            #expect(first.source == .cache && second.source == .cache)
            #expect(one.value(forHTTPHeaderField: "Age") == "3" && two.value(forHTTPHeaderField: "Age") == "3")
            #expect(one.statusCode == 200 && two.value(forHTTPHeaderField: "ETag") == "\"v1\"")
            #expect((one === two) == FastPaths.isOn(.memo), "the same head: one response with the fast paths on, two without")

            f.time.advance(by: .seconds(1))
            let later = try #require(await f.get("shared").response)
            #expect(later !== one)
            #expect(later.value(forHTTPHeaderField: "Age") == "4")
        }
    }

    /// A `304` that changes a stored header at the same `Age`: the next hit's response says so,
    /// not the one built before.
    @Test(arguments: TransportUnderTest.available)
    func aHitAfterARevalidationThatChangedTheHeadersCarriesTheNewOnes(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            let served = Locked(0)
            f.server.route("/changing") { _ in
                let count = served.withLock {
                    $0 += 1
                    return $0
                }
                let base = count == 1 ? MockResponse.text("body") : MockResponse.status(304)
                return base.header("Cache-Control", "max-age=60").header("ETag", "\"e\"").header("X-Version", "\(count)")
            }
            #expect(await f.get("changing").source == .network)
            let before = try #require(await f.get("changing").response)
            #expect(before.value(forHTTPHeaderField: "X-Version") == "1")
            #expect(await f.get("changing", policy: .revalidate).source == .revalidated)
            let after = await f.get("changing")
            #expect(after.source == .cache && after.value == "body")
            #expect(after.response?.value(forHTTPHeaderField: "X-Version") == "2")
            #expect(after.response?.value(forHTTPHeaderField: "Age") == before.value(forHTTPHeaderField: "Age"))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStaleResponseIsRevalidatedAndA304ServesTheStoredBody(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/etag", headers: [("Cache-Control", "max-age=10")])
            #expect(await f.get("etag").value == "v1")
            f.time.advance(by: .seconds(11))
            let revalidated = await f.get("etag")
            #expect(revalidated.value == "v1")
            #expect(revalidated.source == .revalidated)
            #expect(revalidated.response?.statusCode == 200)
            #expect(revalidated.response?.value(forHTTPHeaderField: "Content-Length") == "2")
            let sent = f.seen("/etag")
            #expect(sent.count == 2)
            #expect(sent.last?.headers["If-None-Match"] == "\"v1\"")
            #expect(f.events.all.contains(.revalidated(notModified: true)))
            // The 304 freshened the stored response: fresh again for max-age.
            f.time.advance(by: .seconds(5))
            #expect(await f.get("etag").source == .cache)
            #expect(f.seen("/etag").count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func lastModifiedIsSentBackAsIfModifiedSince(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            let lastModified = "Sun, 06 Nov 1994 08:49:37 GMT"
            let served = Locked(0)
            f.server.route("/dated") { request in
                served.withLock { $0 += 1 }
                if request.headers["If-Modified-Since"] == lastModified { return .status(304) }
                return MockResponse.text("dated").header("Cache-Control", "no-cache").header("Last-Modified", lastModified)
            }
            #expect(await f.get("dated").value == "dated")
            let second = await f.get("dated")
            #expect(second.value == "dated")
            #expect(second.source == .revalidated)
            #expect(f.seen("/dated").last?.headers["If-Modified-Since"] == lastModified)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aChangedResourceReplacesTheStoredOne(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/changing", headers: [("Cache-Control", "max-age=10")], changesEvery: 1)
            #expect(await f.get("changing").value == "v1")
            f.time.advance(by: .seconds(11))
            let changed = await f.get("changing")
            #expect(changed.value == "v2")
            #expect(changed.source == .network)
            #expect(f.events.all.contains(.revalidated(notModified: false)))
            #expect(await f.get("changing").value == "v2")
            #expect(f.seen("/changing").count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func a304ForAnotherRepresentationIsNotUsedAndTheRequestIsSentAgain(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            let served = Locked(0)
            f.server.route("/odd304") { request in
                let count = served.withLock { count -> Int in
                    count += 1
                    return count
                }
                // A broken server: the 304 names another ETag than the one asked about.
                if request.headers["If-None-Match"] != nil { return MockResponse.status(304).header("ETag", "\"other\"") }
                return MockResponse.text("body \(count)").header("Cache-Control", "max-age=1").header("ETag", "\"v\(count)\"")
            }
            #expect(await f.get("odd304").value == "body 1")
            f.time.advance(by: .seconds(5))
            let again = await f.get("odd304")
            #expect(again.value == "body 3")
            #expect(again.source == .network)
            let sent = f.seen("/odd304")
            #expect(sent.map { $0.headers["If-None-Match"] } == [nil, "\"v1\"", nil])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func noStoreAndUncacheableResponsesAreNeverStored(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/secret", headers: [("Cache-Control", "no-store, max-age=600")], changesEvery: 1)
            f.server.route("/error") { _ in MockResponse.text("boom", status: 500) }
            #expect(await f.get("secret").value == "v1")
            #expect(await f.get("secret").value == "v2")
            _ = await f.get("error")
            _ = await f.get("error")
            #expect(f.seen("/secret").count == 2)
            #expect(f.seen("/error").count == 2)
            #expect(!f.events.all.contains { if case .stored = $0 { true } else { false } })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theCacheIsOffUnlessTheSessionOrTheRequestAsks(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport, mode: .disabled) { f in
            Self.routeVersioned(f.server, "/plain", headers: [("Cache-Control", "max-age=600")], etag: false, changesEvery: 1)
            #expect(await f.get("plain").value == "v1")
            #expect(await f.get("plain").value == "v2")
            #expect(f.events.all.isEmpty)
            // A request's own policy uses the session's store.
            #expect(await f.get("plain", policy: .useProtocolPolicy).value == "v3")
            #expect(await f.get("plain", policy: .useProtocolPolicy).source == .cache)
            #expect(f.seen("/plain").count == 3)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func varyKeepsResponsesForOtherRequestHeadersApart(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(
                f.server, "/vary", headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language")], etag: false,
                changesEvery: 1)
            #expect(await f.get("vary", headers: ["Accept-Language": "fr"]).value == "v1")
            #expect(await f.get("vary", headers: ["Accept-Language": "fr"]).source == .cache)
            let other = await f.get("vary", headers: ["Accept-Language": "de"])
            #expect(other.value == "v2")
            #expect(other.source == .network)
            #expect(f.seen("/vary").count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSuccessfulUnsafeRequestInvalidatesTheStoredResponse(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/item", headers: [("Cache-Control", "max-age=600")], etag: false)
            #expect(await f.get("item").value == "v1")
            #expect(await f.get("item").source == .cache)
            _ = await f.session.request("item", method: .post, parameters: ["name": "new"]).serializingData().response
            let after = await f.get("item")
            #expect(after.source == .network)
            #expect(f.events.all.contains { if case .invalidated = $0 { true } else { false } })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func onlyIfCachedAnswers504WhenNothingIsStoredAndServesStaleOtherwise(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/offline", headers: [("Cache-Control", "max-age=10")])
            let nothing = await f.get("offline", policy: .onlyIfCached)
            #expect(nothing.response?.statusCode == 504)
            #expect(f.seen("/offline").isEmpty)
            #expect(await f.get("offline").value == "v1")
            f.time.advance(by: .seconds(3600))
            let stale = await f.get("offline", policy: .onlyIfCached)
            #expect(stale.value == "v1")
            #expect(stale.source == .staleCache(.cachePolicy))
            let elseLoad = await f.get("offline", policy: .returnCacheElseLoad)
            #expect(elseLoad.source == .staleCache(.cachePolicy))
            #expect(f.seen("/offline").count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func reloadSkipsTheStoreAndRevalidateAsksEvenWhenFresh(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/policy", headers: [("Cache-Control", "max-age=600")])
            #expect(await f.get("policy").value == "v1")
            let reloaded = await f.get("policy", policy: .reloadIgnoringCache)
            #expect(reloaded.source == .network)
            #expect(f.seen("/policy").last?.headers["If-None-Match"] == nil)
            let revalidated = await f.get("policy", policy: .revalidate)
            #expect(revalidated.source == .revalidated)
            #expect(f.seen("/policy").last?.headers["If-None-Match"] != nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func requestDirectivesAreHonoured(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/directives", headers: [("Cache-Control", "max-age=60")])
            #expect(await f.get("directives").value == "v1")
            f.time.advance(by: .seconds(30))
            // no-cache: ask the server even though the stored response is fresh.
            #expect(await f.get("directives", headers: ["Cache-Control": "no-cache"]).source == .revalidated)
            f.time.advance(by: .seconds(90))
            // max-stale: a response stale by 30 s is acceptable.
            #expect(await f.get("directives", headers: ["Cache-Control": "max-stale=60"]).source == .staleCache(.maxStaleAllowed))
            #expect(f.seen("/directives").count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func staleWhileRevalidateServesAtOnceAndRefreshesInTheBackground(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/swr", headers: [("Cache-Control", "max-age=10, stale-while-revalidate=60")], changesEvery: 1)
            #expect(await f.get("swr").value == "v1")
            f.time.advance(by: .seconds(20))
            let stale = await f.get("swr")
            #expect(stale.value == "v1")
            #expect(stale.source == .staleCache(.staleWhileRevalidate))
            // The refresh runs without the request (its events reach no monitor: the request that
            // started it is over); once it stored v2, v2 is served fresh.
            let key = HTTPCache.key(for: f.server.url("/swr"), authorization: nil)
            #expect(await eventually { f.cache.entry(for: key)?.head.headers.value(for: "ETag") == "\"v2\"" })
            #expect(f.seen("/swr").count == 2)
            let refreshed = await f.get("swr")
            #expect(refreshed.value == "v2")
            #expect(refreshed.source == .cache)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func staleIfErrorServesTheStoredResponseWhenTheServerFails(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            let failing = Locked(false)
            f.server.route("/flaky") { _ in
                if failing.withLock({ $0 }) { return MockResponse.text("down", status: 503) }
                return MockResponse.text("good").header("Cache-Control", "max-age=10, stale-if-error=600").header("ETag", "\"g\"")
            }
            #expect(await f.get("flaky").value == "good")
            failing.withLock { $0 = true }
            f.time.advance(by: .seconds(60))
            let rescued = await f.get("flaky")
            #expect(rescued.value == "good")
            #expect(rescued.response?.statusCode == 200)
            #expect(rescued.source == .staleCache(.staleIfError))
            #expect(f.seen("/flaky").count == 2)
        }
    }

    /// Issue 36: `stale-if-error` covers any stored response, not only one with a validator to
    /// revalidate it with (a stale response without validators is fetched afresh; a 5xx answer
    /// then gets the stored one).
    @Test(arguments: TransportUnderTest.available)
    func staleIfErrorServesAStoredResponseWithoutValidators(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            // 0: a good response without validators; 1: a 503; 2: the connection reset before any head.
            let mode = Locked(0)
            f.server.route("/plain") { _ in
                switch mode.withLock({ $0 }) {
                case 0: MockResponse.text("good").header("Cache-Control", "max-age=10, stale-if-error=600")
                case 1: MockResponse.text("down", status: 503)
                default: MockResponse.text("never").effect(.reset, at: .afterRequest)
                }
            }
            #expect(await f.get("plain").value == "good")
            mode.withLock { $0 = 1 }
            f.time.advance(by: .seconds(60))
            let rescued = await f.get("plain")
            #expect(rescued.value == "good")
            #expect(rescued.response?.statusCode == 200)
            #expect(rescued.source == .staleCache(.staleIfError))
            #expect(f.seen("/plain").count == 2, "the stale response was asked for afresh first")
            #expect(f.seen("/plain").last?.headers["If-None-Match"] == nil)
            mode.withLock { $0 = 2 }
            let unreachable = await f.get("plain")
            #expect(unreachable.value == "good", "\(unreachable.error.map { "\($0)" } ?? "")")
            #expect(unreachable.source == .staleCache(.staleIfError))
            // Past the window, the error reaches the request and the stored response goes.
            mode.withLock { $0 = 1 }
            f.time.advance(by: .seconds(600))
            let failed = await f.get("plain")
            #expect(failed.response?.statusCode == 503)
            #expect(failed.source == .network)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headIsAnsweredFromAStoredGet(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/headed", headers: [("Cache-Control", "max-age=600")])
            #expect(await f.get("headed").value == "v1")
            let head = await f.session.request("headed", method: .head).serializingData().response
            #expect(head.response?.statusCode == 200)
            #expect(head.source == .cache)
            #expect(head.data?.isEmpty ?? true)
            #expect(f.seen("/headed").count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func permanentRedirectsAndTheirTargetsAreStoredUnderTheirOwnURLs(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            // A 301 is cacheable by default, but without explicit freshness (or Last-Modified) no heuristic applies.
            f.server.route("/old") { _ in MockResponse.redirect(to: "/new", status: 301).header("Cache-Control", "max-age=3600") }
            Self.routeVersioned(f.server, "/new", headers: [("Cache-Control", "max-age=600")])
            #expect(await f.get("old").value == "v1")
            let again = await f.get("old")
            #expect(again.value == "v1")
            #expect(again.source == .cache)
            #expect(f.seen("/old").count == 1)
            #expect(f.seen("/new").count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aCompressedResponseIsStoredDecoded(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            let text = String(repeating: "compressible ", count: 1000)
            f.server.route("/gz") { _ in MockResponse.text(text).header("Cache-Control", "max-age=600").gzip() }
            #expect(await f.get("gz").value == text)
            let stored = await f.get("gz")
            #expect(stored.value == text)
            #expect(stored.source == .cache)
            #expect(stored.response?.value(forHTTPHeaderField: "Content-Encoding") == nil)
            #expect(stored.response?.value(forHTTPHeaderField: "Content-Length") == String(text.utf8.count))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func credentialsKeepTwoAccountsApart(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            f.server.route("/me") { request in
                MockResponse.text(request.headers["Authorization"] ?? "nobody").header("Cache-Control", "private, max-age=600")
            }
            #expect(await f.get("me", headers: ["Authorization": "Bearer alice"]).value == "Bearer alice")
            #expect(await f.get("me", headers: ["Authorization": "Bearer bob"]).value == "Bearer bob")
            let alice = await f.get("me", headers: ["Authorization": "Bearer alice"])
            #expect(alice.value == "Bearer alice")
            #expect(alice.source == .cache)
            #expect(f.seen("/me").count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSharedCacheKeepsNoPrivateResponses(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport, mode: .shared) { f in
            Self.routeVersioned(f.server, "/mine", headers: [("Cache-Control", "private, max-age=600")], etag: false, changesEvery: 1)
            #expect(await f.get("mine").value == "v1")
            #expect(await f.get("mine").value == "v2")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func identicalRevalidationsShareOneConditionalRequest(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport, deduplication: .safeMethods) { f in
            let gate = Gate()
            let served = Locked(0)
            f.server.route("/shared") { _ in
                let count = served.withLock { count -> Int in
                    count += 1
                    return count
                }
                if count == 1 { return MockResponse.text("one").header("Cache-Control", "max-age=1").header("ETag", "\"1\"") }
                return MockResponse.status(304).header("ETag", "\"1\"").waiting(for: gate)
            }
            #expect(await f.get("shared").value == "one")
            f.time.advance(by: .seconds(5))
            async let first = f.get("shared")
            async let second = f.get("shared")
            #expect(await eventually { f.server.requestCount(path: "/shared") == 2 })
            gate.open()
            let (a, b) = await (first, second)
            #expect(a.value == "one")
            #expect(b.value == "one")
            #expect(a.source == .revalidated)
            #expect(b.source == .revalidated)
            #expect(f.seen("/shared").count == 2)
            #expect(f.seen("/shared").last?.headers["If-None-Match"] == "\"1\"")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theTTLCacheAndTheHTTPCacheShareAStoreWithoutMixing(transport: TransportUnderTest) async throws {
        try await Self.withFixture(transport) { f in
            Self.routeVersioned(f.server, "/both", headers: [("Cache-Control", "no-store")], etag: false, changesEvery: 1)
            let ttl = await f.session.request("both").cached(for: .seconds(60)).serializingString().response
            #expect(ttl.value == "v1")
            // The TTL cache ignores Cache-Control by design; the HTTP cache respects no-store.
            #expect(await f.session.request("both").cached(for: .seconds(60)).serializingString().response.source == .cache)
            #expect(await f.get("both").value == "v2")
            #expect(await f.get("both").value == "v3")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theDiskStoreServesANewSession(transport: TransportUnderTest) async throws {
        let directory = makeTemporaryDirectory("http-cache")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await withServer { server async throws in
            Self.routeVersioned(server, "/persisted", headers: [("Cache-Control", "max-age=600")])
            for round in 1...2 {
                var configuration = appConfiguration(transport)
                configuration.httpCache = .enabled
                let session = Session(
                    configuration: configuration, baseURL: server.baseURL,
                    responseCache: ResponseCache(diskDirectory: directory), callbackQueue: testCallbackQueue)
                let response = await session.request("persisted").serializingString().response
                #expect(response.value == "v1")
                #expect(response.source == (round == 1 ? .network : .cache))
            }
            #expect(server.requestCount(path: "/persisted") == 1)
        }
    }
}
