import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

extension AppLayer {
    /// `QueryParameterAdapter` and `PathRewriteAdapter`, as the server sees the requests.
    @Suite("AppLayer: URL filters") struct URLFilterTests {
        func session(_ transport: TransportUnderTest, _ server: TestServer, interceptor: (any RequestInterceptor)? = nil) -> Session {
            Session(
                configuration: appConfiguration(transport), baseURL: server.baseURL, interceptor: interceptor,
                callbackQueue: testCallbackQueue)
        }

        @Test(arguments: TransportUnderTest.available)
        func commonParametersAreAppendedAtSessionLevel(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.dispatcher = { _ in .ok("ok") }
                let session = session(transport, server, interceptor: QueryParameterAdapter(["app": "courier", "v": "1"]))
                _ = try await session.request("feed").serializingString().value
                _ = try await session.request("search?q=a%20b&v=2").serializingString().value
                _ = try await session.request("list", parameters: ["page": "3"]).serializingString().value
                let targets = server.recordedRequests.map(\.target)
                #expect(targets == ["/feed?app=courier&v=1", "/search?q=a%20b&v=2&app=courier", "/list?page=3&app=courier&v=1"])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func filtersWorkAtRequestLevelAndCombine(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.dispatcher = { _ in .ok("ok") }
                let session = session(transport, server, interceptor: PathRewriteAdapter.prefix("/api/v2"))
                let filters = Interceptor(adapters: [
                    QueryParameterAdapter(["token": "a&b=c", "lang": "zh-Hans 中"]),
                    PathRewriteAdapter.replacingPrefix("/api/v2/old/", with: "/api/v2/new/"),
                ])
                _ = try await session.request("old/feed", interceptor: filters).serializingString().value
                _ = try await session.request("plain").serializingString().value
                let dynamic = QueryParameterAdapter { request in
                    request.method == .post ? [] : [URLQueryItem(name: "ts", value: "42"), URLQueryItem(name: "flag", value: nil)]
                }
                _ = try await session.request("dynamic", interceptor: dynamic).serializingString().value
                _ = try await session.request("dynamic", method: .post, interceptor: dynamic).serializingString().value
                let targets = server.recordedRequests.map(\.target)
                #expect(
                    targets == [
                        "/api/v2/new/feed?token=a%26b%3Dc&lang=zh-Hans%20%E4%B8%AD", "/api/v2/plain",
                        "/api/v2/dynamic?ts=42&flag=", "/api/v2/dynamic",
                    ])
                #expect(server.recordedRequests.first?.query["token"] == "a&b=c")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func retriesNeverApplyAFilterTwice(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(503), .ok("ok")])
                let retryOnce = ClosureRetrier { request, _, _ in await request.retryCount == 0 ? .retry : .doNotRetry }
                let interceptor = Interceptor(
                    adapters: [QueryParameterAdapter(["app": "courier"]), PathRewriteAdapter.prefix("v1")],
                    retriers: [retryOnce])
                let session = session(transport, server, interceptor: interceptor)
                _ = try await session.request("feed").validate().serializingString().value
                #expect(server.recordedRequests.map(\.target) == ["/v1/feed?app=courier", "/v1/feed?app=courier"])
            }
        }

        @Test func aPathThatCannotBeSentFailsTheRequestInsteadOfTrapping() async throws {
            let adapter = PathRewriteAdapter { _ in "/has space" }
            let request = URLRequest(url: URL(string: "https://example.com/a")!)
            await #expect(throws: CourierError.self) { try await adapter.adapt(request, for: Session.shared) }
            #expect(PathRewriteAdapter.isValidEncodedPath("/a%20b/c:d@e"))
            #expect(!PathRewriteAdapter.isValidEncodedPath("/a%2"))
            #expect(!PathRewriteAdapter.isValidEncodedPath("/a%zz"))
            let prefixed = try await PathRewriteAdapter.prefix("/api/").adapt(
                URLRequest(url: URL(string: "https://e.com/api/x?q=1")!), for: Session.shared)
            #expect(prefixed.url?.absoluteString == "https://e.com/api/x?q=1")
            let root = try await PathRewriteAdapter.prefix("api").adapt(URLRequest(url: URL(string: "https://e.com")!), for: Session.shared)
            #expect(root.url?.absoluteString == "https://e.com/api/")
        }
    }
}
