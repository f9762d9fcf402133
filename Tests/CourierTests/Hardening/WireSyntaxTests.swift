import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// A method or header that is not valid HTTP fails with `.invalidRequest` before a byte is sent,
/// on every transport and from every place headers come from (issue 23).
@Suite struct WireSyntaxTests {
    /// Runs `make` against a fresh server, expects `.invalidRequest` mentioning `mention`, and
    /// proves the server saw nothing: the next, valid request is the first one it records.
    static func expectRejected(
        _ transport: TransportUnderTest, mentioning mention: String,
        sourceLocation: SourceLocation = #_sourceLocation,
        headers: HTTPHeaders = [:], interceptor: (any RequestInterceptor)? = nil,
        configure: (inout SessionConfiguration) -> Void = { _ in },
        _ make: @escaping (Session, TestServer) -> DataRequest
    ) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server, headers: headers, interceptor: interceptor, configure: configure)
            let error = await make(session, server).serializingData().response.error
            #expect(error?.kind == .invalidRequest, "\(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.message.contains(mention) == true, "\(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.message.contains("\r") == false, sourceLocation: sourceLocation)
            server.enqueue(.ok("fine"))
            let plain = makeSession(transport, server: server)
            #expect(try await plain.request("after").serializingString().value == "fine", sourceLocation: sourceLocation)
            #expect(server.requestCount == 1, sourceLocation: sourceLocation)
            #expect(server.recordedRequests.map(\.path) == ["/after"], sourceLocation: sourceLocation)
        }
    }

    static let badMethods = ["GET /smuggled HTTP/1.1\r\nInjected: 1", "", "GET POST", "G\tET", "GÉT", "GET\0"]

    @Test(arguments: TransportUnderTest.available, badMethods)
    func methodThatIsNotATokenIsNeverSent(transport: TransportUnderTest, method: String) async throws {
        try await Self.expectRejected(transport, mentioning: "method") { session, _ in
            session.request("target", method: HTTPMethod(rawValue: method))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func everyTokenCharacterIsAValidMethod(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("ok"))
            let session = makeSession(transport, server: server)
            let method = "X-Custom_1!#$%&'*+.^`|~"
            #expect(try await session.request("m", method: HTTPMethod(rawValue: method)).serializingString().value == "ok")
            #expect(try await server.takeRequest().method == method)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headerNameWithLineBreakFromTheRequest(transport: TransportUnderTest) async throws {
        try await Self.expectRejected(transport, mentioning: "X-Bad\\r\\nInjected") { session, _ in
            session.request("target", headers: ["X-Bad\r\nInjected": "1"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headerNameWithSpaceOrColon(transport: TransportUnderTest) async throws {
        try await Self.expectRejected(transport, mentioning: "X Bad") { session, _ in
            session.request("target", headers: ["X Bad": "1"])
        }
        try await Self.expectRejected(transport, mentioning: "X:Bad") { session, _ in
            session.request("target", headers: ["X:Bad": "1"])
        }
    }

    @Test(arguments: TransportUnderTest.available, ["a\r\nInjected: 1", "a\nb", "a\rb", "a\0b"])
    func headerValueWithCRLFOrNULFromTheRequest(transport: TransportUnderTest, value: String) async throws {
        try await Self.expectRejected(transport, mentioning: "X-Value") { session, _ in
            session.request("target", headers: ["X-Value": value])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func badHeaderFromTheSession(transport: TransportUnderTest) async throws {
        try await Self.expectRejected(transport, mentioning: "X-Session", headers: ["X-Session": "1\r\nInjected: 1"]) { session, _ in
            session.request("target")
        }
        try await Self.expectRejected(transport, mentioning: "X-Session\\n", headers: ["X-Session\n": "1"]) { session, _ in
            session.request("target")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func badHeaderFromAnAdapter(transport: TransportUnderTest) async throws {
        let adapter = Interceptor(adapter: { request, _ in
            var adapted = request
            // (URLRequest itself silently drops values with CR, LF or NUL, but keeps any name.)
            adapted.setValue("1", forHTTPHeaderField: "X-Adapter\r\nInjected")
            return adapted
        })
        try await Self.expectRejected(transport, mentioning: "X-Adapter\\r\\nInjected", interceptor: adapter) { session, _ in
            session.request("target")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func badMethodFromAnAdapter(transport: TransportUnderTest) async throws {
        let adapter = Interceptor(adapter: { request, _ in
            var adapted = request
            adapted.httpMethod = "GET /x HTTP/1.1\r\nHost: evil"
            return adapted
        })
        try await Self.expectRejected(transport, mentioning: "method", interceptor: adapter) { session, _ in
            session.request("target")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func badCookieValueFromTheStore(transport: TransportUnderTest) async throws {
        let storage = HTTPCookieStorage.makeIsolated()
        try await Self.expectRejected(transport, mentioning: "Cookie", configure: { $0.cookies = .storage(storage) }) { session, server in
            let cookie = HTTPCookie(properties: [
                .name: "session", .value: "a\r\nInjected: 1", .path: "/",
                .domain: server.baseURL.host ?? "127.0.0.1", .originURL: server.baseURL,
            ])
            if let cookie { storage.setCookie(cookie) }
            return session.request("target")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func obsTextAndTabsInValuesAreSent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("ok"))
            let session = makeSession(transport, server: server)
            _ = try await session.request("v", headers: ["X-Text": "a\tb ~ é"]).serializingString().value
            let recorded = try await server.takeRequest()
            #expect(recorded.headers["X-Text"]?.hasPrefix("a\tb ~ ") == true)
        }
    }

    @Test func wireSyntaxRules() throws {
        #expect(WireSyntax.isToken("GET"))
        #expect(WireSyntax.isToken("!#$%&'*+-.^_`|~09azAZ"))
        for bad in ["", " ", "A B", "A:B", "A\"", "(", ")", ",", "/", ";", "<", "=", ">", "?", "@", "[", "\\", "]", "{", "}", "é", "\u{7F}"] {
            #expect(!WireSyntax.isToken(bad), "\(bad)")
        }
        #expect(WireSyntax.isFieldValue("a\tb é ~"))
        #expect(!WireSyntax.isFieldValue("a\rb"))
        #expect(!WireSyntax.isFieldValue("a\nb"))
        #expect(!WireSyntax.isFieldValue("a\0b"))
        #expect(WireSyntax.quoted("a\r\n\"b\u{1}") == "\"a\\r\\n\\\"b\\u{1}\"")
    }
}
