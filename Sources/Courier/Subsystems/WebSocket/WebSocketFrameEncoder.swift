import CourierWebSocketWire
import Foundation

/// Encodes client frames (RFC 6455 §5.2): always masked with the key given (§5.3), the length in
/// 7, 16 or 64 bits, whichever is shortest.
enum WebSocketFrameEncoder {
    /// The bytes of one client frame carrying `payload`, masked with `key`.
    static func encode(
        opcode: WebSocketOpcode, payload: Data, fin: Bool = true, rsv1: Bool = false,
        key: (UInt8, UInt8, UInt8, UInt8)
    ) -> Data {
        let length = payload.count
        let lengthBytes = length < 126 ? 0 : length <= 0xFFFF ? 2 : 8
        let headerLength = 2 + lengthBytes + 4
        var frame = Data(count: headerLength + length)
        frame.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) in
            out[0] = (fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode.rawValue
            switch lengthBytes {
            case 0:
                out[1] = 0x80 | UInt8(length)
            case 2:
                out[1] = 0x80 | 126
                out[2] = UInt8(truncatingIfNeeded: length >> 8)
                out[3] = UInt8(truncatingIfNeeded: length)
            default:
                out[1] = 0x80 | 127
                for index in 0..<8 { out[2 + index] = UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(56 - 8 * index)) }
            }
            let keyOffset = 2 + lengthBytes
            out[keyOffset] = key.0
            out[keyOffset + 1] = key.1
            out[keyOffset + 2] = key.2
            out[keyOffset + 3] = key.3
            let body = UnsafeMutableRawBufferPointer(rebasing: out[headerLength...])
            payload.copyBytes(to: body.bindMemory(to: UInt8.self), count: length)
            mask(body, key: key)
        }
        return frame
    }

    /// The bytes of `frame`, masked with a key from `keys`.
    static func encode(_ frame: WebSocketFrame, keys: WebSocketMaskingKeySource) -> Data {
        encode(opcode: frame.opcode, payload: frame.payload, fin: frame.fin, rsv1: frame.rsv1, key: keys.nextKey())
    }

    /// XORs `bytes` in place with the key repeated from its first byte (§5.3); masking twice unmasks.
    static func mask(_ bytes: UnsafeMutableRawBufferPointer, key: (UInt8, UInt8, UInt8, UInt8)) {
        WebSocketWire.mask(bytes, key: key)
    }
}
