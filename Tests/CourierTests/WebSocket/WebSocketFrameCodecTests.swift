import Testing
import Foundation
import CourierLocking
@testable import Courier

/// The frame codec (RFC 6455 §5): client frames encoded and masked, server frames parsed from any
/// split, every header rule enforced with its close code.
struct WebSocketFrameCodecTests {
    static let key: (UInt8, UInt8, UInt8, UInt8) = (0x37, 0xFA, 0x21, 0x3D)

    static func bytes(_ values: [UInt8]) -> Data { Data(values) }

    /// Parses `input` whole, then one byte at a time; both must give the same output.
    static func parse(
        _ input: Data, limit: Int = WebSocketFrameParser.defaultMaximumMessageSize,
        compression: Bool = false
    ) -> WebSocketFrameParser.Output {
        var whole = WebSocketFrameParser(maximumMessageSize: limit, allowsCompressedMessages: compression)
        let wholeOutput = whole.parse(input)
        var split = WebSocketFrameParser(maximumMessageSize: limit, allowsCompressedMessages: compression)
        var splitOutput = WebSocketFrameParser.Output()
        for byte in input {
            let output = split.parse(Data([byte]))
            splitOutput.frames += output.frames
            if let failure = output.failure { splitOutput.failure = failure; break }
        }
        #expect(wholeOutput == splitOutput, "whole and byte-by-byte parsing differ")
        return wholeOutput
    }

    // MARK: Encoding

    /// §5.7: "A single-frame masked text message" — the RFC's own example bytes.
    @Test func encodesTheRFCMaskedHelloExample() {
        let frame = WebSocketFrameEncoder.encode(opcode: .text, payload: Data("Hello".utf8), key: Self.key)
        #expect(Array(frame) == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
    }

    /// §5.2: the shortest length encoding, MASK always set, RSV1 and FIN as asked.
    @Test(
        arguments: [
            (0, [0x82, 0x80]),
            (125, [0x82, 0x80 | 125]),
            (126, [0x82, 0xFE, 0x00, 0x7E]),
            (65_535, [0x82, 0xFE, 0xFF, 0xFF]),
            (65_536, [0x82, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0]),
        ] as [(Int, [UInt8])])
    func encodesSevenSixteenAndSixtyFourBitLengths(length: Int, header: [UInt8]) {
        let payload = Data((0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let frame = WebSocketFrameEncoder.encode(opcode: .binary, payload: payload, key: Self.key)
        #expect(Array(frame.prefix(header.count)) == header)
        #expect(Array(frame[header.count..<(header.count + 4)]) == [0x37, 0xFA, 0x21, 0x3D])
        var body = Data(frame[(header.count + 4)...])
        #expect(body.count == length)
        body.withUnsafeMutableBytes { WebSocketFrameEncoder.mask($0, key: Self.key) }
        #expect(body == payload)
    }

    @Test func setsFinAndRSV1AsAsked() {
        let first = WebSocketFrameEncoder.encode(opcode: .text, payload: Data(), fin: false, rsv1: true, key: Self.key)
        #expect(first[0] == 0x41)
        let last = WebSocketFrameEncoder.encode(opcode: .continuation, payload: Data(), fin: true, key: Self.key)
        #expect(last[0] == 0x80)
    }

    @Test func takesAFreshKeyPerFrameFromTheSource() {
        let counter = Counter()
        let keys = WebSocketMaskingKeySource { counter.next() }
        let one = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping), keys: keys)
        let two = WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping), keys: keys)
        #expect(Array(one[2...]) == [0, 0, 0, 1])
        #expect(Array(two[2...]) == [0, 0, 0, 2])
        let random = WebSocketMaskingKeySource.random
        let keysSeen = Set((0..<8).map { _ in WebSocketFrameEncoder.encode(WebSocketFrame(opcode: .ping), keys: random) })
        #expect(keysSeen.count > 1)
    }

    /// Masking a payload of every length near the 8-byte stride round-trips.
    @Test func maskingTwiceUnmasksEveryLength() {
        for length in 0..<40 {
            let original = Data((0..<length).map { UInt8($0) })
            var data = original
            data.withUnsafeMutableBytes { WebSocketFrameEncoder.mask($0, key: Self.key) }
            if length > 0 { #expect(data != original) }
            data.withUnsafeMutableBytes { WebSocketFrameEncoder.mask($0, key: Self.key) }
            #expect(data == original)
        }
    }

    // MARK: Parsing

    /// §5.7's unmasked examples, parsed whole and byte by byte.
    @Test func parsesTheRFCExamples() {
        let hello = Data("Hello".utf8)
        #expect(Self.parse(Self.bytes([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F])).frames == [WebSocketFrame(opcode: .text, payload: hello)])
        let fragmented = Self.parse(Self.bytes([0x01, 0x03, 0x48, 0x65, 0x6C, 0x80, 0x02, 0x6C, 0x6F]))
        #expect(
            fragmented.frames == [
                WebSocketFrame(fin: false, opcode: .text, payload: Data("Hel".utf8)),
                WebSocketFrame(opcode: .continuation, payload: Data("lo".utf8)),
            ])
        #expect(Self.parse(Self.bytes([0x8A, 0x05] + Array(hello))).frames == [WebSocketFrame(opcode: .pong, payload: hello)])
        let twoFiftySix = Data(repeating: 7, count: 256)
        #expect(Self.parse(Self.bytes([0x82, 0x7E, 0x01, 0x00]) + twoFiftySix).frames == [WebSocketFrame(opcode: .binary, payload: twoFiftySix)])
        let sixtyFourK = Data(repeating: 9, count: 65_536)
        let big = Self.parse(Self.bytes([0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0]) + sixtyFourK)
        #expect(big.frames == [WebSocketFrame(opcode: .binary, payload: sixtyFourK)])
    }

    @Test func returnsEmptyFramesAndControlFramesBetweenFragments() {
        let input = Self.bytes([0x01, 0x00, 0x89, 0x01, 0x41, 0x80, 0x00])
        #expect(
            Self.parse(input).frames == [
                WebSocketFrame(fin: false, opcode: .text),
                WebSocketFrame(opcode: .ping, payload: Data("A".utf8)),
                WebSocketFrame(opcode: .continuation),
            ])
    }

    /// Every header rule, its reason and its close code (§5.1, §5.2, §5.4, §5.5, §7.4.1).
    @Test(
        arguments: [
            ("masked server frame §5.1", [0x81, 0x85, 1, 2, 3, 4, 0], .maskedFrame, 1002),
            ("RSV1 without extension §5.2", [0xC1, 0x00], .reservedBits, 1002),
            ("RSV2 §5.2", [0xA1, 0x00], .reservedBits, 1002),
            ("RSV3 §5.2", [0x91, 0x00], .reservedBits, 1002),
            ("opcode 3 §5.2", [0x83, 0x00], .reservedOpcode(3), 1002),
            ("opcode 7 §5.2", [0x87, 0x00], .reservedOpcode(7), 1002),
            ("opcode 0xB §5.2", [0x8B, 0x00], .reservedOpcode(0xB), 1002),
            ("opcode 0xF §5.2", [0x8F, 0x00], .reservedOpcode(0xF), 1002),
            ("ping of 126 bytes §5.5", [0x89, 0x7E, 0x00, 0x7E], .controlFrameTooLong(126), 1002),
            ("close with 64-bit length §5.5", [0x88, 0x7F], .controlFrameTooLong(127), 1002),
            ("fragmented ping §5.5", [0x09, 0x00], .fragmentedControlFrame, 1002),
            ("64-bit length top bit §5.2", [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0], .invalidLength, 1002),
            ("continuation first §5.4", [0x80, 0x00], .unexpectedContinuation, 1002),
            ("new message inside fragmented one §5.4", [0x01, 0x00, 0x81, 0x00], .expectedContinuation, 1002),
            ("frame over the limit §10.4", [0x82, 0x7E, 0x00, 0xFF], .messageTooLarge(size: 255, limit: 100), 1009),
            (
                "message over the limit across fragments §10.4", [0x02, 0x3C] + [UInt8](repeating: 0, count: 60) + [0x80, 0x3C],
                .messageTooLarge(size: 120, limit: 100), 1009
            ),
        ] as [(String, [UInt8], WebSocketProtocolViolation.Reason, UInt16)])
    func rejectsBrokenHeaders(name: String, input: [UInt8], reason: WebSocketProtocolViolation.Reason, code: UInt16) {
        let output = Self.parse(Data(input), limit: 100)
        #expect(output.failure == WebSocketProtocolViolation(reason), "\(name)")
        #expect(output.failure?.closeCode.rawValue == code, "\(name)")
    }

    /// RFC 7692 §6: with permessage-deflate, RSV1 only on the first frame of a data message.
    @Test func allowsRSV1OnlyOnTheFirstDataFrameWithCompression() {
        #expect(Self.parse(Self.bytes([0xC1, 0x00]), compression: true).failure == nil)
        #expect(Self.parse(Self.bytes([0x41, 0x00, 0x80, 0x00]), compression: true).failure == nil)
        #expect(Self.parse(Self.bytes([0x41, 0x00, 0xC0, 0x00]), compression: true).failure == WebSocketProtocolViolation(.reservedBits))
        #expect(Self.parse(Self.bytes([0xC9, 0x00]), compression: true).failure == WebSocketProtocolViolation(.reservedBits))
    }

    /// Frames before a violation are still returned; afterwards the parser stays failed.
    @Test func keepsFramesBeforeAViolationAndStaysFailed() {
        var parser = WebSocketFrameParser()
        let output = parser.parse(Self.bytes([0x89, 0x00, 0x83, 0x00, 0x89, 0x00]))
        #expect(output.frames == [WebSocketFrame(opcode: .ping)])
        #expect(output.failure == WebSocketProtocolViolation(.reservedOpcode(3)))
        let after = parser.parse(Self.bytes([0x89, 0x00]))
        #expect(after.frames.isEmpty && after.failure == output.failure)
    }

    /// A header announcing a message over the limit fails before any of its payload is read.
    @Test func failsAnOversizedFrameFromItsHeaderAlone() {
        var parser = WebSocketFrameParser(maximumMessageSize: 1024)
        let output = parser.parse(Self.bytes([0x82, 0x7F, 0, 0, 0, 0, 0x40, 0, 0, 0]))
        #expect(output.failure == WebSocketProtocolViolation(.messageTooLarge(size: 1 << 30, limit: 1024)))
    }
}

/// A thread-safe counter for key sources in tests.
private final class Counter: Sendable {
    private let value = Locked<UInt32>(0)
    func next() -> UInt32 {
        value.withLock { value in
            value += 1
            return value
        }
    }
}
