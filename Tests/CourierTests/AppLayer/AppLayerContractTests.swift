import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTestServer

extension AppLayer {
    /// The "Seed-derived features" snippet of API.md, compiled and run against a test server.
    @Suite("AppLayer: API contract") struct AppLayerContractTests {
        @Test func theSeedDerivedSnippetWorksAsWritten() async throws {
            try await withServer { server async throws in
                server.dispatcher = { request in .ok("answer to \(request.path)") }
                let api = Session(baseURL: server.baseURL, callbackQueue: testCallbackQueue)

                let cached = api.request("profile").cached(for: .seconds(180), version: 2)  // TTL + version response cache
                #expect(try await cached.serializingString().value == "answer to /profile")
                let last = await api.request("profile").cachedResponse()  // last stored value, even if stale
                #expect(last?.data == Data("answer to /profile".utf8))

                let primary = server.baseURL
                let backup = try #require(URL(string: "http://127.0.0.1:\(try closedPort())/"))
                let servers = ServerPool([primary, backup], failover: .errorRate(0.1, minimumRequests: 40))
                let failing = Session(servers: servers, callbackQueue: testCallbackQueue)  // switch base URL on error rate
                #expect(try await failing.request("users").serializingString().value == "answer to /users")

                let r1 = api.request("a"), r2 = api.request("b"), r3 = api.request("c")
                let all = await RequestGroup([r1, r2, r3]).serializingData()  // batch: [DataResponse<Data, CourierError>]
                #expect(all.map(\.value) == ["a", "b", "c"].map { Data("answer to /\($0)".utf8) })
                #expect(server.requestCount(path: "/profile") == 1)
            }
        }
    }
}
