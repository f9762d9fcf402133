import Foundation

/// Turns frames into messages (RFC 6455 §5.4): joins the fragments of a data message, validates
/// text as UTF-8 as each fragment arrives (§8.1, failing at the first invalid byte), and passes
/// control frames through, which may come between the fragments of a message (§5.4).
///
/// Frame order (continuations, control frame rules) and the message's size on the wire are checked
/// by ``WebSocketFrameParser`` before a frame gets here; a compressed message (RFC 7692) is inflated
/// fragment by fragment here, its inflated size bounded by the same limit.
struct WebSocketMessageAssembler: Sendable {
    /// What a frame amounted to.
    enum Outcome: Sendable, Hashable {
        /// A fragment that does not end its message.
        case none
        /// A complete data message.
        case message(WebSocketMessage)
        /// A ping, with its payload.
        case ping(Data)
        /// A pong, with its payload.
        case pong(Data)
        /// A valid close frame.
        case close(WebSocketCloseFrame)
        /// The frame broke the protocol.
        case violation(WebSocketProtocolViolation)
    }

    let maximumMessageSize: Int
    /// Inflates compressed messages when permessage-deflate was negotiated.
    private let inflater: WebSocketInflater?
    /// Whether the message being assembled is compressed (RSV1 on its first frame, RFC 7692 §6).
    private var isCompressed = false
    /// The opcode of the message being assembled (text or binary); nil between messages.
    private var messageOpcode: WebSocketOpcode?
    private var fragments = Data()
    private var utf8 = WebSocketUTF8Validator()

    init(maximumMessageSize: Int, inflater: WebSocketInflater? = nil) {
        self.maximumMessageSize = maximumMessageSize
        self.inflater = inflater
    }

    mutating func receive(_ frame: WebSocketFrame) -> Outcome {
        switch frame.opcode {
        case .ping: return .ping(frame.payload)
        case .pong: return .pong(frame.payload)
        case .close:
            do throws(WebSocketProtocolViolation) {
                return .close(try WebSocketCloseFrame(payload: frame.payload))
            } catch {
                return .violation(error)
            }
        case .text, .binary, .continuation:
            return receiveData(frame)
        }
    }

    private mutating func receiveData(_ frame: WebSocketFrame) -> Outcome {
        let opcode = frame.opcode == .continuation ? messageOpcode : frame.opcode
        // The parser rejects a continuation with no message open; this is the same check, kept
        // so that the assembler never builds a message of no type.
        guard let opcode else { return .violation(WebSocketProtocolViolation(.unexpectedContinuation)) }
        if frame.opcode != .continuation {
            utf8 = WebSocketUTF8Validator()
            isCompressed = frame.rsv1
        }
        var data = frame.payload
        if isCompressed {
            // The parser lets RSV1 through only when an inflater was given.
            guard let inflater else { return .violation(WebSocketProtocolViolation(.reservedBits)) }
            do throws(WebSocketProtocolViolation) {
                data = try inflater.inflate(data, isLast: frame.fin, limit: maximumMessageSize - fragments.count)
            } catch {
                return .violation(error)
            }
        }
        if opcode == .text {
            guard utf8.validate(data) else { return .violation(WebSocketProtocolViolation(.invalidUTF8)) }
            if frame.fin && !utf8.isComplete { return .violation(WebSocketProtocolViolation(.invalidUTF8)) }
        }
        guard frame.fin else {
            messageOpcode = opcode
            fragments.append(data)
            return .none
        }
        let payload: Data
        if fragments.isEmpty {
            payload = data
        } else {
            fragments.append(data)
            payload = fragments
            fragments = Data()
        }
        messageOpcode = nil
        // Validated above, so decoding replaces nothing.
        return .message(opcode == .text ? .text(String(decoding: payload, as: UTF8.self)) : .binary(payload))
    }
}
