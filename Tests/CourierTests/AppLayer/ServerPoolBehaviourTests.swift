import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierLocking

extension AppLayer {
    /// `Session(servers:)` with real requests: failover, recovery, manual switching, per-request servers.
    @Suite("AppLayer: server pool sessions") struct ServerPoolBehaviourTests {
        /// Answers `/items` with its name, or drops the connection after reading the request while `down` is set.
        final class Backend: Sendable {
            let server: TestServer
            private let isDown = Locked(false)

            init(name: String) throws {
                server = try TestServer()
                server.route("/items") { [isDown] _ in
                    isDown.withLock { $0 } ? MockResponse.ok(name).effect(.close, at: .afterRequest) : MockResponse.ok(name)
                }
            }

            var down: Bool {
                get { isDown.withLock { $0 } }
                set { isDown.withLock { $0 = newValue } }
            }

            /// Shuts the server down; see ``TestServer/shutdown()``.
            func shutdown() -> ShutdownReport { server.shutdown() }
        }

        @Test(arguments: TransportUnderTest.available)
        func failoverHappensAtTheThresholdAndNotBefore(transport: TransportUnderTest) async throws {
            try await withServer { backup async throws in
                backup.route("/items") { _ in .ok("backup") }
                let time = TestInstant()
                let port = try closedPort()
                let servers = ServerPool(
                    [
                        .init(name: "primary", baseURL: URL(string: "http://127.0.0.1:\(port)/")!),
                        .init(name: "backup", baseURL: backup.baseURL),
                    ],
                    failover: .errorRate(0.5, minimumRequests: 3), now: { time.now })
                let notices = NoticeRecorder()
                let session = makePoolSession(transport, servers: servers, monitors: [notices])
                for attempt in 1...3 {
                    #expect(servers.current?.name == "primary", "attempt \(attempt)")
                    let error = await session.request("items").serializingString().response.error
                    #expect(error?.kind == .cannotConnect)
                }
                #expect(servers.current?.name == "backup")
                #expect(notices.switches.count == 1)
                #expect(notices.switches.first?.message.contains("3 of the last 3") == true)
                #expect(try await session.request("items").serializingString().value == "backup")
                #expect(backup.requestCount(path: "/items") == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func thePoolReturnsToThePrimaryWhenItRecovers(transport: TransportUnderTest) async throws {
            let primary = try Backend(name: "primary"), backup = try Backend(name: "backup")
            defer {
                expectClean(primary.shutdown())
                expectClean(backup.shutdown())
            }
            let time = TestInstant()
            let servers = ServerPool(
                [
                    .init(name: "primary", baseURL: primary.server.baseURL),
                    .init(name: "backup", baseURL: backup.server.baseURL),
                ],
                failover: .errorRate(0.5, minimumRequests: 2, coolDown: .seconds(30)), now: { time.now })
            let notices = NoticeRecorder()
            let session = makePoolSession(transport, servers: servers, monitors: [notices])
            #expect(try await session.request("items").serializingString().value == "primary")

            primary.down = true
            // One success and one failure: 50% is not above the threshold.
            #expect(await session.request("items").serializingString().response.error?.isTransportError == true)
            #expect(servers.current?.name == "primary")
            #expect(await session.request("items").serializingString().response.error?.isTransportError == true)
            #expect(servers.current?.name == "backup")
            #expect(try await session.request("items").serializingString().value == "backup")

            primary.down = false
            time.advance(by: .seconds(29))
            #expect(try await session.request("items").serializingString().value == "backup")
            time.advance(by: .seconds(1))
            #expect(try await session.request("items").serializingString().value == "primary")
            #expect(try await session.request("items").serializingString().value == "primary")
            #expect(servers.current?.name == "primary")
            #expect(notices.switches.count == 2)
            #expect(notices.switches.last?.message.contains("cool-down") == true)
        }

        @Test(arguments: TransportUnderTest.available)
        func aRetryAfterAFailoverGoesToTheNewServer(transport: TransportUnderTest) async throws {
            try await withServer { backup async throws in
                backup.route("/items") { _ in .ok("backup") }
                let time = TestInstant()
                let port = try closedPort()
                let servers = ServerPool(
                    [
                        .init(name: "primary", baseURL: URL(string: "http://127.0.0.1:\(port)/")!),
                        .init(name: "backup", baseURL: backup.baseURL),
                    ],
                    failover: .errorRate(0, minimumRequests: 1), now: { time.now })
                let retryOnce = Interceptor(
                    adapter: { request, _ in request },
                    retrier: { request, _, _ in
                        await request.retryCount == 0 ? .retry : .doNotRetry
                    })
                let session = makePoolSession(transport, servers: servers, interceptor: retryOnce)
                let request = session.request("items")
                #expect(try await request.serializingString().value == "backup")
                #expect(await request.retryCount == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func manualSwitchesAndPerRequestServers(transport: TransportUnderTest) async throws {
            let production = try Backend(name: "production"), staging = try Backend(name: "staging"), cdn = try Backend(name: "cdn")
            defer {
                expectClean(production.shutdown())
                expectClean(staging.shutdown())
                expectClean(cdn.shutdown())
            }
            let servers = ServerPool(
                [
                    .init(name: "production", baseURL: production.server.baseURL),
                    .init(name: "staging", baseURL: staging.server.baseURL),
                ],
                auxiliary: [.init(name: "cdn", baseURL: cdn.server.baseURL)])
            let notices = NoticeRecorder()
            let session = makePoolSession(transport, servers: servers, monitors: [notices])
            #expect(try await session.request("items").serializingString().value == "production")
            #expect(servers.switchTo("staging"))
            #expect(try await session.request("items").serializingString().value == "staging")
            #expect(try await session.request(servers.url("items", on: "cdn")).serializingString().value == "cdn")
            #expect(
                notices.switches.map(\.message) == [
                    "Switched from production (\(production.server.baseURL.absoluteString)) "
                        + "to staging (\(staging.server.baseURL.absoluteString)) by hand."
                ])
            let unknown = await session.request(servers.url("items", on: "nowhere")).serializingString().response.error
            #expect(unknown?.kind == .invalidURL)
        }
    }
}
