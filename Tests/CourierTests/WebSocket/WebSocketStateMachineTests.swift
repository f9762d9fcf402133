import Testing
import Foundation
@testable import Courier

/// The protocol state machine as event → actions tables, in the spirit of the Autobahn|Testsuite
/// client cases that need no server; each case names the RFC 6455 section it checks.
struct WebSocketStateMachineTests {
    typealias Machine = WebSocketStateMachine
    typealias Step = (Machine.Event, [Machine.Action], Machine.State)

    /// A server frame: unmasked.
    static func server(_ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true) -> Data {
        precondition(payload.count < 126)
        return Data([(fin ? 0x80 : 0) | opcode, UInt8(payload.count)] + payload)
    }

    static func server(_ opcode: UInt8, _ text: String, fin: Bool = true) -> Data { server(opcode, Array(text.utf8), fin: fin) }

    /// A client frame as the machine encodes it with the all-zero key (masking then changes nothing).
    static func client(_ opcode: WebSocketOpcode, _ payload: [UInt8] = []) -> Data {
        WebSocketFrameEncoder.encode(opcode: opcode, payload: Data(payload), key: (0, 0, 0, 0))
    }

    static func client(_ opcode: WebSocketOpcode, _ text: String) -> Data { client(opcode, Array(text.utf8)) }

    static func closePayload(_ code: UInt16, _ reason: String = "") -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8)
    }

    static func violation(_ reason: WebSocketProtocolViolation.Reason) -> WebSocketProtocolViolation {
        WebSocketProtocolViolation(reason)
    }

    /// The actions of failing with `reason` while open: our close frame, the failure, the close.
    static func failing(_ reason: WebSocketProtocolViolation.Reason, after: [Machine.Action] = []) -> [Machine.Action] {
        let failure = violation(reason)
        return after + [.send(client(.close, closePayload(failure.closeCode.rawValue))), .fail(failure), .closeConnection]
    }

    static func failed(_ reason: WebSocketProtocolViolation.Reason) -> Machine.State { .closed(.failed(violation(reason))) }

    /// Runs `steps` on a fresh machine that has completed its handshake.
    func run(limit: Int = 1 << 20, _ steps: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        var machine = Machine(maximumMessageSize: limit, keys: .fixed(0))
        _ = machine.handle(.handshakeCompleted)
        for (index, (event, actions, state)) in steps.enumerated() {
            let got = machine.handle(event)
            #expect(got == actions, "step \(index)", sourceLocation: sourceLocation)
            #expect(machine.state == state, "step \(index)", sourceLocation: sourceLocation)
        }
    }

    @Test func connectsThenSendsMessagesAsMaskedFrames() {
        var machine = Machine(keys: .fixed(0))
        #expect(machine.state == .connecting)
        #expect(machine.handle(.send(.text("early"))) == [.refused(.notOpen)])
        #expect(machine.handle(.handshakeCompleted) == [])
        #expect(machine.state == .open)
        #expect(machine.handle(.send(.text("hi"))) == [.send(Self.client(.text, "hi"))])
        #expect(machine.handle(.send(.binary(Data([1, 2])))) == [.send(Self.client(.binary, [1, 2]))])
        #expect(machine.handle(.sendPing(Data([9]))) == [.send(Self.client(.ping, [9]))])
        #expect(machine.handle(.sendPong(Data())) == [.send(Self.client(.pong))])
        #expect(machine.handle(.sendPing(Data(count: 126))) == [.refused(.controlPayloadTooLong(126))])
    }

    /// §5.4, Autobahn 5.x: fragments reassembled, control frames between them answered at once.
    @Test func reassemblesFragmentsWithInterleavedPings() {
        run([
            (.bytesReceived(Self.server(0x1, "Hel", fin: false)), [], .open),
            (.bytesReceived(Self.server(0x9, "ping")), [.send(Self.client(.pong, "ping"))], .open),
            (.bytesReceived(Self.server(0xA, "pong")), [.pongReceived(Data("pong".utf8))], .open),
            (.bytesReceived(Self.server(0x0, "l", fin: false)), [], .open),
            (.bytesReceived(Self.server(0x0, "o")), [.deliver(.text("Hello"))], .open),
            (
                .bytesReceived(Self.server(0x2, [1], fin: false) + Self.server(0x9) + Self.server(0x0, [2])),
                [.send(Self.client(.pong)), .deliver(.binary(Data([1, 2])))], .open
            ),
        ])
    }

    /// §5.4: an empty text message and empty fragments are messages too (Autobahn 1.1.1, 5.18).
    @Test func deliversEmptyMessagesAndEmptyFragments() {
        run([
            (.bytesReceived(Self.server(0x1)), [.deliver(.text(""))], .open),
            (.bytesReceived(Self.server(0x2, fin: false) + Self.server(0x0, fin: false) + Self.server(0x0)), [.deliver(.binary(Data()))], .open),
        ])
    }

    /// §5.5.1, §7.1.2: the server closes; the client echoes the code and waits for the TCP close.
    @Test func answersTheServersCloseAndEndsCleanly() {
        let peer = WebSocketCloseFrame(code: .normalClosure, reason: "bye")
        let echo = WebSocketCloseFrame(code: .normalClosure)
        run([
            (
                .bytesReceived(Self.server(0x8, Self.closePayload(1000, "bye"))),
                [.closeReceived(peer), .send(Self.client(.close, Self.closePayload(1000)))], .closing(sent: echo, received: peer)
            ),
            (.send(.text("late")), [.refused(.notOpen)], .closing(sent: echo, received: peer)),
            (.bytesReceived(Self.server(0x1, "ignored")), [], .closing(sent: echo, received: peer)),
            (.connectionClosed, [.closed(.clean(peer))], .closed(.clean(peer))),
            (.connectionClosed, [], .closed(.clean(peer))),
        ])
    }

    /// §7.1.2: the client closes, keeps reading until the server's close, then the TCP close.
    @Test func closesFirstThenWaitsForTheServersClose() {
        let ours = WebSocketCloseFrame(code: .goingAway, reason: "done")
        let peer = WebSocketCloseFrame(code: .goingAway)
        run([
            (.close(.goingAway, reason: "done"), [.send(Self.client(.close, Self.closePayload(1001, "done")))], .closing(sent: ours, received: nil)),
            (.close(.normalClosure, reason: ""), [], .closing(sent: ours, received: nil)),
            (.bytesReceived(Self.server(0x1, "still")), [.deliver(.text("still"))], .closing(sent: ours, received: nil)),
            // No pong after our close frame (§5.5.1: nothing more is sent).
            (.bytesReceived(Self.server(0x9)), [], .closing(sent: ours, received: nil)),
            (
                .bytesReceived(Self.server(0x8, Self.closePayload(1001)) + Self.server(0x1, "after")),
                [.closeReceived(peer)], .closing(sent: ours, received: peer)
            ),
            (.connectionClosed, [.closed(.clean(peer))], .closed(.clean(peer))),
        ])
    }

    /// §7.1.5: a close frame with no body is answered with none and reported as 1005.
    @Test func answersAnEmptyCloseWithAnEmptyClose() {
        let peer = WebSocketCloseFrame(code: .noStatusReceived)
        run([
            (.bytesReceived(Self.server(0x8)), [.closeReceived(peer), .send(Self.client(.close))], .closing(sent: peer, received: peer))
        ])
        #expect(WebSocketCloseOutcome.clean(peer).code.rawValue == 1005)
    }

    /// §7.1.5: the connection ending without a close handshake is abnormal (1006).
    @Test func reportsAnAbruptEndAsAbnormal() {
        run([(.connectionClosed, [.closed(.abnormal)], .closed(.abnormal))])
        run([
            (
                .close(.normalClosure, reason: ""), [.send(Self.client(.close, Self.closePayload(1000)))],
                .closing(sent: WebSocketCloseFrame(code: .normalClosure), received: nil)
            ),
            (.connectionClosed, [.closed(.abnormal)], .closed(.abnormal)),
        ])
        #expect(WebSocketCloseOutcome.abnormal.code.rawValue == 1006)
    }

    /// §7.4.1/§7.4.2, Autobahn 7.7 and 7.9: which received codes are accepted.
    @Test(
        arguments: [
            (1000, true), (1001, true), (1002, true), (1003, true), (1007, true), (1008, true), (1009, true), (1010, true),
            (1011, true), (1012, true), (1013, true), (1014, true), (3000, true), (3999, true), (4000, true), (4999, true),
            (0, false), (999, false), (1004, false), (1005, false), (1006, false), (1015, false), (1016, false), (1100, false),
            (2000, false), (2999, false), (5000, false), (65_535, false),
        ] as [(UInt16, Bool)])
    func validatesReceivedCloseCodes(code: UInt16, valid: Bool) {
        let peer = WebSocketCloseFrame(code: WebSocketCloseCode(code))
        if valid {
            run([
                (
                    .bytesReceived(Self.server(0x8, Self.closePayload(code))),
                    [.closeReceived(peer), .send(Self.client(.close, Self.closePayload(code)))], .closing(sent: peer, received: peer)
                )
            ])
        } else {
            run([
                (
                    .bytesReceived(Self.server(0x8, Self.closePayload(code))), Self.failing(.invalidCloseCode(code)),
                    Self.failed(.invalidCloseCode(code))
                )
            ])
        }
    }

    /// §5.5.1, Autobahn 7.3 and 7.5: a one-byte close body, a reason that is not UTF-8, a long close.
    @Test func rejectsMalformedCloseFrames() {
        run([(.bytesReceived(Self.server(0x8, [0x03])), Self.failing(.invalidClosePayload), Self.failed(.invalidClosePayload))])
        run([
            (
                .bytesReceived(Self.server(0x8, Self.closePayload(1000) + [0xCE, 0xBA, 0xE1, 0xBD, 0xB9, 0xCF, 0x83, 0xED, 0xA0, 0x80])),
                Self.failing(.invalidUTF8), Self.failed(.invalidUTF8)
            )
        ])
        run([(.bytesReceived(Data([0x88, 0x7E, 0x00, 0x7E])), Self.failing(.controlFrameTooLong(126)), Self.failed(.controlFrameTooLong(126)))])
    }

    /// §7.4 and §5.5.1: what the application may send in a close frame.
    @Test func refusesCloseCodesAndReasonsThatMayNotBeSent() {
        run([
            (.close(.noStatusReceived, reason: ""), [.refused(.invalidCloseCode(.noStatusReceived))], .open),
            (.close(.abnormalClosure, reason: ""), [.refused(.invalidCloseCode(.abnormalClosure))], .open),
            (.close(.tlsHandshakeFailure, reason: ""), [.refused(.invalidCloseCode(.tlsHandshakeFailure))], .open),
            (.close(WebSocketCloseCode(2500), reason: ""), [.refused(.invalidCloseCode(WebSocketCloseCode(2500)))], .open),
            (.close(.normalClosure, reason: String(repeating: "é", count: 62)), [.refused(.closeReasonTooLong(124))], .open),
        ])
        let reason = String(repeating: "x", count: 123)
        run([
            (
                .close(.normalClosure, reason: reason), [.send(Self.client(.close, Self.closePayload(1000, reason)))],
                .closing(sent: WebSocketCloseFrame(code: .normalClosure, reason: reason), received: nil)
            )
        ])
    }

    /// §8.1, Autobahn 6.x: invalid UTF-8 fails at once with 1007, even inside an unfinished
    /// message, and a code point split across fragments is fine.
    @Test(
        arguments: [
            ("valid, split inside the euro sign", [[0xE2], [0x82, 0xAC]] as [[UInt8]], true),
            ("valid, four-byte split three ways", [[0xF0], [0x9F, 0x98], [0x80]], true),
            ("valid, empty fragments between", [[0xCE], [], [0xBA]], true),
            ("invalid in the first of three fragments", [[0x61, 0xFF], [0x62], [0x63]], false),
            ("surrogate split across fragments", [[0xED], [0xA0, 0x80], [0x61]], false),
            ("overlong split across fragments", [[0xE0], [0x80], [0xAF]], false),
            ("above U+10FFFF split", [[0xF4, 0x90], [0x80, 0x80]], false),
            ("truncated at the message end", [[0x61], [0xE2, 0x82]], false),
            ("κόσμε then invalid (Autobahn 6.3.2)", [Array("κόσμε".utf8), [0xED, 0xA0, 0x80], Array("edited".utf8)], false),
        ] as [(String, [[UInt8]], Bool)])
    func validatesTextAcrossFragments(name: String, fragments: [[UInt8]], valid: Bool) {
        var machine = Machine(keys: .fixed(0))
        _ = machine.handle(.handshakeCompleted)
        var delivered: [Machine.Action] = []
        var failedAtFragment: Int?
        for (index, fragment) in fragments.enumerated() {
            let opcode: UInt8 = index == 0 ? 0x1 : 0x0
            let actions = machine.handle(.bytesReceived(Self.server(opcode, fragment, fin: index == fragments.count - 1)))
            if actions.contains(.fail(Self.violation(.invalidUTF8))) {
                failedAtFragment = index
                #expect(actions == Self.failing(.invalidUTF8), "\(name)")
                break
            }
            delivered += actions
        }
        if valid {
            #expect(failedAtFragment == nil, "\(name)")
            #expect(delivered == [.deliver(.text(String(decoding: fragments.joined(), as: UTF8.self)))], "\(name)")
        } else {
            // Fails at the fragment holding the first byte that cannot be valid, not at the end.
            var validator = WebSocketUTF8Validator()
            let expected = fragments.indices.first { !validator.validate(Data(fragments[$0])) } ?? fragments.count - 1
            #expect(failedAtFragment == expected, "\(name)")
            #expect(machine.state == Self.failed(.invalidUTF8))
        }
    }

    /// §10.4: a message over the limit fails with 1009 from the header that crosses it.
    @Test func failsAMessageOverTheLimitWith1009() {
        run(
            limit: 10,
            [
                (.bytesReceived(Self.server(0x2, [UInt8](repeating: 0, count: 6), fin: false)), [], .open),
                (
                    .bytesReceived(Data([0x80, 0x06])), Self.failing(.messageTooLarge(size: 12, limit: 10)),
                    Self.failed(.messageTooLarge(size: 12, limit: 10))
                ),
            ])
        run(limit: 10, [(.bytesReceived(Self.server(0x1, "0123456789")), [.deliver(.text("0123456789"))], .open)])
    }

    /// §5.2, §5.4, Autobahn 3.x, 4.x and 5.x: framing violations fail with 1002; what came before
    /// in the same read is still delivered, nothing after it is.
    @Test(
        arguments: [
            ([0xC1, 0x00], WebSocketProtocolViolation.Reason.reservedBits),
            ([0x83, 0x00], .reservedOpcode(3)),
            ([0x8B, 0x00], .reservedOpcode(0xB)),
            ([0x09, 0x00], .fragmentedControlFrame),
            ([0x80, 0x00], .unexpectedContinuation),
            ([0x81, 0x81, 0, 0, 0, 0, 0x61], .maskedFrame),
        ] as [([UInt8], WebSocketProtocolViolation.Reason)])
    func failsFramingViolationsAfterDeliveringWhatCameBefore(bad: [UInt8], reason: WebSocketProtocolViolation.Reason) {
        run([
            (
                .bytesReceived(Self.server(0x1, "ok") + Data(bad) + Self.server(0x1, "never")),
                Self.failing(reason, after: [.deliver(.text("ok"))]), Self.failed(reason)
            )
        ])
    }

    @Test func startingANewMessageInsideAFragmentedOneFails() {
        run([
            (.bytesReceived(Self.server(0x1, "a", fin: false)), [], .open),
            (.bytesReceived(Self.server(0x1, "b")), Self.failing(.expectedContinuation), Self.failed(.expectedContinuation)),
            (.bytesReceived(Self.server(0x1, "c")), [], Self.failed(.expectedContinuation)),
            (.connectionClosed, [], Self.failed(.expectedContinuation)),
        ])
    }

    /// §7.1.7: a violation after our close frame sends no second close frame.
    @Test func failsWithoutASecondCloseFrameWhenClosing() {
        let ours = WebSocketCloseFrame(code: .normalClosure)
        run([
            (.close(.normalClosure, reason: ""), [.send(Self.client(.close, Self.closePayload(1000)))], .closing(sent: ours, received: nil)),
            (.bytesReceived(Data([0x83, 0x00])), [.fail(Self.violation(.reservedOpcode(3))), .closeConnection], Self.failed(.reservedOpcode(3))),
        ])
    }

    /// Feeding a stream whole or one byte at a time gives the same actions.
    @Test func splitReadsGiveTheSameActions() {
        let stream =
            Self.server(0x1, "Hel", fin: false) + Self.server(0x9, "p") + Self.server(0x0, "lo")
            + Data([0x82, 0x7E, 0x00, 0x80]) + Data(repeating: 5, count: 128) + Self.server(0x8, Self.closePayload(1000, "x"))
        var whole = Machine(keys: .fixed(0))
        _ = whole.handle(.handshakeCompleted)
        let wholeActions = whole.handle(.bytesReceived(stream))
        var split = Machine(keys: .fixed(0))
        _ = split.handle(.handshakeCompleted)
        let splitActions = stream.flatMap { split.handle(.bytesReceived(Data([$0]))) }
        #expect(wholeActions == splitActions)
        #expect(whole.state == split.state)
        #expect(wholeActions.count == 5)
    }
}
