import CourierTestServer
import Foundation
import Testing
@_spi(Transport) @testable import Courier

/// How the TCP connection ends after the close handshake does not change what the application
/// sees: once the server's close frame arrived, its code and reason stand, whether the server then
/// closes the connection (FIN), resets it (RST, as Autobahn|Testsuite's server does in most cases),
/// or does either before the client's answer reached it. Against scripted CourierTestServer
/// sessions, on the curl engine and on the URLSession engine (the real task where it runs, the
/// loopback engine on Linux).
@Suite struct WebSocketClosingTests {
    /// One way a close handshake ends, and what the application must see.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let script: [WebSocketScript.Step]
        /// The application closes with this code and reason once open; nil: it only reads.
        var clientClose: (code: WebSocketCloseCode, reason: String)? = nil
        /// Whether the server reads the client's close frame before it goes (the recording has it).
        var serverReadsTheAnswer = true
        /// The error `messages` throws; nil when it finishes normally.
        let error: CourierError.Kind?
        let status: WebSocketCloseStatus

        var testDescription: String { name }
    }

    static let byServer = WebSocketCloseStatus(code: WebSocketCloseCode(3000), reason: "bye", initiatedByServer: true)
    static let normalByServer = WebSocketCloseStatus(code: .normalClosure, reason: "done", initiatedByServer: true)

    static let cases: [Case] = [
        Case(
            name: "server closes with 3000, reads the answer, then FIN", script: [.send(.text("last")), .close(code: 3000, reason: "bye")],
            error: .webSocketClosed, status: byServer),
        Case(
            name: "server closes with 3000, reads the answer, then RST",
            script: [.send(.text("last")), .frame(.close(code: 3000, reason: "bye")), .receiveClose, .end(.reset)],
            error: .webSocketClosed, status: byServer),
        Case(
            name: "server closes with 3000, then FIN at once",
            script: [.send(.text("last")), .frame(.close(code: 3000, reason: "bye")), .end(.close)], serverReadsTheAnswer: false,
            error: .webSocketClosed, status: byServer),
        Case(
            name: "server closes with 3000, then RST at once",
            script: [.send(.text("last")), .frame(.close(code: 3000, reason: "bye")), .end(.reset)], serverReadsTheAnswer: false,
            error: .webSocketClosed, status: byServer),
        Case(
            name: "server closes with 1000, reads the answer, then RST",
            script: [.send(.text("last")), .frame(.close(code: 1000, reason: "done")), .receiveClose, .end(.reset)],
            error: nil, status: normalByServer),
        Case(
            name: "server closes with 1000, then RST at once",
            script: [.send(.text("last")), .frame(.close(code: 1000, reason: "done")), .end(.reset)], serverReadsTheAnswer: false,
            error: nil, status: normalByServer),
        Case(
            name: "client closes with 4000, the server answers, then FIN", script: [.send(.text("last"))],
            clientClose: (WebSocketCloseCode(4000), "mine"), error: nil, status: WebSocketCloseStatus(code: WebSocketCloseCode(4000))),
        Case(
            name: "client closes with 4000, the server answers, then RST", script: [.send(.text("last")), .receiveClose, .end(.reset)],
            clientClose: (WebSocketCloseCode(4000), "mine"), error: nil, status: WebSocketCloseStatus(code: WebSocketCloseCode(4000))),
    ]

    @Test(arguments: TransportUnderTest.available, cases)
    func theCloseCodeThatArrivedStands(transport: TransportUnderTest, ending: Case) async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript(ending.script)) }
            let socket = try Self.socket(transport, server, "/ws")
            var received: [WebSocketMessage] = []
            var failure: CourierError?
            do {
                if let close = ending.clientClose {
                    var iterator = socket.messages.makeAsyncIterator()
                    received.append(try #require(try await iterator.next()))
                    try await socket.close(code: close.code, reason: close.reason)
                }
                for try await message in socket.messages { received.append(message) }
            } catch let error as CourierError {
                failure = error
            }
            #expect(received == [.text("last")])
            #expect(failure?.kind == ending.error, "\(failure.map { "\($0)" } ?? "finished normally")")
            if ending.error != nil { #expect(failure?.webSocketCloseStatus == ending.status) }
            #expect(socket.state == .closed)
            let status = try #require(socket.closeStatus)
            #expect(status.code == ending.status.code)
            // The URLSession engine reports the client's own close frame when it closed first
            // (URLSessionWebSocketTask does not say what the server answered).
            if ending.clientClose == nil || transport == .curl {
                #expect(status == ending.status)
            }
            let recording = try await server.takeWebSocket()
            try await recording.waitUntilFinished()
            if let close = ending.clientClose {
                #expect(recording.clientClose?.code == close.code.rawValue)
            } else if ending.serverReadsTheAnswer {
                #expect(recording.clientClose?.code == ending.status.code.rawValue, "the client echoed the server's code")
            }
        }
    }

    /// A socket to `path` on `transport`: on the URLSession transport, the real
    /// `URLSessionWebSocketTask` where it can open WebSockets, else the loopback engine (the same
    /// glue over a curl-transport WebSocket).
    static func socket(
        _ transport: TransportUnderTest, _ server: TestServer, _ path: String,
        configuration: WebSocketConfiguration = WebSocketConfiguration(), clock: any Clock<Duration> = ContinuousClock()
    ) throws -> WebSocket {
        switch transport {
        case .curl:
            return makeSession(.curl, server: server).webSocket(server.url(path), configuration: configuration, clock: clock)
        case .urlSession:
            if WebSocketURLSessionTests.taskWorks {
                return makeSession(.urlSession, server: server).webSocket(server.url(path), configuration: configuration, clock: clock)
            }
            return try WebSocketURLSessionTests.loopbackSocket(server, path, configuration: configuration, clock: clock).0
        }
    }
}
