import Testing
import Foundation
@testable @_spi(Transport) import Courier

/// permessage-deflate (RFC 7692): the negotiation (§7.1) and inflating the server's messages
/// (§7.2.2), bounded by the message limit.
@Suite(.enabled(if: WebSocketInflater.isAvailable, "zlib is not loadable"))
struct WebSocketDeflateTests {
    typealias Machine = WebSocketStateMachine

    // MARK: Negotiation

    @Test(
        arguments: [
            ("permessage-deflate", WebSocketDeflateParameters()),
            (
                "PerMessage-Deflate ; server_no_context_takeover; client_no_context_takeover",
                {
                    var p = WebSocketDeflateParameters(); p.serverNoContextTakeover = true; p.clientNoContextTakeover = true; return p
                }()
            ),
            (
                "permessage-deflate; server_max_window_bits=10; client_max_window_bits=\"15\"",
                {
                    var p = WebSocketDeflateParameters(); p.serverMaxWindowBits = 10; p.clientMaxWindowBits = 15; return p
                }()
            ),
        ] as [(String, WebSocketDeflateParameters)])
    func readsTheServersAgreement(response: String, expected: WebSocketDeflateParameters) throws {
        #expect(try WebSocketDeflateParameters(response: response) == expected)
    }

    @Test(arguments: [
        "x-webkit-deflate-frame",
        "permessage-deflate, permessage-deflate",
        "permessage-deflate; unknown",
        "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; server_no_context_takeover=1",
        "permessage-deflate; server_max_window_bits",
        "permessage-deflate; server_max_window_bits=7",
        "permessage-deflate; server_max_window_bits=16",
        "permessage-deflate; server_max_window_bits=010",
        "permessage-deflate; client_max_window_bits=abc",
    ])
    func refusesAnswersThatBreakSection7(response: String) {
        #expect(throws: WebSocketHandshakeFailure.unexpectedExtension(response)) { try WebSocketDeflateParameters(response: response) }
    }

    @Test func theHandshakeExposesTheAgreedParameters() throws {
        let request = try WebSocketHandshakeRequest(
            url: URL(string: "ws://example.com/")!, offersCompression: true,
            nonce: Array("the sample nonce".utf8))
        var reader = WebSocketResponseHeadReader(url: request.url)
        let text =
            "HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"
            + "Sec-WebSocket-Extensions: permessage-deflate; server_no_context_takeover\r\n\r\n"
        let result = try reader.read(Data(text.utf8))
        let head = try #require(result).head
        var expected = WebSocketDeflateParameters()
        expected.serverNoContextTakeover = true
        #expect(try request.verify(head).compression == expected)
    }

    // MARK: Inflating

    static func machine(limit: Int = 1 << 20, noContextTakeover: Bool = false) -> Machine {
        var parameters = WebSocketDeflateParameters()
        parameters.serverNoContextTakeover = noContextTakeover
        var machine = Machine(maximumMessageSize: limit, keys: .fixed(0), compression: parameters)
        _ = machine.handle(.handshakeCompleted)
        return machine
    }

    static let hello = Data([0xC1, 0x07, 0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])

    /// §7.2.3.1–§7.2.3.4: the RFC's own compressed "Hello" messages.
    @Test func inflatesTheRFCExamples() {
        var machine = Self.machine()
        #expect(machine.handle(.bytesReceived(Self.hello)) == [.deliver(.text("Hello"))])
        // §7.2.3.2: the second "Hello" refers back into the shared window.
        #expect(machine.handle(.bytesReceived(Data([0xC1, 0x05, 0xF2, 0x00, 0x11, 0x00, 0x00]))) == [.deliver(.text("Hello"))])
        // §7.2.3.3: a stored (uncompressed) block.
        #expect(
            machine.handle(.bytesReceived(Data([0xC1, 0x0B, 0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00])))
                == [.deliver(.text("Hello"))])
        // §7.2.3.4: a final block (BFINAL set); the next message starts a new stream.
        #expect(machine.handle(.bytesReceived(Data([0xC1, 0x08, 0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00]))) == [.deliver(.text("Hello"))])
        #expect(machine.handle(.bytesReceived(Self.hello)) == [.deliver(.text("Hello"))])
        // An uncompressed message (RSV1 clear) is fine too.
        #expect(machine.handle(.bytesReceived(Data([0x81, 0x02, 0x68, 0x69]))) == [.deliver(.text("hi"))])
    }

    /// §7.2.3.1 fragmented, with a ping between the fragments; UTF-8 checked on the inflated text.
    @Test func inflatesFragmentedMessages() {
        var machine = Self.machine()
        let compressed: [UInt8] = [
            58, 183, 235, 124, 207, 249, 230, 115, 123, 206, 109, 85, 120, 212, 180, 70, 193, 35, 53, 39, 39, 95, 71,
            33, 57, 63, 183, 160, 40, 181, 184, 56, 53, 69, 161, 60, 191, 40, 39, 69, 81, 225, 220, 0, 169, 3, 0,
        ]
        let text = String(repeating: "κόσμε € Hello, compressed world! ", count: 4)
        var actions: [Machine.Action] = []
        actions += machine.handle(.bytesReceived(Data([0x41, 20] + compressed[0..<20])))
        actions += machine.handle(.bytesReceived(Data([0x89, 0x00])))
        actions += machine.handle(.bytesReceived(Data([0x80, UInt8(compressed.count - 20)] + compressed[20...])))
        #expect(actions == [.send(WebSocketFrameEncoder.encode(opcode: .pong, payload: Data(), key: (0, 0, 0, 0))), .deliver(.text(text))])
    }

    /// A small message that inflates past the limit fails with 1009 without inflating it all.
    @Test func boundsTheInflatedSize() {
        var machine = Self.machine(limit: 64 * 1024)
        let bomb: [UInt8] = [236, 193, 49, 1, 0, 0, 0, 194, 160, 245, 79, 109, 8, 95, 160] + [UInt8](repeating: 0, count: 1016) + [62, 3]
        let frame = Data([0xC2, 0x7E, UInt8(bomb.count >> 8), UInt8(bomb.count & 0xFF)] + bomb)
        let actions = machine.handle(.bytesReceived(frame))
        let failure = WebSocketProtocolViolation(.messageTooLarge(size: 64 * 1024 + 1, limit: 64 * 1024))
        #expect(actions.contains(.fail(failure)))
        #expect(failure.closeCode == .messageTooBig)
        // The same message inflates whole under a limit it fits.
        var roomy = Self.machine(limit: 1 << 20)
        #expect(roomy.handle(.bytesReceived(frame)) == [.deliver(.binary(Data(count: 1 << 20)))])
    }

    @Test func failsDataThatIsNotDeflate() {
        var machine = Self.machine()
        let actions = machine.handle(.bytesReceived(Data([0xC2, 0x03, 0xFF, 0xFF, 0xFF])))
        #expect(actions.contains(.fail(WebSocketProtocolViolation(.invalidCompressedData))))
        #expect(WebSocketProtocolViolation(.invalidCompressedData).closeCode.rawValue == 1007)
    }

    /// With server_no_context_takeover each message starts with an empty window, so a reference
    /// back into the previous message is invalid.
    @Test func resetsTheWindowWithoutContextTakeover() {
        var machine = Self.machine(noContextTakeover: true)
        #expect(machine.handle(.bytesReceived(Self.hello)) == [.deliver(.text("Hello"))])
        #expect(machine.handle(.bytesReceived(Self.hello)) == [.deliver(.text("Hello"))])
        let actions = machine.handle(.bytesReceived(Data([0xC1, 0x05, 0xF2, 0x00, 0x11, 0x00, 0x00])))
        #expect(actions.contains(.fail(WebSocketProtocolViolation(.invalidCompressedData))))
    }

    /// RFC 7692 §6.1: RSV1 on a continuation or control frame, or without the extension, is 1002.
    @Test func refusesRSV1WhereItHasNoMeaning() {
        var machine = Self.machine()
        let actions = machine.handle(.bytesReceived(Data([0x41, 0x00, 0xC0, 0x00])))
        #expect(actions.contains(.fail(WebSocketProtocolViolation(.reservedBits))))
        var plain = Machine(keys: .fixed(0))
        _ = plain.handle(.handshakeCompleted)
        #expect(plain.handle(.bytesReceived(Self.hello)).contains(.fail(WebSocketProtocolViolation(.reservedBits))))
    }

    // MARK: Compressing

    /// The payload of a frame the machine sent with the all-zero key, and its RSV1 bit.
    static func sent(_ actions: [Machine.Action]) -> (rsv1: Bool, payload: [UInt8])? {
        guard case .send(let frame)? = actions.first else { return nil }
        let length = Int(frame[1] & 0x7F)
        let start = length == 126 ? 8 : length == 127 ? 14 : 6
        return (frame[0] & 0x40 != 0, Array(frame[start...]))
    }

    static func compressing(_ configure: (inout WebSocketDeflateParameters) -> Void = { _ in }, outgoing: Bool = true) -> Machine {
        var parameters = WebSocketDeflateParameters()
        configure(&parameters)
        var machine = Machine(keys: .fixed(0), compression: parameters, compressesOutgoing: outgoing)
        _ = machine.handle(.handshakeCompleted)
        return machine
    }

    /// §7.2.1 and §7.2.3.1: "Hello" compresses to the RFC's bytes, RSV1 set, the tail removed;
    /// the second message refers back into the window (§7.2.3.2) unless client_no_context_takeover.
    @Test(.enabled(if: WebSocketDeflater.isAvailable, "zlib has no compressor"))
    func compressesOutgoingMessages() throws {
        var machine = Self.compressing()
        let first = try #require(Self.sent(machine.handle(.send(.text("Hello")))))
        #expect(first.rsv1 && first.payload == [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00])
        let second = try #require(Self.sent(machine.handle(.send(.text("Hello")))))
        #expect(second.rsv1 && second.payload.count < first.payload.count)

        var fresh = Self.compressing { $0.clientNoContextTakeover = true }
        let one = try #require(Self.sent(fresh.handle(.send(.text("Hello")))))
        let two = try #require(Self.sent(fresh.handle(.send(.text("Hello")))))
        #expect(one.payload == two.payload)

        // §7.2.3.6: an empty message is one 0x00 byte.
        let empty = try #require(Self.sent(machine.handle(.send(.binary(Data())))))
        #expect(empty.rsv1 && empty.payload == [0x00])
        // Control frames are never compressed.
        let ping = try #require(Self.sent(machine.handle(.sendPing(Data("p".utf8)))))
        #expect(!ping.rsv1 && ping.payload == [0x70])
    }

    /// What the client compresses, an inflater with the same parameters reads back, for sizes
    /// around the chunk size and with and without context takeover.
    @Test(.enabled(if: WebSocketDeflater.isAvailable, "zlib has no compressor"))
    func roundTripsThroughTheInflater() throws {
        for takeover in [true, false] {
            var machine = Self.compressing {
                $0.clientNoContextTakeover = !takeover; $0.clientMaxWindowBits = 10
            }
            let inflater = try #require(WebSocketInflater(resetsPerMessage: !takeover))
            for size in [1, 100, 65_535, 65_536, 200_000] {
                let message = Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 * 7) ^ ($0 >> 5)) })
                let frame = try #require(Self.sent(machine.handle(.send(.binary(message)))))
                #expect(frame.rsv1)
                #expect(try inflater.inflate(Data(frame.payload), isLast: true, limit: 1 << 20) == message, "\(size) bytes, takeover \(takeover)")
            }
        }
    }

    @Test func sendsUncompressedWhenAskedOrWhenTheWindowIsTooSmall() throws {
        var off = Self.compressing(outgoing: false)
        #expect(try #require(Self.sent(off.handle(.send(.text("Hello"))))) == (false, Array("Hello".utf8)))
        var tiny = Self.compressing { $0.clientMaxWindowBits = 8 }
        #expect(try #require(Self.sent(tiny.handle(.send(.text("Hello"))))) == (false, Array("Hello".utf8)))
    }
}
