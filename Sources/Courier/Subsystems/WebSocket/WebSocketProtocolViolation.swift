/// Why the peer's bytes broke RFC 6455, with the close code the connection must be failed with.
///
/// The protocol core reports every failure as this type; the session maps it to a `CourierError`.
struct WebSocketProtocolViolation: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    enum Reason: Sendable, Hashable {
        /// A server frame had its MASK bit set (§5.1).
        case maskedFrame
        /// RSV1, RSV2 or RSV3 was set with no extension negotiated to give it a meaning (§5.2),
        /// or RSV1 on a control or continuation frame with permessage-deflate (RFC 7692 §6).
        case reservedBits
        /// The opcode is one of the reserved values 3–7 or 0xB–0xF (§5.2).
        case reservedOpcode(UInt8)
        /// A control frame carried more than 125 bytes (§5.5).
        case controlFrameTooLong(UInt64)
        /// A control frame had FIN clear (§5.5).
        case fragmentedControlFrame
        /// A 64-bit payload length had its most significant bit set (§5.2).
        case invalidLength
        /// A continuation frame arrived with no fragmented message in progress (§5.4).
        case unexpectedContinuation
        /// A new text or binary frame arrived while a fragmented message was in progress (§5.4).
        case expectedContinuation
        /// A frame or message was longer than the configured maximum; the payload size that was announced or reached.
        case messageTooLarge(size: UInt64, limit: Int)
        /// A text message (or a close reason) was not valid UTF-8 (§8.1).
        case invalidUTF8
        /// A close frame's payload was one byte long (§5.5.1).
        case invalidClosePayload
        /// A close frame carried a code that may not be sent (§7.4).
        case invalidCloseCode(UInt16)
        /// A compressed message could not be inflated (RFC 7692 §7.2.2).
        case invalidCompressedData
    }

    /// What was wrong.
    let reason: Reason

    init(_ reason: Reason) { self.reason = reason }

    /// The close code to fail the connection with (§7.4.1).
    var closeCode: WebSocketCloseCode {
        switch reason {
        case .messageTooLarge: .messageTooBig
        case .invalidUTF8, .invalidCompressedData: .invalidFramePayloadData
        default: .protocolError
        }
    }

    var description: String {
        switch reason {
        case .maskedFrame: "the server sent a masked frame"
        case .reservedBits: "a frame set a reserved bit that no negotiated extension defines"
        case .reservedOpcode(let opcode): "a frame used the reserved opcode 0x\(String(opcode, radix: 16, uppercase: true))"
        case .controlFrameTooLong(let length): "a control frame carried \(length) bytes (at most 125 are allowed)"
        case .fragmentedControlFrame: "a control frame was fragmented"
        case .invalidLength: "a frame's 64-bit length had its most significant bit set"
        case .unexpectedContinuation: "a continuation frame arrived with no message in progress"
        case .expectedContinuation: "a new message started before the fragmented one ended"
        case .messageTooLarge(let size, let limit): "a message of at least \(size) bytes is larger than the limit of \(limit) bytes"
        case .invalidUTF8: "a text message was not valid UTF-8"
        case .invalidClosePayload: "a close frame had a one-byte payload"
        case .invalidCloseCode(let code): "a close frame carried the code \(code), which may not be sent"
        case .invalidCompressedData: "a compressed message could not be decompressed"
        }
    }
}
