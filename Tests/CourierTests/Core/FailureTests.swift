import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Network failures arrive as readable `CourierError`s, never as crashes or silent successes.
@Suite struct FailureTests {
    @Test(arguments: TransportUnderTest.available)
    func refusedConnection(transport: TransportUnderTest) async throws {
        let port = try closedPort()
        let session = makeSession(transport)
        let error = await session.request("http://127.0.0.1:\(port)/x").serializingData().response.error
        #expect(error?.kind == .cannotConnect)
        #expect(error?.url?.port == port)
    }

    @Test(arguments: TransportUnderTest.available)
    func hundredMillisecondTimeout(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse.ok("too late").waiting(for: gate))
            let session = makeSession(transport, server: server)
            // The server holds the response until the gate opens, which happens only after the
            // request has ended: only the 100 ms timeout can have ended it.
            let error = await session.request("slow", timeout: 0.1).serializingData().response.error
            gate.open()
            #expect(error?.kind == .timedOut)
            #expect(error?.message.contains("0.1") == true)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func sessionRequestTimeoutIsAnIdleTimeout(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // 3 s of body in 20 KB pieces every 100 ms: longer than the 2 s timeout in total, but
            // never silent for anything close to it (the margin keeps a loaded machine honest).
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 600_000, seed: 1)).throttle(bytes: 20_000, every: .milliseconds(100)))
            let gate = Gate()
            server.enqueue(MockResponse.ok("stalls").waiting(for: gate))
            let session = makeSession(transport, server: server) { $0.requestTimeout = 2 }
            let dripped = await session.request("drip").serializingData().response
            #expect(dripped.value?.count == 600_000, "\(dripped.error.map { "\($0)" } ?? "")")
            let stalled = await session.request("stall").serializingData().response
            gate.open()
            #expect(stalled.error?.kind == .timedOut)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func resourceTimeoutLimitsTheWholeRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 2_000_000, seed: 1)).throttle(bytes: 20_000, every: .milliseconds(20)))
            let session = makeSession(transport, server: server) { $0.resourceTimeout = 0.3 }
            let error = await session.request("drip").serializingData().response.error
            #expect(error?.kind == .timedOut)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func truncatedBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 3)).truncated(afterBytes: 40_000))
            let session = makeSession(transport, server: server)
            let response = await session.request("cut").serializingData().response
            #expect(response.error?.kind == .connectionLost)
            #expect(response.value == nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func truncatedChunkedBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(
                MockResponse(status: 200).body(.pattern(count: 100_000, seed: 3)).chunked(chunkSize: 4096)
                    .effect(.close, at: .responseBody(afterBytes: 50_000)))
            let session = makeSession(transport, server: server)
            let error = await session.request("cut").serializingData().response.error
            #expect(error?.kind == .connectionLost)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func resetMidBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 1_000_000, seed: 3)).effect(.reset, at: .responseBody(afterBytes: 300_000)))
            let session = makeSession(transport, server: server)
            let error = await session.request("reset").serializingData().response.error
            #expect(error?.kind == .connectionLost)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func closeBeforeAnyResponseIsAnError(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("x").effect(.close, at: .afterRequest))
            let session = makeSession(transport, server: server)
            let error = await session.request("empty").serializingData().response.error
            #expect(error != nil)
            #expect(error?.isTransportError == true)
        }
    }

    @Test func errorsDescribeThemselves() {
        let error = CourierError(.timedOut, "No data for 0.1 s.", responseCode: nil, url: URL(string: "http://a.test/x"))
        #expect(error.description == "timedOut: No data for 0.1 s. (http://a.test/x)")
        #expect(error.kind.description == "timedOut")
        #expect(CourierError(wrapping: URLError(.timedOut)).kind == .timedOut)
        #expect(CourierError(wrapping: URLError(.cannotConnectToHost)).kind == .cannotConnect)
        #expect(CourierError(wrapping: URLError(.unknown)).kind == .connectionLost)
        #expect(CourierError(wrapping: CancellationError()).isCancelled)
    }
}
