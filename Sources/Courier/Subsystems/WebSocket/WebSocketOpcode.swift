/// The opcode of a WebSocket frame (RFC 6455 §5.2); the reserved values 3–7 and 0xB–0xF have no case.
enum WebSocketOpcode: UInt8, Sendable, Hashable {
    /// A later fragment of a fragmented data message.
    case continuation = 0x0
    /// The first (or only) frame of a text message.
    case text = 0x1
    /// The first (or only) frame of a binary message.
    case binary = 0x2
    /// A close frame (§5.5.1).
    case close = 0x8
    /// A ping frame (§5.5.2).
    case ping = 0x9
    /// A pong frame (§5.5.3).
    case pong = 0xA

    /// Whether this is a control frame (close, ping, pong): at most 125 bytes, never fragmented (§5.5).
    var isControl: Bool { rawValue & 0x8 != 0 }
}
