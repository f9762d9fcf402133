import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// `EventMonitor.request(_:willSend:attempt:headers:)`: the place an integration (tracing's
/// `traceparent`) adds headers to each exchange (#40).
@Suite struct ExchangeHeadersHookTests {
    /// Stamps every exchange with its attempt and its number within the request, and records
    /// the headers each `didStartExchange` reports.
    final class StampingMonitor: EventMonitor {
        let exchanges = Collected<String>()
        let started = Collected<String>()
        let value: @Sendable (Int, Int) -> String
        init(value: @escaping @Sendable (Int, Int) -> String = { "attempt=\($0); exchange=\($1)" }) {
            self.value = value
        }
        func request(_ request: any Request, willSend urlRequest: URLRequest, attempt: Int, headers: inout HTTPHeaders) {
            exchanges.append(urlRequest.url?.path ?? "")
            headers.update(name: "X-Exchange", value: value(attempt, exchanges.all.count))
        }
        func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
            started.append(headers["X-Exchange"] ?? "none")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func everyAttemptAndEveryRedirectCarriesTheHeadersItsMonitorsAdd(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.status(503), .redirect(to: "/b"), .ok("done")])
            let stamp = StampingMonitor()
            let retry = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, jitter: false)
            let session = makeSession(transport, server: server, interceptor: retry, monitors: [stamp])
            let text = try await session.request("a", headers: ["X-Exchange": "the caller's"]).validate().serializingString().value
            #expect(text == "done")
            var seen: [String] = []
            for _ in 0..<3 { seen.append(try await server.takeRequest().headers["X-Exchange"] ?? "none") }
            // The monitor's value replaces the caller's, on each attempt and on the redirect hop.
            #expect(seen == ["attempt=1; exchange=1", "attempt=2; exchange=2", "attempt=2; exchange=3"])
            #expect(stamp.started.all == seen)
            #expect(stamp.exchanges.all == ["/a", "/a", "/b"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRequestsOwnMonitorAddsHeadersAfterTheSessions(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.ok("x")])
            let session = makeSession(transport, server: server, monitors: [StampingMonitor { _, _ in "session" }])
            _ = try await session.request("a").eventMonitors([StampingMonitor { _, _ in "request" }]).serializingString().value
            #expect(try await server.takeRequest().headers["X-Exchange"] == "request")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aHeaderThatIsNotValidHTTPFailsTheRequestAndNothingIsSent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server, monitors: [StampingMonitor { _, _ in "a\r\nInjected: yes" }])
            let error = await #expect(throws: CourierError.self) { try await session.request("a").serializingString().value }
            #expect(error?.kind == .invalidRequest)
            #expect(server.requestCount == 0)
        }
    }
}
