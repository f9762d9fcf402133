import Testing
import Foundation
@testable import Courier

/// Messages at the 16 MiB default limit, as a transport reads them: in 16 KiB pieces.
struct WebSocketLargeMessageTests {
    @Test func readsASixteenMebibyteFrameInPieces() throws {
        let size = WebSocketFrameParser.defaultMaximumMessageSize
        var stream = Data([0x82, 0x7F, 0, 0, 0, 0, UInt8(size >> 24), UInt8((size >> 16) & 0xFF), UInt8((size >> 8) & 0xFF), UInt8(size & 0xFF)])
        stream.append(Data(repeating: 0x5A, count: size))
        var machine = WebSocketStateMachine(keys: .fixed(0))
        _ = machine.handle(.handshakeCompleted)
        var actions: [WebSocketStateMachine.Action] = []
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + 16 * 1024)
            actions += machine.handle(.bytesReceived(stream.subdata(in: offset..<end)))
            offset = end
        }
        #expect(actions == [.deliver(.binary(Data(repeating: 0x5A, count: size)))])
        // One byte more fails from the header alone.
        var over = WebSocketStateMachine(keys: .fixed(0))
        _ = over.handle(.handshakeCompleted)
        let header = Data([0x82, 0x7F, 0, 0, 0, 0, 0x01, 0, 0, 1])
        #expect(
            over.handle(.bytesReceived(header)).contains(.fail(WebSocketProtocolViolation(.messageTooLarge(size: UInt64(size + 1), limit: size)))))
    }

    @Test func encodesASixteenMebibyteMessage() {
        var machine = WebSocketStateMachine(keys: .fixed(0x0102_0304))
        _ = machine.handle(.handshakeCompleted)
        let payload = Data(repeating: 0xA5, count: 16 << 20)
        guard case .send(let frame)? = machine.handle(.send(.binary(payload))).first else {
            Issue.record("nothing sent")
            return
        }
        #expect(frame.count == 14 + payload.count)
        #expect(Array(frame.prefix(14)) == [0x82, 0xFF, 0, 0, 0, 0, 0x01, 0, 0, 0, 1, 2, 3, 4])
        #expect(frame[14] == 0xA5 ^ 1 && frame[15] == 0xA5 ^ 2 && frame[frame.count - 1] == 0xA5 ^ 4)
    }
}
