import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CCurl

/// Replies that are not a usable HTTP answer fail at once with `.invalidResponse` (issue 23).
@Suite struct NonHTTPReplyTests {
    @Test(arguments: TransportUnderTest.available)
    func unsolicitedSwitchingProtocolsFailsAtOnce(transport: TransportUnderTest) async throws {
        let reply = Data("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n".utf8)
        let server = try RawReplyServer(reply: reply, closesAfterReply: false)
        defer { server.stop() }
        // A long idle timeout: waiting for it would end in .timedOut after 120 s. The time bound is
        // half of it because a loaded two-core machine running the whole suite has delayed a test
        // by over 25 s (CI, 2026-11-26).
        let session = makeSession(transport) { $0.requestTimeout = 120 }
        let started = ContinuousClock.now
        let response = await session.request(server.url).serializingData().response
        let elapsed = ContinuousClock.now - started
        #expect(response.error?.kind == .invalidResponse, "\(String(describing: response.error))")
        #expect(response.error?.responseCode == 101)
        #expect(elapsed < .seconds(60), "took \(elapsed)")
    }

    @Test(arguments: TransportUnderTest.available)
    func switchingProtocolsWithContentLengthFromTheTestServerFailsAtOnce(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 101, headers: ["Upgrade": "h2c", "Connection": "Upgrade"]).effect(.stall, at: .responseStart))
            let session = makeSession(transport, server: server) { $0.requestTimeout = 120 }
            let started = ContinuousClock.now
            let response = await session.request("upgrade").serializingData().response
            #expect(response.error?.kind == .invalidResponse, "\(String(describing: response.error))")
            #expect(ContinuousClock.now - started < .seconds(60))
            #expect(try await server.takeRequest().path == "/upgrade")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func garbageInsteadOfAStatusLineIsAnInvalidResponse(transport: TransportUnderTest) async throws {
        let server = try RawReplyServer(reply: Data("this is not HTTP at all\r\n\r\nnope".utf8), closesAfterReply: true)
        defer { server.stop() }
        let session = makeSession(transport) { $0.requestTimeout = 30 }
        let response = await session.request(server.url).serializingData().response
        #expect(response.error?.kind == .invalidResponse, "\(String(describing: response.error))")
        #expect(server.connectionCount >= 1)
    }

    @Test func curlHTTP09RefusalMapsToInvalidResponse() {
        let url = URL(fileURLWithPath: "/").deletingLastPathComponent()
        let refusal = CourierError(curl: CCURLE_UNSUPPORTED_PROTOCOL, detail: "Received HTTP/0.9 when not allowed", url: url)
        #expect(refusal.kind == .invalidResponse)
        let other = CourierError(curl: CCURLE_UNSUPPORTED_PROTOCOL, detail: "Protocol \"gopher\" not supported", url: url)
        #expect(other.kind == .invalidURL)
    }
}
