import Foundation

/// A complete WebSocket data message (RFC 6455 §5.6), reassembled from its fragments.
enum WebSocketMessage: Sendable, Hashable {
    /// A text message; its bytes were valid UTF-8.
    case text(String)
    /// A binary message.
    case binary(Data)
}
