import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// cURL descriptions hide credentials by default, and come in a callback form too (#26).
@Suite struct CURLRedactionTests {
    @Test func credentialsAreRedactedByDefaultAndShownWhenAsked() async throws {
        let storage = HTTPCookieStorage.makeIsolated()
        var configuration = SessionConfiguration()
        configuration.cookies = .storage(storage)
        let session = Session(configuration: configuration, baseURL: URL(string: "http://user:secret@127.0.0.1:9/"))
        let cookie = try #require(HTTPCookie(properties: [.name: "session", .value: "cookie-value", .domain: "127.0.0.1", .path: "/"]))
        storage.setCookie(cookie)
        let request = session.request(
            "x",
            headers: [
                .authorization(bearerToken: "token-value"), HTTPHeader(name: "Proxy-Authorization", value: "proxy-value"),
                HTTPHeader(name: "X-Api-Key", value: "key-value"),
            ])
        let redacted = await request.cURLDescription()
        for secret in ["token-value", "cookie-value", "proxy-value", "secret"] { #expect(!redacted.contains(secret), "\(redacted)") }
        #expect(redacted.contains("-H 'Authorization: <redacted>'"))
        #expect(redacted.contains("-H 'Cookie: <redacted>'"))
        #expect(redacted.contains("key-value"))

        let custom = await request.cURLDescription(redacting: CURLRedaction(headers: ["x-api-key"]))
        #expect(!custom.contains("key-value"))
        #expect(custom.contains("token-value"))

        let shown = await request.cURLDescription(redacting: .none)
        for secret in ["token-value", "cookie-value", "proxy-value", "user:secret@"] { #expect(shown.contains(secret), "\(shown)") }
    }

    @Test(arguments: TransportUnderTest.available)
    func theCallbackFormDescribesTheRequestAsFirstSentOnce(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.status(503), .ok("ok")])
            let session = makeSession(
                transport, server: server, clock: FrozenClock(),
                interceptor: Interceptor(adapters: [ChainAdapter(label: "signed")], retriers: [RetryPolicy(jitter: false)]))
            let commands = Collected<String>()
            let request = session.request("orders", headers: [.authorization(bearerToken: "abc")])
                .cURLDescription { commands.append($0) }
            _ = try await request.validate().serializingString().value
            #expect(await eventually { commands.all.count == 1 })
            let command = try #require(commands.all.first)
            #expect(command.contains("X-Chain: signed"))  // after adapters
            #expect(command.contains("Authorization: <redacted>"))
            #expect(!command.hasPrefix("#"))

            // Added after the request was sent: called at once, with the last request sent.
            let late: String = await withCheckedContinuation { continuation in
                request.cURLDescription(redacting: .none) { continuation.resume(returning: $0) }
            }
            #expect(late.contains("Authorization: Bearer abc"))
            #expect(commands.all.count == 1)
            _ = try await server.takeRequest()
            _ = try await server.takeRequest()
        }
    }
}
