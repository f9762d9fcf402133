import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

extension CourierTestServerTests {
    /// The server side of RFC 6455, driven by a raw socket client that sees every byte.
    @Suite struct WebSockets {
        static let key: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]

        /// Starts a server answering `/ws` with `script`, connects, and completes the handshake.
        static func open(_ script: WebSocketScript, headers: [String] = []) throws -> (TestServer, RawClient) {
            let server = try TestServer()
            server.route("/ws") { _ in .webSocket(script) }
            let client = try RawClient(port: server.port)
            let head = try client.webSocketHandshake(headers: headers)
            #expect(head.status == 101)
            return (server, client)
        }

        /// The example of the README's and the guide's "WebSocket sessions" section, with a raw client.
        @Test func theDocumentedExampleWorks() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.route("/live") { _ in
                .webSocket(WebSocketScript([.send(.text("welcome")), .echo()], subprotocol: .firstOffered))
            }
            let client = try RawClient(port: server.port)
            #expect(try client.webSocketHandshake("/live", headers: ["Sec-WebSocket-Protocol: chat"]).headers["Sec-WebSocket-Protocol"] == "chat")
            #expect(try client.readFrame().payload == Array("welcome".utf8))
            try client.sendFrame(1, Array("hi".utf8))
            #expect(try client.readFrame().payload == Array("hi".utf8))
            try client.sendClose(1000)
            #expect(try client.readFrame().closeCode == 1000)

            let socket = try await server.takeWebSocket()
            try await socket.waitUntilFinished()
            #expect(socket.messages == [.text("hi")])
            #expect(socket.frames.allSatisfy { $0.isMasked })
            #expect(socket.clientClose?.code == 1000)
        }

        // MARK: Handshake

        @Test func handshakeAnswersTheRFCExampleKeyAndChoosesASubprotocol() async throws {
            let (server, client) = try Self.open(
                WebSocketScript(subprotocol: .firstOffered),
                headers: [
                    "Sec-WebSocket-Protocol: chat, superchat",
                    "Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits",
                ])
            defer { expectClean(server.shutdown()) }
            let recording = try await server.takeWebSocket()
            #expect(recording.request.headers["Sec-WebSocket-Key"] == RawClient.exampleKey)
            #expect(recording.subprotocol == "chat")
            #expect(recording.offeredSubprotocols == ["chat", "superchat"])
            #expect(recording.offeredExtensions == ["permessage-deflate; client_max_window_bits"])
            try client.sendClose(1000)
            #expect(try client.readFrame().closeCode == 1000)
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
        }

        @Test func handshakeHeadIsExact() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(
                .webSocket(
                    WebSocketScript(
                        [.end(.close)], subprotocol: .always("v2"),
                        extraHeaders: ["Sec-WebSocket-Extensions": "x-never-offered"])))
            let client = try RawClient(port: server.port)
            try client.send(RawClient.handshake("/ws"))
            let (bytes, end) = client.readToEnd()
            #expect(
                String(decoding: bytes, as: UTF8.self) == "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n"
                    + "Connection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
                    + "Sec-WebSocket-Protocol: v2\r\nSec-WebSocket-Extensions: x-never-offered\r\n\r\n")
            #expect(end == .eof)
        }

        @Test func acceptValueCanBeWrong() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.webSocket(WebSocketScript([.end(.close)], acceptValueOverride: "bogus")))
            let client = try RawClient(port: server.port)
            #expect(try client.webSocketHandshake().headers["Sec-WebSocket-Accept"] == "bogus")
        }

        @Test func anOrdinaryResponseRefusesTheHandshake() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue([.text("no", status: 401), .redirect(to: "/elsewhere")])
            let client = try RawClient(port: server.port)
            #expect(try client.webSocketHandshake().status == 401)
            _ = try client.readResponseBody(count: 2)
            #expect(try client.webSocketHandshake().status == 302)
        }

        @Test(arguments: [
            ("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n", 400),
            (
                "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: c2hvcnQ=\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n", 400
            ),
            (
                "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    + "Sec-WebSocket-Version: 13\r\n\r\n", 400
            ),
            (
                "POST /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nContent-Length: 0\r\n\r\n", 400
            ),
            (
                "GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n", 426
            ),
        ])
        func invalidHandshakesAreRefusedAndReported(request: String, status: Int) throws {
            let server = try TestServer()
            server.route("/ws") { _ in .webSocket(.echo) }
            let client = try RawClient(port: server.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status)
            if status == 426 { #expect(response.headers["Sec-WebSocket-Version"] == "13") }
            #expect(server.webSockets.isEmpty)
            let report = server.shutdown()
            #expect(report.webSocketViolations.count == 1)
            #expect(report.problems(webSocketViolations: 1) == [])
        }

        // MARK: Echo and recording

        @Test func echoesRecordsAndClosesCleanly() async throws {
            let (server, client) = try Self.open(.echo)
            defer { expectClean(server.shutdown()) }
            try client.sendFrame(1, Array("héllo".utf8))
            #expect(try client.readFrame() == RawFrame(fin: true, rsv: 0, opcode: 1, maskingKey: nil, payload: Array("héllo".utf8)))
            try client.sendFrame(2, [0, 1, 2], key: [9, 9, 9, 9])
            #expect(try client.readFrame().payload == [0, 1, 2])
            // A fragmented text message with a ping between its fragments.
            try client.sendFrame(1, Array("ab".utf8), fin: false)
            try client.sendFrame(9, Array("p".utf8))
            try client.sendFrame(0, Array("cd".utf8))
            #expect(try client.readFrame() == RawFrame(fin: true, rsv: 0, opcode: 0xA, maskingKey: nil, payload: Array("p".utf8)))
            #expect(try client.readFrame() == RawFrame(fin: true, rsv: 0, opcode: 1, maskingKey: nil, payload: Array("abcd".utf8)))
            try client.sendFrame(0xA, [7])
            try client.sendClose(1000, "bye")
            #expect(try client.readFrame() == RawFrame(fin: true, rsv: 0, opcode: 8, maskingKey: nil, payload: [0x03, 0xE8]))
            #expect(client.readToEnd().end == .eof)

            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
            #expect(recording.messages == [.text("héllo"), .binary(Data([0, 1, 2])), .text("abcd")])
            #expect(recording.frames.map(\.opcode) == [.text, .binary, .text, .ping, .continuation, .pong, .close])
            #expect(
                recording.frames.map(\.maskingKey) == [
                    0x37FA_213D, 0x0909_0909, 0x37FA_213D, 0x37FA_213D, 0x37FA_213D,
                    0x37FA_213D, 0x37FA_213D,
                ])
            #expect(recording.frames.map(\.fin) == [true, true, false, true, true, true, true])
            #expect(recording.pongs == [Data([7])])
            #expect(recording.clientClose == WebSocketRecording.Close(code: 1000, reason: "bye"))
            #expect(recording.serverClose == WebSocketRecording.Close(code: 1000))
            #expect(recording.violations == [])
        }

        @Test func framesSentWithTheHandshakeAreNotLost() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.webSocket(WebSocketScript([.echo(messages: 1), .close(code: 1001, reason: "done")])))
            let client = try RawClient(port: server.port)
            try client.send(RawClient.handshake("/ws") + RawClient.frame(1, Array("early".utf8)))
            #expect(try client.readHead().status == 101)
            #expect(try client.readFrame().payload == Array("early".utf8))
            #expect(try client.readFrame() == RawFrame(fin: true, rsv: 0, opcode: 8, maskingKey: nil, payload: [0x03, 0xE9] + Array("done".utf8)))
            try client.sendClose(1001)
            #expect(client.readToEnd().end == .eof)
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
            #expect(recording.serverClose == WebSocketRecording.Close(code: 1001, reason: "done"))
        }

        @Test func pingsGoUnansweredWhenScriptedSo() async throws {
            let (server, client) = try Self.open(WebSocketScript(answersPings: false))
            defer { expectClean(server.shutdown()) }
            try client.sendFrame(9, [1, 2])
            client.setReceiveTimeout(.milliseconds(200))
            #expect(throws: RawClient.ReadEnd.timeout) { try client.readFrame() }
            let recording = try await server.takeWebSocket()
            #expect(recording.frames.map(\.opcode) == [.ping])
        }

        @Test func receiveWaitsForMessagesBeforeTheNextStep() async throws {
            let gate = Gate()
            let (server, client) = try Self.open(
                WebSocketScript([
                    .receive(count: 2), .send(.text("got 2")), .wait(gate),
                    .send(.text("opened")), .delay(.milliseconds(20)), .end(.close),
                ]))
            defer { expectClean(server.shutdown()) }
            try client.sendFrame(1, [0x61])
            try client.sendFrame(2, [0x62])
            #expect(try client.readFrame().payload == Array("got 2".utf8))
            #expect(await gate.waitUntilWaiting(count: 1))
            gate.open()
            #expect(try client.readFrame().payload == Array("opened".utf8))
            #expect(client.readToEnd().end == .eof)
            #expect(try await server.takeWebSocket().waitUntilFinished() == .scripted(.close))
        }

        // MARK: Exact bytes

        @Test func scriptedStepsEmitExactlyTheBytesAsked() throws {
            let big = Data((0..<65536).map { UInt8(truncatingIfNeeded: $0) })
            let (server, client) = try Self.open(
                WebSocketScript([
                    .send(.text("hi")),
                    .send(.binary(Data(count: 126))),
                    .send(.binary(big)),
                    .send(.text("abcde"), fragmentSize: 2),
                    .ping(Data([1])),
                    .pong(Data()),
                    .frame(
                        .init(
                            opcode: .init(rawValue: 0x3), payload: Data([0xFF]), fin: false, rsv1: true, rsv2: true, rsv3: true,
                            maskingKey: 0x0102_0304)),
                    .frame(.init(opcode: .binary, payload: Data([1]), declaredLength: 1 << 63)),
                    .frame(.close(code: 999, reason: "x")),
                    .raw(Data([0xDE, 0xAD])),
                    .end(.close),
                ]))
            defer { expectClean(server.shutdown()) }
            var expected: [UInt8] = [0x81, 0x02, 0x68, 0x69]
            expected += [0x82, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126)
            expected += [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](big)
            expected += [0x01, 0x02, 0x61, 0x62, 0x00, 0x02, 0x63, 0x64, 0x80, 0x01, 0x65]
            expected += [0x89, 0x01, 0x01, 0x8A, 0x00]
            expected += [0x73, 0x81, 0x01, 0x02, 0x03, 0x04, 0xFF ^ 0x01]
            expected += [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x01]
            expected += [0x88, 0x03, 0x03, 0xE7, 0x78]
            expected += [0xDE, 0xAD]
            let (bytes, end) = client.readToEnd()
            #expect(bytes == expected)
            #expect(end == .eof)
        }

        @Test func endingWithAResetIsSeenAsAReset() async throws {
            let (server, client) = try Self.open(WebSocketScript([.send(.text("x")), .end(.reset)]))
            defer { expectClean(server.shutdown()) }
            let (bytes, end) = client.readToEnd()
            #expect(bytes == [0x81, 0x01, 0x78])
            #expect(end == .reset)
            #expect(try await server.takeWebSocket().waitUntilFinished() == .scripted(.reset))
        }

        @Test func receiveCloseAnswersTheClientsCloseThenTheNextStepEndsTheConnection() async throws {
            let (server, client) = try Self.open(WebSocketScript([.send(.text("x")), .receiveClose, .end(.reset)]))
            defer { expectClean(server.shutdown()) }
            #expect(try client.readFrame().payload == Array("x".utf8))
            try client.sendClose(4000, "mine")
            let (bytes, end) = client.readToEnd()
            #expect(bytes == [0x88, 0x02, 0x0F, 0xA0], "the answer echoes the code")
            #expect(end == .reset)
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .scripted(.reset))
            #expect(recording.clientClose?.code == 4000)
            #expect(recording.serverClose?.code == 4000)
        }

        @Test func receiveCloseAfterTheServersCloseDoesNotAnswerAgainAndEndsNormallyWithoutAnotherStep() async throws {
            let (server, client) = try Self.open(WebSocketScript([.frame(.close(code: 3000, reason: "bye")), .receiveClose]))
            defer { expectClean(server.shutdown()) }
            #expect(try client.readFrame().closeCode == 3000)
            try client.sendClose(3000)
            let (bytes, end) = client.readToEnd()
            #expect(bytes.isEmpty, "no second close frame")
            #expect(end == .eof)
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
            #expect(recording.clientClose?.code == 3000)
        }

        // MARK: The client's violations

        @Test(arguments: [
            ("unmasked", RawClient.frame(1, [0x61], key: nil), UInt16(1002)),
            ("rsv1", RawClient.frame(1, [0x61], rsv: 4), 1002),
            ("rsv3", RawClient.frame(2, [], rsv: 1), 1002),
            ("reserved opcode 3", RawClient.frame(3, []), 1002),
            ("reserved opcode 0xB", RawClient.frame(0xB, []), 1002),
            ("fragmented ping", RawClient.frame(9, [], fin: false), 1002),
            ("126-byte ping", RawClient.frame(9, [UInt8](repeating: 0, count: 126)), 1002),
            ("continuation first", RawClient.frame(0, [0x61]), 1002),
            ("text inside text", RawClient.frame(1, [0x61], fin: false) + RawClient.frame(1, [0x62]), 1002),
            ("invalid UTF-8", RawClient.frame(1, [0xCE, 0xBA, 0xE1, 0xBD]), 1007),
            ("invalid UTF-8 across fragments", RawClient.frame(1, [0xCE], fin: false) + RawClient.frame(0, [0x61]), 1007),
            ("1-byte close", RawClient.frame(8, [0x03]), 1002),
            ("close code 1005", RawClient.frame(8, [0x03, 0xED]), 1002),
            ("close code 2999", RawClient.frame(8, [0x0B, 0xB7]), 1002),
            ("close reason invalid UTF-8", RawClient.frame(8, [0x03, 0xE8, 0xFF]), 1007),
            ("64-bit length MSB", RawClient.frame(2, [], declaredLength: 1 << 63), 1002),
            ("message over the limit", RawClient.frame(2, [UInt8](repeating: 0, count: 17)), 1009),
            (
                "fragments over the limit",
                RawClient.frame(2, [UInt8](repeating: 0, count: 9), fin: false)
                    + RawClient.frame(0, [UInt8](repeating: 0, count: 9)), 1009
            ),
            ("frame header over the limit", RawClient.frame(2, [], declaredLength: 1 << 40), 1009),
        ])
        func aClientViolationFailsTheConnection(name: String, bytes: [UInt8], code: UInt16) async throws {
            let (server, client) = try Self.open(WebSocketScript(maximumMessageSize: 16))
            try client.send(bytes)
            let close = try client.readFrame()
            #expect(close.opcode == 8 && close.closeCode == code, "\(name)")
            #expect(client.readToEnd().end == .eof, "\(name)")
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .failed(code: code), "\(name)")
            #expect(recording.violations.count == 1, "\(name)")
            #expect(recording.messages == [], "\(name)")
            let report = server.shutdown()
            #expect(report.problems(webSocketViolations: 1) == [], "\(name)")
            #expect(!report.isClean)
        }

        @Test(arguments: [UInt16(1000), 1001, 1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 4999])
        func validCloseCodesAreEchoed(code: UInt16) async throws {
            let (server, client) = try Self.open(WebSocketScript())
            defer { expectClean(server.shutdown()) }
            try client.sendClose(code, "r")
            #expect(try client.readFrame().closeCode == code)
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .closeHandshake)
            #expect(recording.clientClose == WebSocketRecording.Close(code: code, reason: "r"))
        }

        // MARK: Lifecycle

        @Test func aClientThatVanishesIsRecordedAsDisconnected() async throws {
            let (server, client) = try Self.open(.echo)
            defer { expectClean(server.shutdown()) }
            client.shutdownWrite()
            let recording = try await server.takeWebSocket()
            #expect(try await recording.waitUntilFinished() == .clientDisconnected)
            #expect(try await server.waitForClientDisconnect(path: "/ws").count == 1)
        }

        @Test func shutdownEndsOpenSessionsAndJoinsTheirThreads() async throws {
            let server = try TestServer()
            server.route("/ws") { _ in .webSocket(WebSocketScript([.wait(Gate()), .echo()])) }
            var clients: [RawClient] = []
            for _ in 0..<5 {
                let client = try RawClient(port: server.port)
                #expect(try client.webSocketHandshake().status == 101)
                clients.append(client)
            }
            var recordings: [WebSocketRecording] = []
            for _ in 0..<5 { recordings.append(try await server.takeWebSocket()) }
            #expect(server.activeConnectionCount == 5)
            expectClean(server.shutdown())
            #expect(server.activeConnectionCount == 0)
            #expect(recordings.allSatisfy { $0.ending == .serverShutdown })
            for client in clients { #expect(client.readToEnd().end == .eof) }
            await #expect(throws: TestServerError.shutdown) { try await server.takeWebSocket(timeout: .seconds(1)) }
        }
    }
}

extension RawClient {
    /// Reads `count` body bytes after a head read with ``readHead()``.
    func readResponseBody(count: Int) throws -> [UInt8] {
        try readExactly(count)
    }
}
