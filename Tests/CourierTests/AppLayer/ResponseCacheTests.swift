import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

extension AppLayer {
    /// `cached(for:version:)`, `cachedResponse()` and `ignoringCache()` through real requests.
    @Suite("AppLayer: response cache") struct ResponseCacheTests {
        struct Profile: Decodable, Sendable, Equatable { let name: String }

        @Test(arguments: TransportUnderTest.available)
        func aFreshStoredResponseIsServedWithoutARequest(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let session = makeCachingSession(transport, server: server, cache: ResponseCache())
                let first = await session.request("profile").cached(for: .seconds(60)).serializingString().response
                let second = await session.request("profile").cached(for: .seconds(60)).validate().serializingString().response
                #expect(first.value == "v1")
                #expect(second.value == "v1")
                #expect(server.requestCount(path: "/profile") == 1)
                #expect(second.metrics?.transport == "cache")
                #expect(second.response?.statusCode == 200)
                #expect(second.response?.value(forHTTPHeaderField: "Content-Type") == "text/plain; charset=utf-8")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func anExpiredResponseIsFetchedAgain(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let time = TestTime()
                let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: nil, now: { time.now })
                let session = makeCachingSession(transport, server: server, cache: cache)
                func load() async -> String? {
                    await session.request("profile").cached(for: .seconds(180)).serializingString().response.value
                }
                #expect(await load() == "v1")
                time.advance(by: .seconds(179))
                #expect(await load() == "v1")
                #expect(server.requestCount(path: "/profile") == 1)
                time.advance(by: .seconds(2))
                #expect(await load() == "v2")
                #expect(server.requestCount(path: "/profile") == 2)
                #expect(await load() == "v2")
                #expect(server.requestCount(path: "/profile") == 2)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aNewVersionIsFetchedAgain(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let session = makeCachingSession(transport, server: server, cache: ResponseCache())
                func load(_ version: Int?) async -> String? {
                    await session.request("profile").cached(for: .seconds(600), version: version).serializingString().response.value
                }
                #expect(await load(1) == "v1")
                #expect(await load(1) == "v1")
                #expect(await load(2) == "v2")
                #expect(await load(2) == "v2")
                // A response stored with a version never answers a request without one, and the other way round.
                #expect(await load(nil) == "v3")
                #expect(await load(nil) == "v3")
                #expect(await load(2) == "v4")
                #expect(server.requestCount(path: "/profile") == 4)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func theStaleValueStaysAvailableUntilTheRefreshReplacesIt(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let time = TestTime()
                let cache = ResponseCache(memoryCapacity: 1 << 20, diskDirectory: nil, now: { time.now })
                let session = makeCachingSession(transport, server: server, cache: cache)
                #expect(await session.request("profile").cachedResponse() == nil)
                _ = await session.request("profile").cached(for: .seconds(10)).serializingString().response
                time.advance(by: .seconds(3600))

                let refresh = session.request("profile").cached(for: .seconds(10))
                let stale = try #require(await refresh.cachedResponse())
                #expect(stale.text == "v1")
                #expect(stale.response?.statusCode == 200)
                #expect(server.requestCount(path: "/profile") == 1)
                #expect(await refresh.serializingString().response.value == "v2")
                #expect(await session.request("profile").cachedResponse()?.text == "v2")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func theDiskCacheSurvivesANewSessionAndCache(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let directory = makeTemporaryDirectory("response-cache")
                defer { try? FileManager.default.removeItem(at: directory) }
                do {
                    let session = makeCachingSession(transport, server: server, cache: ResponseCache(diskDirectory: directory))
                    #expect(await session.request("profile").cached(for: .seconds(60)).serializingString().response.value == "v1")
                }
                let later = makeCachingSession(transport, server: server, cache: ResponseCache(diskDirectory: directory))
                let response = await later.request("profile").cached(for: .seconds(60)).serializingString().response
                #expect(response.value == "v1")
                #expect(response.metrics?.transport == "cache")
                #expect(server.requestCount(path: "/profile") == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func ignoringTheCacheGoesToTheNetworkAndStoresTheResult(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let session = makeCachingSession(transport, server: server, cache: ResponseCache())
                #expect(await session.request("profile").cached(for: .seconds(60)).serializingString().response.value == "v1")
                #expect(await session.request("profile").cached(for: .seconds(60)).ignoringCache().serializingString().response.value == "v2")
                // Either order of the two calls works.
                #expect(await session.request("profile").ignoringCache().cached(for: .seconds(60)).serializingString().response.value == "v3")
                #expect(await session.request("profile").cached(for: .seconds(60)).serializingString().response.value == "v3")
                #expect(server.requestCount(path: "/profile") == 3)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func failedResponsesAreNotStored(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.json(#"{"error":"busy"}"#, status: 503), .json(#"{"name":"Ada"}"#)])
                let session = makeCachingSession(transport, server: server, cache: ResponseCache())
                let failed = await session.request("profile").cached(for: .seconds(60)).validate().serializingDecodable(Profile.self).response
                #expect(failed.error?.kind == .validationFailed)
                #expect(await session.request("profile").cachedResponse() == nil)
                let fetched = try await session.request("profile").cached(for: .seconds(60)).validate().serializingDecodable(Profile.self).value
                let replayed = try await session.request("profile").cached(for: .seconds(60)).validate().serializingDecodable(Profile.self).value
                #expect(fetched == Profile(name: "Ada"))
                #expect(replayed == fetched)
                #expect(server.requestCount == 2)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func theKeyFollowsParametersAndVaryingHeaders(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/search")
                let session = makeCachingSession(transport, server: server, cache: ResponseCache())
                func load(_ path: String, headers: HTTPHeaders? = nil) async -> String? {
                    await session.request(path, headers: headers).cached(for: .seconds(60)).serializingString().response.value
                }
                #expect(await load("search?q=swift&page=2") == "v1")
                #expect(await load("search?page=2&q=swift") == "v1")
                #expect(
                    await session.request("search", parameters: ["q": "swift", "page": "2"]).cached(for: .seconds(60))
                        .serializingString().response.value == "v1")
                #expect(await load("search?q=swift&page=2", headers: [.accept("application/json")]) == "v2")
                #expect(await load("search?q=swift&page=2", headers: [.authorization(bearerToken: "alice")]) == "v3")
                #expect(await load("search?q=swift&page=2", headers: [.authorization(bearerToken: "bob")]) == "v4")
                #expect(await load("search?q=swift&page=2", headers: ["X-Trace": "1"]) == "v1")
                #expect(server.requestCount(path: "/search") == 4)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func requestsNotMarkedCachedNeitherReadNorStore(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                routeCounting(server, "/profile")
                let cache = ResponseCache()
                let session = makeCachingSession(transport, server: server, cache: cache)
                #expect(await session.request("profile").serializingString().response.value == "v1")
                #expect(cache.memoryCount == 0)
                #expect(await session.request("profile").cached(for: .seconds(60)).serializingString().response.value == "v2")
                #expect(await session.request("profile").serializingString().response.value == "v3")
            }
        }
    }
}
