import Testing
import Foundation
@testable @_spi(Transport) import Courier

/// The handshake and the protocol together, as the transport will drive them.
struct WebSocketClientConnectionTests {
    typealias Connection = WebSocketClientConnection

    static let accepting =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"

    static func connection(protocols: [String] = [], compression: Bool = false) throws -> Connection {
        let request = try WebSocketHandshakeRequest(
            url: URL(string: "ws://example.com/live")!, protocols: protocols,
            offersCompression: compression, nonce: Array("the sample nonce".utf8))
        return Connection(request: request, keys: .fixed(0))
    }

    /// A readable form of the actions, ResponseHead not being Equatable.
    static func describe(_ actions: [Connection.Action]) -> [String] {
        actions.map { action in
            switch action {
            case .opened(let accepted): "opened \(accepted.subprotocol ?? "-") \(accepted.compression != nil)"
            case .handshakeFailed(let failure, let head, let remainder):
                "failed \(failure) \(head.map { String($0.statusCode) } ?? "-") \(String(decoding: remainder, as: UTF8.self))"
            case .protocol(let action): "\(action)"
            }
        }
    }

    @Test func opensThenReadsTheFramesThatFollowTheHead() throws {
        let stream = Data((Self.accepting + "Sec-WebSocket-Protocol: chat\r\n\r\n").utf8) + Data([0x81, 0x02, 0x68, 0x69, 0x89, 0x00])
        let expected = [
            "opened chat false", "\(WebSocketStateMachine.Action.deliver(.text("hi")))",
            "\(WebSocketStateMachine.Action.send(WebSocketFrameEncoder.encode(opcode: .pong, payload: Data(), key: (0, 0, 0, 0))))",
        ]
        var whole = try Self.connection(protocols: ["chat"])
        #expect(whole.state == .connecting)
        #expect(Self.describe(whole.handle(.send(.text("early")))) == ["\(WebSocketStateMachine.Action.refused(.notOpen))"])
        #expect(Self.describe(whole.handle(.bytesReceived(stream))) == expected)
        #expect(whole.state == .open)
        var split = try Self.connection(protocols: ["chat"])
        #expect(Self.describe(stream.flatMap { split.handle(.bytesReceived(Data([$0]))) }) == expected)
        #expect(
            Self.describe(split.handle(.send(.text("x")))) == [
                "\(WebSocketStateMachine.Action.send(WebSocketFrameEncoder.encode(opcode: .text, payload: Data("x".utf8), key: (0, 0, 0, 0))))"
            ])
    }

    /// A non-101 answer fails with its status and hands back the start of the body.
    @Test func reportsAnotherStatusWithItsHeadAndBody() throws {
        var connection = try Self.connection()
        let actions = connection.handle(.bytesReceived(Data("HTTP/1.1 401 Unauthorized\r\nContent-Length: 6\r\n\r\ndenied".utf8)))
        #expect(Self.describe(actions) == ["failed \(WebSocketHandshakeFailure.unexpectedStatus(401)) 401 denied"])
        #expect(connection.state == .closed(.abnormal))
        #expect(connection.handle(.bytesReceived(Data("more".utf8))).isEmpty)
        #expect(Self.describe(connection.handle(.sendPing(Data()))) == ["\(WebSocketStateMachine.Action.refused(.notOpen))"])
    }

    @Test func failsABadAnswerOrAnEarlyEnd() throws {
        var wrongKey = try Self.connection()
        let text = "HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: nope\r\n\r\n"
        #expect(Self.describe(wrongKey.handle(.bytesReceived(Data(text.utf8)))) == ["failed \(WebSocketHandshakeFailure.invalidAccept("nope")) 101 "])
        var cut = try Self.connection()
        #expect(cut.handle(.bytesReceived(Data("HTTP/1.1 101 x\r\n".utf8))).isEmpty)
        let failure = WebSocketHandshakeFailure.malformedResponse("the connection closed before the response head ended")
        #expect(Self.describe(cut.handle(.connectionClosed)) == ["failed \(failure) - "])
        var garbage = try Self.connection()
        #expect(Self.describe(garbage.handle(.bytesReceived(Data("SSH-2.0\r\n".utf8)))).first?.hasPrefix("failed") == true)
    }

    @Test(.enabled(if: WebSocketInflater.isAvailable, "zlib is not loadable"))
    func inflatesWhenTheServerAgreedToCompress() throws {
        var connection = try Self.connection(compression: true)
        let stream =
            Data((Self.accepting + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n").utf8)
            + Data([0xC1, 0x07, 0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        #expect(
            Self.describe(connection.handle(.bytesReceived(stream))) == ["opened - true", "\(WebSocketStateMachine.Action.deliver(.text("Hello")))"])
    }
}
