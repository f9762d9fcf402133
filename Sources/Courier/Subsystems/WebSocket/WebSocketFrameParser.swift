import Foundation

/// Reads server frames (RFC 6455 §5.2) from bytes fed in chunks of any size, checking every rule
/// a frame's header can break as soon as the bytes that break it arrive.
///
/// Memory is bounded: it keeps at most one frame header (10 bytes) and the payload of the frame
/// being read, which the limit caps; a frame is returned as soon as its last byte arrives.
/// It also follows data frames across fragments, so that a message's size is checked against the
/// limit from each fragment's header, before its payload is read.
/// After a violation it stays failed and reads nothing more.
struct WebSocketFrameParser: Sendable {
    /// What one call to ``parse(_:)`` read: the frames completed by the chunk, in order, and the
    /// violation that stopped it, if any (the frames before it are still valid).
    struct Output: Sendable, Hashable {
        var frames: [WebSocketFrame] = []
        var failure: WebSocketProtocolViolation?
    }

    /// The default limit on a frame and on a message: 16 MiB.
    static let defaultMaximumMessageSize = 16 * 1024 * 1024

    /// The largest frame payload and the largest data message (the sum of its fragments) accepted.
    let maximumMessageSize: Int
    /// Whether RSV1 may be set on the first frame of a data message (permessage-deflate negotiated).
    let allowsCompressedMessages: Bool

    private struct Header {
        var fin: Bool
        var rsv1: Bool
        var opcode: WebSocketOpcode
        var length: Int
    }

    /// The header bytes read so far (at most 10: servers never send a masking key).
    private var headerBytes: [UInt8] = []
    /// The header of the frame whose payload is being read.
    private var header: Header?
    private var payload = Data()
    /// Whether a fragmented data message has started and not ended.
    private var isInMessage = false
    /// Bytes of the current data message announced so far (the fragments' lengths).
    private var messageSize: UInt64 = 0
    /// Whether the current data message is compressed (RSV1 on its first frame).
    private var isCompressedMessage = false
    private(set) var failure: WebSocketProtocolViolation?

    /// The most wire bytes a compressed message of at most `limit` bytes may take: deflate makes
    /// incompressible data larger (zlib's stored blocks cost 5 bytes per block, and a block holds
    /// as few as 128 bytes at memLevel 1; Python websockets' 16 MiB of random bytes is 0.24% larger).
    /// The inflater holds the message itself to `limit`.
    static func compressedWireLimit(_ limit: Int) -> UInt64 {
        UInt64(limit) + UInt64(limit) / 8 + 1024
    }

    init(maximumMessageSize: Int = Self.defaultMaximumMessageSize, allowsCompressedMessages: Bool = false) {
        self.maximumMessageSize = max(0, maximumMessageSize)
        self.allowsCompressedMessages = allowsCompressedMessages
        headerBytes.reserveCapacity(10)
    }

    /// Reads `bytes`, returning the frames they complete and the first violation, if any.
    mutating func parse(_ bytes: Data) -> Output {
        var output = Output()
        if let failure {
            output.failure = failure
            return output
        }
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if let current = header {
                let take = min(current.length - payload.count, bytes.endIndex - index)
                payload.append(bytes[index..<(index + take)])
                index += take
                if payload.count == current.length { output.frames.append(finishFrame(current)) }
                continue
            }
            headerBytes.append(bytes[index])
            index += 1
            do throws(WebSocketProtocolViolation) {
                if let complete = try readHeader() {
                    header = complete
                    if complete.length == 0 { output.frames.append(finishFrame(complete)) }
                }
            } catch {
                failure = error
                output.failure = error
                headerBytes.removeAll()
                payload = Data()
                return output
            }
        }
        return output
    }

    private mutating func finishFrame(_ current: Header) -> WebSocketFrame {
        let frame = WebSocketFrame(fin: current.fin, rsv1: current.rsv1, opcode: current.opcode, payload: payload)
        header = nil
        payload = Data()
        return frame
    }

    /// Checks the header bytes read so far; returns the header once it is complete.
    private mutating func readHeader() throws(WebSocketProtocolViolation) -> Header? {
        let first = headerBytes[0]
        guard headerBytes.count >= 2 else { return nil }
        let second = headerBytes[1]
        let length7 = Int(second & 0x7F)
        let lengthBytes = length7 == 126 ? 2 : length7 == 127 ? 8 : 0
        if headerBytes.count == 2 {
            // Everything the first two bytes can break fails here, before any more is read.
            guard second & 0x80 == 0 else { throw WebSocketProtocolViolation(.maskedFrame) }
            guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
                throw WebSocketProtocolViolation(.reservedOpcode(first & 0x0F))
            }
            let fin = first & 0x80 != 0
            let rsv1 = first & 0x40 != 0
            guard first & 0x30 == 0 else { throw WebSocketProtocolViolation(.reservedBits) }
            if rsv1 && !(allowsCompressedMessages && (opcode == .text || opcode == .binary)) {
                throw WebSocketProtocolViolation(.reservedBits)
            }
            if opcode.isControl {
                guard fin else { throw WebSocketProtocolViolation(.fragmentedControlFrame) }
                guard length7 <= 125 else {
                    // The real length is in the next bytes; 126 names "more than 125" well enough.
                    throw WebSocketProtocolViolation(.controlFrameTooLong(UInt64(length7)))
                }
            } else if opcode == .continuation {
                guard isInMessage else { throw WebSocketProtocolViolation(.unexpectedContinuation) }
            } else {
                guard !isInMessage else { throw WebSocketProtocolViolation(.expectedContinuation) }
            }
        }
        guard headerBytes.count == 2 + lengthBytes else { return nil }

        var length = UInt64(length7)
        if lengthBytes > 0 {
            length = 0
            for byte in headerBytes[2...] { length = length << 8 | UInt64(byte) }
            guard length & (1 << 63) == 0 else { throw WebSocketProtocolViolation(.invalidLength) }
        }
        // Checked above; repeated so that a header is decoded from its bytes alone.
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketProtocolViolation(.reservedOpcode(first & 0x0F))
        }
        let fin = first & 0x80 != 0
        if !opcode.isControl {
            if opcode != .continuation { isCompressedMessage = first & 0x40 != 0 }
            let limit = isCompressedMessage ? Self.compressedWireLimit(maximumMessageSize) : UInt64(maximumMessageSize)
            let total = (opcode == .continuation ? messageSize : 0) &+ length
            guard length <= limit, total <= limit else {
                throw WebSocketProtocolViolation(.messageTooLarge(size: max(total, length), limit: maximumMessageSize))
            }
            messageSize = total
            isInMessage = !fin
        }
        headerBytes.removeAll(keepingCapacity: true)
        // length <= maximumMessageSize (an Int) or <= 125 here.
        return Header(fin: fin, rsv1: first & 0x40 != 0, opcode: opcode, length: Int(length))
    }
}
