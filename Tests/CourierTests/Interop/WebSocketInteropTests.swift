import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestSupport

/// WebSockets against servers no one here wrote (`.ci/ws-server.py`, started by `.ci/run`): Python
/// `websockets` (a strict RFC 6455 implementation) and aiohttp, each with permessage-deflate
/// accepted and without it, over ws:// and over wss:// through nginx. Echoes of 0 B, 125 B (the
/// largest 7-bit length), 126 B (the first 16-bit one), 64 KiB (the first 64-bit one) and 16 MiB
/// (the default message limit, exactly), text and binary, with compression offered and not; the
/// subprotocol, a close with a code of the server's, a refused handshake, and the Authorization
/// header from `headers:`, the session's headers and an adapter.
///
/// Serialized: the 16 MiB echoes are CPU work (masking, deflate, UTF-8 validation, in a debug
/// build); run side by side they would starve the other suites' tests of the cooperative pool.
@Suite(.serialized) struct WebSocketInteropTests {
    /// One server endpoint: a base URL to which the tests append `/echo`, `/chat`, `/close`, `/auth`.
    struct Endpoint: CustomTestStringConvertible, Sendable {
        let variable: String
        /// Whether the server accepts permessage-deflate.
        let compresses: Bool
        var testDescription: String { variable }

        /// The base URL, or nil (the group named as skipped once) when `.ci/start-servers.sh` has not run.
        var url: URL? {
            InteropEnvironment.url(variable, group: "WebSocket interop tests (Python websockets, aiohttp, nginx)")
        }

        /// The base URL with `path` appended (`echo` on `wss://host:port/websockets` is `.../websockets/echo`).
        func url(_ path: String) -> URL? { url?.appendingPathComponent(path) }
    }

    static let endpoints: [Endpoint] = [
        Endpoint(variable: "COURIER_WS_URL", compresses: true),
        Endpoint(variable: "COURIER_WS_PLAIN_URL", compresses: false),
        Endpoint(variable: "COURIER_AIOHTTP_WS_URL", compresses: true),
        Endpoint(variable: "COURIER_AIOHTTP_WS_PLAIN_URL", compresses: false),
        Endpoint(variable: "COURIER_WSS_URL", compresses: true),
        Endpoint(variable: "COURIER_WSS_PLAIN_URL", compresses: false),
        Endpoint(variable: "COURIER_AIOHTTP_WSS_URL", compresses: true),
        Endpoint(variable: "COURIER_AIOHTTP_WSS_PLAIN_URL", compresses: false),
    ]

    /// The sizes of RFC 6455's three length encodings at their edges, and the default limit.
    static let sizes = [0, 125, 126, 64 << 10, 16 << 20]

    /// A session that trusts the test CA (for wss://), with `headers` and `interceptor`.
    private func session(headers: HTTPHeaders = [], interceptor: (any RequestInterceptor)? = nil) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.cookies = .none
        if let ca = InteropServer.testCA { configuration.tls.trustRoots = .system(adding: [ca]) }
        return Session(configuration: configuration, headers: headers, interceptor: interceptor, callbackQueue: testCallbackQueue)
    }

    /// Text of exactly `count` bytes: ASCII and two-byte characters (so that UTF-8 is checked
    /// across frames and compressed blocks), padded with ASCII.
    static func text(count: Int) -> String {
        let block = "courier é websocket ß interop "
        let repeated = String(repeating: block, count: count / block.utf8.count)
        return repeated + String(repeating: "x", count: count - repeated.utf8.count)
    }

    /// `count` bytes that deflate cannot shrink: 64 KiB of random bytes, repeated (a repeat lies
    /// beyond deflate's 32 KiB window). Cheap to make, which matters in a debug build.
    static func random(count: Int) -> Data {
        var data = Data(capacity: count)
        while data.count < count { data.append(randomBlock.prefix(count - data.count)) }
        return data
    }

    private static let randomBlock: Data = {
        var generator = SystemRandomNumberGenerator()
        let words = (0..<(64 << 10) / 8).map { _ in generator.next() as UInt64 }
        return words.withUnsafeBytes { Data($0) }
    }()

    /// Sends each size as binary then as text and checks the echo of each, on one connection.
    private func echoEverySize(at url: URL, offersCompression: Bool, serverCompresses: Bool) async throws {
        var configuration = WebSocketConfiguration()
        configuration.offersCompression = offersCompression
        let socket = session().webSocket(url, configuration: configuration)
        try await socket.connect()
        #expect(socket.isCompressed == (offersCompression && serverCompresses), "permessage-deflate in use with \(url)")
        var replies = socket.messages.makeAsyncIterator()
        for size in Self.sizes {
            let binary = Self.random(count: size)
            try await socket.send(.binary(binary))
            let binaryReply = try await replies.next()
            // (Compared first: a failing #expect would print both 16 MiB operands.)
            let binarySame = binaryReply == .binary(binary)
            #expect(binarySame, "binary echo of \(size) bytes from \(url) (got \(binaryReply.map(Self.describe) ?? "nothing"))")
            let text = Self.text(count: size)
            #expect(text.utf8.count == size)
            try await socket.send(.text(text))
            let textReply = try await replies.next()
            let textSame = textReply == .text(text)
            #expect(textSame, "text echo of \(size) bytes from \(url) (got \(textReply.map(Self.describe) ?? "nothing"))")
        }
        try await socket.close()
        #expect(socket.state == .closed)
        #expect(socket.closeStatus?.code == .normalClosure)
    }

    /// `text, 126 bytes` or `binary, 0 bytes`.
    static func describe(_ message: WebSocketMessage) -> String {
        switch message {
        case .text(let text): "text, \(text.utf8.count) bytes"
        case .binary(let data): "binary, \(data.count) bytes"
        }
    }

    @Test(arguments: endpoints)
    func echoesEverySizeWithCompressionOffered(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("echo") else { return }
        try await echoEverySize(at: url, offersCompression: true, serverCompresses: endpoint.compresses)
    }

    /// Declining compression matters only where the server would accept it (with the others the
    /// exchange is the one above).
    @Test(arguments: endpoints.filter(\.compresses))
    func echoesEverySizeWithoutCompression(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("echo") else { return }
        try await echoEverySize(at: url, offersCompression: false, serverCompresses: endpoint.compresses)
    }

    /// nginx's HTTP/2 port offers h2 by ALPN; a WebSocket must ask for HTTP/1.1 only (its
    /// Upgrade does not exist in HTTP/2), and gets it.
    @Test func wssOnAPortThatOffersHTTP2SpeaksHTTP1() async throws {
        guard let url = Endpoint(variable: "COURIER_WSS_H2_ALPN_URL", compresses: true).url("echo") else { return }
        let socket = session().webSocket(url)
        try await socket.connect()
        let message = Self.text(count: 64 << 10)
        try await socket.send(message)
        var replies = socket.messages.makeAsyncIterator()
        let same = try await replies.next() == .text(message)
        #expect(same)
        try await socket.close()
    }

    /// The servers answer pings with pongs carrying the payload back; JSON goes out and comes back decodable.
    @Test(arguments: endpoints)
    func pingsAreAnsweredAndJSONRoundTrips(endpoint: Endpoint) async throws {
        struct Quote: Codable, Equatable { let symbol: String; let price: Double }
        guard let url = endpoint.url("echo") else { return }
        let socket = session().webSocket(url)
        let roundTrip = try await socket.ping(Data("are you there".utf8))
        #expect(roundTrip > .zero && roundTrip < .seconds(30))
        try await socket.ping()
        try await socket.send(json: Quote(symbol: "BTC", price: 97_000.5))
        var replies = socket.messages.makeAsyncIterator()
        let reply = try await replies.next()
        #expect(try reply?.decode(Quote.self) == Quote(symbol: "BTC", price: 97_000.5))
        try await socket.close(code: .goingAway, reason: "done")
        // Ours was first; the code is the server's answer (websockets echoes 1001, aiohttp answers 1000).
        #expect(socket.closeStatus?.initiatedByServer == false)
        #expect(socket.state == .closed)
    }

    @Test(arguments: endpoints)
    func theServersSubprotocolIsExposed(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("chat") else { return }
        let chat = session().webSocket(url, protocols: ["superchat", "chat"])
        try await chat.connect()
        #expect(chat.subprotocol == "chat")
        try await chat.send("hello")
        var replies = chat.messages.makeAsyncIterator()
        #expect(try await replies.next() == .text("hello"))
        try await chat.close()

        let none = session().webSocket(url)
        try await none.connect()
        #expect(none.subprotocol == nil)
        try await none.close()
    }

    @Test(arguments: endpoints)
    func aCloseWithTheServersCodeIsAWebSocketClosedError(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("close") else { return }
        let socket = session().webSocket(url)
        // (Not connect() first: the server closes as soon as it has opened, and connect() reports
        // that close when it comes before connect() sees the socket open.)
        let error = await #expect(throws: CourierError.self) {
            for try await message in socket.messages { Issue.record("unexpected message \(message)") }
        }
        #expect(error?.kind == .webSocketClosed, "\(String(describing: error))")
        #expect(error?.webSocketCloseStatus?.code == WebSocketCloseCode(4001))
        #expect(error?.webSocketCloseStatus?.reason == "bye")
        #expect(socket.closeStatus?.code == WebSocketCloseCode(4001))
        #expect(socket.closeStatus?.reason == "bye")
        #expect(socket.closeStatus?.initiatedByServer == true)
        #expect(socket.state == .closed)
    }

    @Test(arguments: endpoints)
    func aRefusedHandshakeCarriesItsStatus(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("auth") else { return }
        let socket = session().webSocket(url)
        let error = await #expect(throws: CourierError.self) { try await socket.connect() }
        #expect(error?.kind == .webSocketHandshakeFailed, "\(String(describing: error))")
        #expect(error?.responseCode == 401)
        #expect(error?.webSocketHandshakeResponse?.statusCode == 401)
        #expect(error?.webSocketHandshakeResponse.map { String(decoding: $0.body, as: UTF8.self) } == "unauthorized\n")
        #expect(socket.state == .closed)
    }

    /// The bearer token through each way a request gets a header: the call's `headers:`, the
    /// session's default headers, and an adapter.
    @Test(arguments: endpoints)
    func theAuthorizationHeaderReachesTheHandshakeEveryWay(endpoint: Endpoint) async throws {
        guard let url = endpoint.url("auth") else { return }
        let adapter = Interceptor(adapter: { request, _ in
            var request = request
            request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
            return request
        })
        let sockets = [
            session().webSocket(url, headers: [.authorization(bearerToken: "secret")]),
            session(headers: [.authorization(bearerToken: "secret")]).webSocket(url),
            session(interceptor: adapter).webSocket(url),
        ]
        for (way, socket) in zip(["headers:", "session headers", "adapter"], sockets) {
            try await socket.connect()
            try await socket.send("authorised by \(way)")
            var replies = socket.messages.makeAsyncIterator()
            #expect(try await replies.next() == .text("authorised by \(way)"))
            try await socket.close()
        }
    }
}
