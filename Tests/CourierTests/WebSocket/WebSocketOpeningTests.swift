import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Opening a WebSocket over the curl transport against CourierTestServer's plain HTTP: what the
/// handshake request carries (session headers, the interceptor's adaptation, the caller's headers,
/// subprotocols), and every way an opening fails (a refusal with its body, a redirect, a closed
/// port, cancellation while connecting, a timeout, arguments that cannot be sent).
@Suite struct WebSocketOpeningTests {
    static func curlSession(
        _ server: TestServer?, headers: HTTPHeaders = [:], interceptor: (any RequestInterceptor)? = nil,
        configure: (inout SessionConfiguration) -> Void = { _ in }
    ) throws -> Session {
        try #require(TransportUnderTest.available.contains(.curl), "libcurl is needed")
        return makeSession(.curl, server: server, headers: headers, interceptor: interceptor, configure: configure)
    }

    @Test func theHandshakeCarriesSessionHeadersAdaptationsAndTheCallersHeaders() async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 403).body(.text("no")))
            let adapter = Adapter { request in
                var request = request
                request.setValue("Bearer adapted", forHTTPHeaderField: "Authorization")
                return request
            }
            let session = try Self.curlSession(server, headers: ["X-Session": "s"], interceptor: adapter)
            let socket = session.webSocket("live?x=1", protocols: ["chat", "superchat"], headers: ["X-Call": "c"])
            #expect(socket.url.scheme == "ws")
            #expect(socket.url.port == server.baseURL.port)
            #expect(socket.url.path == "/live")
            #expect(socket.url.query == "x=1")
            await #expect(throws: CourierError.self) { try await socket.connect() }
            let request = try #require(server.recordedRequests.first)
            #expect(request.method == "GET")
            #expect(request.target == "/live?x=1")
            #expect(request.headers["Upgrade"] == "websocket")
            #expect(request.headers["Connection"] == "Upgrade")
            #expect(request.headers["Sec-WebSocket-Version"] == "13")
            #expect(Data(base64Encoded: request.headers["Sec-WebSocket-Key"] ?? "")?.count == 16)
            #expect(request.headers["Sec-WebSocket-Protocol"] == "chat, superchat")
            #expect(request.headers["Authorization"] == "Bearer adapted")
            #expect(request.headers["X-Session"] == "s")
            #expect(request.headers["X-Call"] == "c")
            #expect(request.headers["Accept-Encoding"] == nil, "a handshake answer has no body to decode")
        }
    }

    /// A name repeated in the caller's (or the session's) headers goes out as separate lines, in
    /// order, as on an HTTP request; a `URLRequest` on the way would join them.
    @Test func theHandshakeSendsRepeatedHeaderLinesApartAndInOrder() async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 403))
            var sessionHeaders: HTTPHeaders = ["X-Session": "one"]
            sessionHeaders.append(name: "X-Session", value: "two")
            var headers: HTTPHeaders = ["X-Multi": "first"]
            headers.append(name: "X-Other", value: "between")
            headers.append(name: "x-multi", value: "second")
            let session = try Self.curlSession(server, headers: sessionHeaders)
            await #expect(throws: CourierError.self) { try await session.webSocket("live", headers: headers).connect() }
            let request = try #require(server.recordedRequests.first)
            #expect(request.headers.values(for: "X-Multi") == ["first", "second"])
            #expect(request.headers.values(for: "X-Session") == ["one", "two"])
            let names = request.headers.names.filter { ["x-multi", "x-other"].contains($0.lowercased()) }
            #expect(names == ["X-Multi", "X-Other", "x-multi"])
        }
    }

    @Test func theHandshakeCarriesTheSessionsCookiesUnlessACookieHeaderIsGiven() async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 403))
            server.enqueue(MockResponse(status: 403))
            let storage = HTTPCookieStorage.makeIsolated()
            let cookie = try #require(
                HTTPCookie(properties: [
                    .name: "session", .value: "abc", .domain: server.baseURL.host ?? "127.0.0.1",
                    .path: "/", .originURL: server.baseURL,
                ]))
            storage.setCookie(cookie)
            let session = try Self.curlSession(server) { $0.cookies = .storage(storage) }
            await #expect(throws: CourierError.self) { try await session.webSocket("live").connect() }
            await #expect(throws: CourierError.self) { try await session.webSocket("live", headers: ["Cookie": "mine=1"]).connect() }
            #expect(server.recordedRequests.map { $0.headers["Cookie"] } == ["session=abc", "mine=1"])
        }
    }

    @Test func aRefusedHandshakeFailsWithTheStatusHeadersAndBody() async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 401).header("WWW-Authenticate", "Bearer").body(.text("token expired")))
            let socket = try Self.curlSession(server).webSocket("live")
            let error = await #expect(throws: CourierError.self) {
                for try await _ in socket.messages {}
            }
            #expect(error?.kind == .webSocketHandshakeFailed)
            #expect(error?.responseCode == 401)
            let response = try #require(error?.webSocketHandshakeResponse)
            #expect(response.statusCode == 401)
            #expect(response.headers["WWW-Authenticate"] == "Bearer")
            #expect(String(decoding: response.body, as: UTF8.self) == "token expired")
            #expect(socket.state == .closed)
            #expect(socket.closeStatus == nil, "it never opened")
            // One line, whatever the head held: the underlying error summarises the answer.
            let text = error.map { "\($0)" } ?? ""
            #expect(!text.contains("\n"), "\(text)")
            #expect(text.contains("status 401, 2 header fields, 13 bytes of body"), "\(text)")
            #expect(error?.url?.scheme == "ws")
        }
    }

    @Test func aRedirectIsNotFollowed() async throws {
        try await withServer { server async throws in
            server.enqueue(.redirect(to: "/elsewhere"))
            let socket = try Self.curlSession(server).webSocket("live")
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .webSocketHandshakeFailed)
            #expect(error?.responseCode == 302)
            #expect(error?.message.contains("/elsewhere") == true)
            #expect(error?.message.contains("does not follow") == true)
            #expect(server.recordedRequests.count == 1, "nothing was sent to the new location")
        }
    }

    @Test func anOrdinaryAnswerIsNotAWebSocket() async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("plain HTTP"))
            let socket = try Self.curlSession(server).webSocket("live")
            let error = await #expect(throws: CourierError.self) { try await socket.send("hello") }
            #expect(error?.kind == .webSocketHandshakeFailed)
            #expect(error?.responseCode == 200)
            #expect(error?.webSocketHandshakeResponse?.body == Data("plain HTTP".utf8))
        }
    }

    @Test func aClosedPortFailsToConnect() async throws {
        let port = try closedPort()
        let socket = try Self.curlSession(nil).webSocket("ws://127.0.0.1:\(port)/live")
        let error = await #expect(throws: CourierError.self) { try await socket.connect() }
        #expect(error?.kind == .cannotConnect)
        #expect(socket.state == .closed)
        // The error names the URL the caller gave, not the http:// one the connection was opened to.
        #expect(error?.url == URL(string: "ws://127.0.0.1:\(port)/live"))
        #expect(error.map { "\($0)" }?.contains("http://") == false, "\(error.map { "\($0)" } ?? "")")
    }

    @Test func cancellingTheTaskWhileTheHandshakeIsAnsweredEndsItPromptly() async throws {
        let gate = Gate()
        try await withServer(unconsumedResponses: 0) { server async throws in
            server.enqueue(MockResponse(status: 401).waiting(for: gate))
            let socket = try Self.curlSession(server).webSocket("live")
            let reader = Task {
                do {
                    for try await _ in socket.messages {}
                    return CourierError.Kind.invalidResponse
                } catch {
                    return (error as? CourierError)?.kind ?? .transportFailed
                }
            }
            #expect(await gate.waitUntilWaiting(count: 1))
            reader.cancel()
            #expect(await reader.value == .cancelled)
            #expect(socket.state == .closed)
            #expect(socket.closeStatus == nil, "it never opened, so no close frame was exchanged")
            gate.open()
        }
    }

    @Test func theHandshakeTimesOutWithTheSessionsRequestTimeout() async throws {
        let gate = Gate()
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 401).waiting(for: gate))
            let session = try Self.curlSession(server) { $0.requestTimeout = 0.3 }
            let socket = session.webSocket("live")
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .timedOut)
            gate.open()
        }
    }

    @Test func argumentsThatCannotBeSentFailBeforeAnythingIsSent() async throws {
        try await withServer { server async throws in
            let session = try Self.curlSession(server)
            let badProtocol = session.webSocket("live", protocols: ["has space"])
            await #expect(throws: CourierError.self) { try await badProtocol.connect() }
            let reserved = session.webSocket("live", headers: ["Sec-WebSocket-Key": "mine"])
            let error = await #expect(throws: CourierError.self) { try await reserved.connect() }
            #expect(error?.kind == .invalidRequest)
            let notWeb = session.webSocket("ftp://127.0.0.1/live")
            let urlError = await #expect(throws: CourierError.self) { try await notWeb.connect() }
            #expect(urlError?.kind == .invalidURL)
            // close() refuses codes that may not be sent, whatever the state.
            let closeError = await #expect(throws: CourierError.self) { try await notWeb.close(code: .abnormalClosure) }
            #expect(closeError?.kind == .invalidRequest)
            let reasonError = await #expect(throws: CourierError.self) {
                try await notWeb.close(reason: String(repeating: "x", count: 124))
            }
            #expect(reasonError?.kind == .invalidRequest)
            #expect(server.recordedRequests.isEmpty)
        }
    }

    @Test func aURLSessionTransportSaysWebSocketsNeedCurl() async throws {
        let session = makeSession(.urlSession)
        let socket = session.webSocket("ws://127.0.0.1:9/live")
        let error = await #expect(throws: CourierError.self) { try await socket.connect() }
        #expect(error?.kind == .invalidConfiguration)
    }
}

/// An interceptor that only adapts, with a closure.
private struct Adapter: RequestInterceptor {
    let body: @Sendable (URLRequest) -> URLRequest
    init(_ body: @escaping @Sendable (URLRequest) -> URLRequest) { self.body = body }
    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest { body(request) }
}
