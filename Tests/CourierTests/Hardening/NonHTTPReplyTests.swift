import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CCurl
import CourierTestSupport

/// Replies that are not a usable HTTP answer fail at once with `.invalidResponse` (issue 23).
///
/// "At once" without a stopwatch: the sessions' timeouts run on a clock that stands still
/// (``SessionConfiguration/testing``), so a request the reply did not end would wait for ever, and
/// the hang limit reports it; one that ends, ends because of the reply (a CI run on a loaded
/// machine took 210 s over it, far past the 60 s bound this suite had).
@Suite(.hangLimit(.seconds(300))) struct NonHTTPReplyTests {
    @Test(arguments: TransportUnderTest.available)
    func unsolicitedSwitchingProtocolsFailsAtOnce(transport: TransportUnderTest) async throws {
        let reply = Data("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n".utf8)
        let server = try RawReplyServer(reply: reply, closesAfterReply: false)
        defer { server.stop() }
        // The idle timeout never fires on the session's standing clock: only the reply can end this.
        let session = makeSession(transport) { $0.requestTimeout = 120 }
        let response = await session.request(server.url).serializingData().response
        #expect(response.error?.kind == .invalidResponse, "\(String(describing: response.error))")
        #expect(response.error?.responseCode == 101)
    }

    @Test(arguments: TransportUnderTest.available)
    func switchingProtocolsWithContentLengthFromTheTestServerFailsAtOnce(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 101, headers: ["Upgrade": "h2c", "Connection": "Upgrade"]).effect(.stall, at: .responseStart))
            let session = makeSession(transport, server: server) { $0.requestTimeout = 120 }
            let response = await session.request("upgrade").serializingData().response
            #expect(response.error?.kind == .invalidResponse, "\(String(describing: response.error))")
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
