import Foundation

/// One WebSocket frame with its payload unmasked (RFC 6455 §5.2).
struct WebSocketFrame: Sendable, Hashable {
    /// Whether this is the final fragment of its message (always true for control frames).
    var fin: Bool
    /// RSV1: with permessage-deflate, set on the first frame of a compressed message (RFC 7692 §6).
    var rsv1: Bool
    /// The frame's opcode.
    var opcode: WebSocketOpcode
    /// The application data, unmasked.
    var payload: Data

    init(fin: Bool = true, rsv1: Bool = false, opcode: WebSocketOpcode, payload: Data = Data()) {
        self.fin = fin
        self.rsv1 = rsv1
        self.opcode = opcode
        self.payload = payload
    }
}
