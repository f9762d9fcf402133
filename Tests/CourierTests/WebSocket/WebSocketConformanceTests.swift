import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
@_spi(Transport) @testable import Courier

/// RFC 6455 conformance of the real client (`session.webSocket`) against CourierTestServer, in the
/// spirit of the Autobahn|Testsuite client cases: each case names the section it checks, scripts
/// the server (valid or misbehaving), and asserts both what the client's caller sees (messages,
/// how the sequence ends, the error kind and close code) and what the server recorded (the
/// client's close code, its messages, every frame masked with a fresh key).
///
/// The curl transport only: the URLSession transport refuses WebSockets (see
/// `theURLSessionTransportRefusesWithAClearError`).
@Suite(.hangLimit(.seconds(300)))
struct WebSocketConformanceTests {
    /// What the client does once it has opened the connection, before reading.
    enum ClientAction: Sendable {
        case send(WebSocketMessage)
        case ping(Data)
        case close(WebSocketCloseCode, String)
    }

    /// How the client's `messages` sequence ends.
    enum Outcome: Sendable, Equatable, CustomStringConvertible {
        /// It finishes normally; `closeStatus` has this code.
        case finishes(WebSocketCloseCode)
        /// It throws this kind; `webSocketCloseStatus` has this code.
        case fails(CourierError.Kind, WebSocketCloseCode?)

        var description: String {
            switch self {
            case .finishes(let code): "finishes(\(code))"
            case .fails(let kind, let code): "fails(\(kind), \(code.map(\.description) ?? "nil"))"
            }
        }
    }

    /// One conformance case.
    struct Case: Sendable, CustomTestStringConvertible {
        /// The RFC 6455 section checked, e.g. "§5.2".
        var section: String
        var name: String
        /// What the server does.
        var steps: [WebSocketScript.Step]
        var actions: [ClientAction] = []
        var maximumMessageSize: Int?
        /// What the client's caller receives, in order.
        var received: [WebSocketMessage] = []
        var outcome: Outcome
        /// The code of the client's close frame as the server recorded it; nil: no close frame.
        var clientClose: UInt16?
        /// The data messages the server recorded from the client.
        var serverReceived: [WebSocketScript.Message] = []
        /// The payloads of the pongs the server recorded.
        var pongs: [Data]?

        var testDescription: String { "RFC 6455 \(section): \(name)" }
    }

    /// Runs `testCase` on the curl transport and checks both sides.
    static func run(_ testCase: Case) async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript(testCase.steps)) }
            let session = makeSession(.curl, server: server)
            var configuration = WebSocketConfiguration()
            if let limit = testCase.maximumMessageSize { configuration.maximumMessageSize = limit }
            let socket = session.webSocket(server.url("/ws"), configuration: configuration)
            // Bounded: a client that waits for what never comes fails the case (as `.cancelled`)
            // instead of hanging the suite; a minute is far beyond any case on a loaded machine.
            let reading = Task { () -> ([WebSocketMessage], Outcome) in
                var received: [WebSocketMessage] = []
                do {
                    for action in testCase.actions {
                        switch action {
                        case .send(let message): try await socket.send(message)
                        case .ping(let payload): try await socket.ping(payload)
                        case .close(let code, let reason): try await socket.close(code: code, reason: reason)
                        }
                    }
                    for try await message in socket.messages { received.append(message) }
                    return (received, .finishes(socket.closeStatus?.code ?? WebSocketCloseCode(0)))
                } catch let error as CourierError {
                    return (received, .fails(error.kind, error.webSocketCloseStatus?.code))
                } catch {
                    return (received, .fails(.cancelled, nil))
                }
            }
            let deadline = Task {
                try await Task.sleep(for: .seconds(60))
                reading.cancel()
            }
            let (received, outcome) = await reading.value
            deadline.cancel()
            #expect(received == testCase.received, "\(testCase)")
            #expect(outcome == testCase.outcome, "\(testCase)")
            #expect(socket.state == .closed || outcome != .finishes(.normalClosure), "\(testCase)")

            let recording = try await server.takeWebSocket(timeout: .seconds(60))
            try await recording.waitUntilFinished(timeout: .seconds(60))
            #expect(recording.clientClose?.code == testCase.clientClose, "\(testCase): server saw \(recording)")
            #expect(recording.messages == testCase.serverReceived, "\(testCase)")
            if let pongs = testCase.pongs { #expect(recording.pongs == pongs, "\(testCase)") }
            Self.expectMaskedWithFreshKeys(recording.frames, "\(testCase)")
        }
    }

    /// §5.3: every client frame masked, each with a new key (32 random bits: a repeat among a
    /// handful of frames would be a one-in-a-billion coincidence, or a broken key source).
    static func expectMaskedWithFreshKeys(
        _ frames: [WebSocketRecording.Frame], _ comment: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(frames.allSatisfy { $0.isMasked }, "\(comment): \(frames)", sourceLocation: sourceLocation)
        let keys = frames.compactMap(\.maskingKey)
        #expect(Set(keys).count == keys.count, "\(comment): repeated masking keys \(keys)", sourceLocation: sourceLocation)
    }

    @Test(arguments: Self.framingCases) func framing(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.pingsAndPongsCases) func pingsAndPongs(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.reservedBitsAndOpcodesCases) func reservedBitsAndOpcodes(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.fragmentationCases) func fragmentation(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.utf8Cases) func utf8(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.closeHandlingCases) func closeHandling(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.messageSizeCases) func messageSize(_ testCase: Case) async throws { try await Self.run(testCase) }
    @Test(arguments: Self.connectionEndsCases) func connectionEnds(_ testCase: Case) async throws { try await Self.run(testCase) }

    // MARK: Opening handshake (§4)

    /// §4.1, §4.2.2: the handshake the client sends is one a strict server accepts, and the
    /// subprotocol the server picks is exposed.
    @Test func handshakeOffersSubprotocolsAndGetsTheChosenOne() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.close(code: 1000)], subprotocol: .ifOffered("superchat"))) }
            let session = makeSession(.curl, server: server)
            let socket = session.webSocket(server.url("/ws"), protocols: ["chat", "superchat"], headers: ["X-Token": "t"])
            try await socket.connect()
            #expect(socket.subprotocol == "superchat")
            for try await _ in socket.messages {}
            let recording = try await server.takeWebSocket()
            #expect(recording.offeredSubprotocols == ["chat", "superchat"])
            #expect(recording.request.headers["X-Token"] == "t")
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
        }
    }

    /// §4.1 (the client's handshake checks): a refusal, a redirect, a wrong accept value, a
    /// subprotocol or extension that was not offered all fail with `.webSocketHandshakeFailed`.
    @Test(arguments: [
        ("401", MockResponse.text("who are you?", status: 401), 401),
        ("302", MockResponse.redirect(to: "/elsewhere"), 302),
        ("wrong accept", MockResponse.webSocket(WebSocketScript(acceptValueOverride: "AAAAAAAAAAAAAAAAAAAAAAAAAAA=")), 101),
        ("subprotocol not offered", MockResponse.webSocket(WebSocketScript(subprotocol: .always("x"))), 101),
        ("extension not offered", MockResponse.webSocket(WebSocketScript(extraHeaders: ["Sec-WebSocket-Extensions": "x-unknown"])), 101),
    ])
    func handshakeFailures(name: String, response: MockResponse, status: Int) async throws {
        try await withServer { server in
            server.enqueue(response)
            let session = makeSession(.curl, server: server)
            let socket = session.webSocket(server.url("/ws"))
            let error = await #expect(throws: CourierError.self, "\(name)") { try await socket.connect() }
            #expect(error?.kind == .webSocketHandshakeFailed, "\(name): \(String(describing: error))")
            #expect(error?.responseCode == status, "\(name)")
            #expect(socket.state == .closed, "\(name)")
            if status == 401 { #expect(error?.webSocketHandshakeResponse?.body == Data("who are you?".utf8)) }
            // A 101 the client refuses: the server's session sees the connection go.
            if status == 101 {
                let ending = try await server.takeWebSocket().waitUntilFinished()
                #expect(ending == .clientDisconnected, "\(name)")
            }
        }
    }

    /// FoundationNetworking's URLSessionWebSocketTask has no WebSockets here (libcurl without
    /// them): a clear `.invalidConfiguration`, no connection. (Apple platforms: `WebSocketURLSessionTests`.)
    @Test(.enabled(if: WebSocketTaskTranslation.isFoundationNetworking))
    func theURLSessionTransportRefusesWithAClearError() async throws {
        try await withServer { server in
            let session = makeSession(.urlSession, server: server)
            let socket = session.webSocket(server.url("/ws"))
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .invalidConfiguration)
            #expect(server.requestCount == 0)
        }
    }

    // MARK: Masking (§5.3)

    /// §5.3: many frames of every kind, each masked with a key of its own.
    @Test func everyClientFrameIsMaskedWithAFreshKey() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.echo(messages: 40), .ping(Data("p".utf8)), .close(code: 1000)])) }
            let session = makeSession(.curl, server: server)
            let socket = session.webSocket(server.url("/ws"))
            for index in 0..<20 {
                try await socket.send(.text("message \(index)"))
                try await socket.send(.binary(Data(count: index * 10)))
            }
            var count = 0
            for try await _ in socket.messages { count += 1 }
            #expect(count == 40)
            let recording = try await server.takeWebSocket()
            try await recording.waitUntilFinished()
            #expect(recording.frames.count == 42, "40 messages, a pong and a close: \(recording.frames.count)")
            Self.expectMaskedWithFreshKeys(recording.frames, "42 frames")
        }
    }
}
