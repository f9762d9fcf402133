import CourierTestServer
import Foundation
@_spi(Transport) @testable import Courier

/// The case tables of ``WebSocketConformanceTests``, one per area.
extension WebSocketConformanceTests {
    typealias Frame = WebSocketScript.Frame

    /// A text message of `count` bytes (ASCII).
    static func text(_ count: Int) -> String { String(repeating: "*", count: count) }
    /// A binary message of `count` bytes.
    static func binary(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }) }

    /// The server sends `frames` and waits; the client must fail with `code`, and say so in its close frame.
    static func violation(
        _ section: String, _ name: String, _ steps: [WebSocketScript.Step], code: UInt16,
        received: [WebSocketMessage] = [], pongs: [Data]? = nil, maximumMessageSize: Int? = nil
    ) -> Case {
        Case(
            section: section, name: name, steps: steps, maximumMessageSize: maximumMessageSize, received: received,
            outcome: .fails(.webSocketProtocolViolation, WebSocketCloseCode(code)), clientClose: code, pongs: pongs)
    }

    /// The server sends `steps` then closes with 1000; the client receives `received` and answers the close.
    static func accepted(
        _ section: String, _ name: String, _ steps: [WebSocketScript.Step], received: [WebSocketMessage],
        pongs: [Data]? = nil, maximumMessageSize: Int? = nil
    ) -> Case {
        Case(
            section: section, name: name, steps: steps + [.close(code: 1000)], maximumMessageSize: maximumMessageSize,
            received: received, outcome: .finishes(.normalClosure), clientClose: 1000, pongs: pongs)
    }

    // MARK: Framing (§5.2, §5.6)

    static let framingCases: [Case] =
        [0, 125, 126, 65535, 65536].flatMap { size -> [Case] in
            let text = WebSocketMessage.text(Self.text(size))
            let binary = WebSocketMessage.binary(Self.binary(size))
            return [
                Case(
                    section: "§5.2", name: "\(size)-byte text both ways",
                    steps: [.send(.text(Self.text(size))), .echo(messages: 1), .close(code: 1000)],
                    actions: [.send(text)], received: [text, text], outcome: .finishes(.normalClosure), clientClose: 1000,
                    serverReceived: [.text(Self.text(size))]),
                Case(
                    section: "§5.2", name: "\(size)-byte binary both ways",
                    steps: [.send(.binary(Self.binary(size))), .echo(messages: 1), .close(code: 1000)],
                    actions: [.send(binary)], received: [binary, binary], outcome: .finishes(.normalClosure), clientClose: 1000,
                    serverReceived: [.binary(Self.binary(size))]),
            ]
        } + [
            accepted("§5.2", "many messages in a row", (0..<50).map { .send(.text("m\($0)")) }, received: (0..<50).map { .text("m\($0)") }),
            violation("§5.1", "a masked server frame", [.frame(Frame(opcode: .text, payload: Data("hi".utf8), maskingKey: 0x0102_0304))], code: 1002),
            violation(
                "§5.2", "a 64-bit length with the most significant bit set", [.frame(Frame(opcode: .binary, declaredLength: 1 << 63))], code: 1002),
        ]

    // MARK: Pings and pongs (§5.5.2, §5.5.3)

    static let pingsAndPongsCases: [Case] = [
        accepted("§5.5.2", "an empty ping is answered with an empty pong", [.ping(Data())], received: [], pongs: [Data()]),
        accepted("§5.5.2", "a ping's payload comes back in the pong", [.ping(Data("hello".utf8))], received: [], pongs: [Data("hello".utf8)]),
        accepted("§5.5.2", "a 125-byte ping is answered", [.ping(binary(125))], received: [], pongs: [binary(125)]),
        accepted(
            "§5.5.2", "a binary ping payload comes back", [.ping(Data([0x00, 0xFF, 0xFE, 0xFD]))], received: [],
            pongs: [Data([0x00, 0xFF, 0xFE, 0xFD])]),
        accepted(
            "§5.5.2", "ten pings, ten pongs in order", (0..<10).map { .ping(Data("\($0)".utf8)) }, received: [],
            pongs: (0..<10).map { Data("\($0)".utf8) }),
        violation("§5.5", "a 126-byte ping fails the connection", [.frame(Frame(opcode: .ping, payload: binary(126)))], code: 1002, pongs: []),
        accepted("§5.5.3", "an unsolicited pong is ignored", [.pong(Data("x".utf8)), .send(.text("after"))], received: [.text("after")]),
        accepted("§5.5.3", "an unsolicited empty pong is ignored", [.pong(Data()), .send(.text("after"))], received: [.text("after")]),
        Case(
            section: "§5.5.2", name: "the client's ping is answered and timed", steps: [],
            actions: [.ping(Data("rtt".utf8)), .close(.normalClosure, "")],
            outcome: .finishes(.normalClosure), clientClose: 1000),
    ]

    // MARK: Reserved bits and opcodes (§5.2)

    static let reservedBitsAndOpcodesCases: [Case] =
        [
            violation("§5.2", "RSV1 without a negotiated extension", [.frame(Frame(opcode: .text, payload: Data("x".utf8), rsv1: true))], code: 1002),
            violation("§5.2", "RSV2", [.frame(Frame(opcode: .text, payload: Data("x".utf8), rsv2: true))], code: 1002),
            violation("§5.2", "RSV3", [.frame(Frame(opcode: .binary, payload: Data([1]), rsv3: true))], code: 1002),
            violation("§5.2", "all RSV bits", [.frame(Frame(opcode: .text, rsv1: true, rsv2: true, rsv3: true))], code: 1002),
            violation("§5.2", "RSV3 on a ping", [.frame(Frame(opcode: .ping, rsv3: true))], code: 1002, pongs: []),
            violation(
                "§5.2", "RSV2 after a valid message", [.send(.text("ok")), .frame(Frame(opcode: .text, rsv2: true))], code: 1002,
                received: [.text("ok")]),
        ]
        + ([3, 4, 5, 6, 7, 0xB, 0xC, 0xD, 0xE, 0xF] as [UInt8]).map { opcode in
            violation(
                "§5.2", "the reserved opcode 0x\(String(opcode, radix: 16, uppercase: true))",
                [.frame(Frame(opcode: .init(rawValue: opcode), payload: Data("x".utf8)))], code: 1002)
        }

    // MARK: Fragmentation (§5.4)

    static let fragmentationCases: [Case] = [
        accepted("§5.4", "a text message in fragments", [.send(.text("fragmented"), fragmentSize: 3)], received: [.text("fragmented")]),
        accepted("§5.4", "a binary message in 1-byte fragments", [.send(.binary(binary(20)), fragmentSize: 1)], received: [.binary(binary(20))]),
        accepted(
            "§5.4", "a 65536-byte binary message in fragments", [.send(.binary(binary(65536)), fragmentSize: 1000)],
            received: [.binary(binary(65536))]),
        accepted(
            "§5.4", "empty fragments", [.frame(.text("", fin: false)), .frame(.continuation(Data(), fin: false)), .frame(.continuation(Data()))],
            received: [.text("")]),
        accepted(
            "§5.4", "a ping between fragments", [.frame(.text("ab", fin: false)), .ping(Data("p".utf8)), .frame(.continuation(Data("cd".utf8)))],
            received: [.text("abcd")], pongs: [Data("p".utf8)]),
        accepted(
            "§5.4", "pings and a pong between fragments",
            [
                .frame(.binary(Data([1]), fin: false)), .ping(Data("1".utf8)), .frame(.continuation(Data([2]), fin: false)),
                .pong(Data()), .ping(Data("2".utf8)), .frame(.continuation(Data([3]))),
            ],
            received: [.binary(Data([1, 2, 3]))], pongs: [Data("1".utf8), Data("2".utf8)]),
        violation("§5.4", "a continuation frame with nothing to continue", [.frame(.continuation(Data("x".utf8)))], code: 1002),
        violation(
            "§5.4", "a final continuation after a complete message",
            [.send(.text("done")), .frame(.continuation(Data("x".utf8)))], code: 1002, received: [.text("done")]),
        violation("§5.4", "a new text message inside a fragmented one", [.frame(.text("a", fin: false)), .frame(.text("b"))], code: 1002),
        violation(
            "§5.4", "a new binary message inside a fragmented text", [.frame(.text("a", fin: false)), .frame(.binary(Data([1]), fin: false))],
            code: 1002),
        violation(
            "§5.5", "a fragmented ping",
            [
                .frame(Frame(opcode: .ping, payload: Data("a".utf8), fin: false)),
                .frame(.continuation(Data("b".utf8))),
            ], code: 1002),
        violation("§5.5", "a fragmented close", [.frame(Frame(opcode: .close, payload: Frame.closePayload(code: 1000), fin: false))], code: 1002),
    ]

    // MARK: UTF-8 (§5.6, §8.1)

    static let utf8Cases: [Case] = [
        accepted("§5.6", "multi-byte text in one frame", [.send(.text("κόσμε 𝄞 €"))], received: [.text("κόσμε 𝄞 €")]),
        accepted(
            "§5.6", "multi-byte text split inside its characters", [.send(.text("κόσμε 𝄞 €"), fragmentSize: 1)],
            received: [.text("κόσμε 𝄞 €")]),
        accepted("§5.6", "the largest code point", [.send(.text("\u{10FFFF}"), fragmentSize: 2)], received: [.text("\u{10FFFF}")]),
        violation("§8.1", "a UTF-16 surrogate", [.frame(Frame(opcode: .text, payload: Data([0xCE, 0xBA, 0xED, 0xA0, 0x80])))], code: 1007),
        violation("§8.1", "an overlong encoding", [.frame(Frame(opcode: .text, payload: Data([0xC0, 0xAF])))], code: 1007),
        violation("§8.1", "a code point above U+10FFFF", [.frame(Frame(opcode: .text, payload: Data([0xF4, 0x90, 0x80, 0x80])))], code: 1007),
        violation("§8.1", "a lone continuation byte", [.frame(Frame(opcode: .text, payload: Data([0x61, 0x80, 0x62])))], code: 1007),
        violation(
            "§8.1", "a sequence cut short at the end of the message", [.frame(Frame(opcode: .text, payload: Data([0x61, 0xE2, 0x82])))],
            code: 1007),
        violation(
            "§8.1", "an invalid sequence split across fragments",
            [.frame(Frame(opcode: .text, payload: Data([0xCE]), fin: false)), .frame(.continuation(Data([0x41])))], code: 1007),
        // The rest of the message never comes: only a client that checks as bytes arrive notices.
        violation(
            "§8.1", "fails at the first bad byte, before the message ends",
            [.frame(Frame(opcode: .text, payload: Data([0x6F, 0x6B, 0xFF]), fin: false))], code: 1007),
        violation(
            "§8.1", "fails at the first bad byte of a later fragment",
            [.frame(.text("κό", fin: false)), .frame(Frame(opcode: .continuation, payload: Data([0xF8, 0x88]), fin: false))], code: 1007),
    ]

    // MARK: Close handling (§5.5.1, §7.4)

    static let closeHandlingCases: [Case] =
        [
            Case(
                section: "§5.5.1", name: "a close with code and reason is answered", steps: [.close(code: 1000, reason: "bye")],
                outcome: .finishes(.normalClosure), clientClose: 1000),
            Case(
                section: "§5.5.1", name: "a close without a code finishes normally", steps: [.frame(.close(code: nil))],
                outcome: .finishes(.noStatusReceived), clientClose: nil),
            Case(
                section: "§5.5.1", name: "1001 finishes normally", steps: [.close(code: 1001, reason: "restart")],
                outcome: .finishes(.goingAway), clientClose: 1001),
            Case(
                section: "§5.5.1", name: "a 123-byte reason", steps: [.close(code: 1000, reason: text(123))],
                outcome: .finishes(.normalClosure), clientClose: 1000),
            Case(
                section: "§5.5.1", name: "messages before the close are delivered",
                steps: [.send(.text("a")), .send(.binary(Data([1]))), .close(code: 1000)],
                received: [.text("a"), .binary(Data([1]))], outcome: .finishes(.normalClosure), clientClose: 1000),
            Case(
                section: "§7.1.2", name: "the client closes first", steps: [], actions: [.send(.text("x")), .close(.normalClosure, "done")],
                outcome: .finishes(.normalClosure), clientClose: 1000, serverReceived: [.text("x")]),
            violation("§5.5.1", "a 1-byte close payload", [.frame(Frame(opcode: .close, payload: Data([0x03])))], code: 1002),
            violation(
                "§5.5.1", "a close reason that is not UTF-8",
                [.frame(Frame(opcode: .close, payload: Frame.closePayload(code: 1000, reason: Data([0xFF, 0xFE]))))],
                code: 1007),
            violation("§5.5", "a 124-byte close reason (126-byte payload)", [.frame(.close(code: 1000, reason: text(124)))], code: 1002),
        ]
        + ([1002, 1003, 1007, 1008, 1009, 1010, 1011, 3000, 3999, 4000, 4999] as [UInt16]).map { code in
            Case(
                section: "§7.4.1", name: "the valid close code \(code) is reported", steps: [.close(code: code, reason: "r")],
                outcome: .fails(.webSocketClosed, WebSocketCloseCode(code)), clientClose: code)
        }
        + ([0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535] as [UInt16]).map { code in
            violation("§7.4.1", "the invalid close code \(code)", [.frame(.close(code: code))], code: 1002)
        }

    // MARK: Message size limit (§10.4)

    static let messageSizeCases: [Case] = [
        accepted(
            "§10.4", "a message exactly at the limit", [.send(.binary(binary(1024)))], received: [.binary(binary(1024))],
            maximumMessageSize: 1024),
        violation("§10.4", "a message one byte over the limit", [.send(.binary(binary(1025)))], code: 1009, maximumMessageSize: 1024),
        violation("§10.4", "a text message over the limit", [.send(.text(text(2000)))], code: 1009, maximumMessageSize: 1024),
        violation(
            "§10.4", "fragments that add up to more than the limit", [.send(.binary(binary(1200)), fragmentSize: 400)], code: 1009,
            maximumMessageSize: 1024),
        // The length alone must fail it: the 2^62 bytes never come.
        violation("§10.4", "a frame header announcing 2^62 bytes", [.frame(Frame(opcode: .binary, declaredLength: 1 << 62))], code: 1009),
        violation("§10.4", "the default limit is 16 MiB", [.frame(Frame(opcode: .binary, declaredLength: (16 << 20) + 1))], code: 1009),
    ]

    // MARK: The connection ends without a close handshake (§7.1.5, §7.2.1)

    static let connectionEndsCases: [Case] = [
        Case(
            section: "§7.1.5", name: "FIN without a close frame", steps: [.send(.text("a")), .end(.close)], received: [.text("a")],
            outcome: .fails(.connectionLost, nil), clientClose: nil),
        Case(section: "§7.1.5", name: "RST without a close frame", steps: [.end(.reset)], outcome: .fails(.connectionLost, nil), clientClose: nil),
        Case(
            section: "§7.1.5", name: "FIN in the middle of a frame", steps: [.raw(Data([0x81, 0x05, 0x61])), .end(.close)],
            outcome: .fails(.connectionLost, nil), clientClose: nil),
    ]
}
