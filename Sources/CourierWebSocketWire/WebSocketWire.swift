import Foundation

/// What the client and server sides of RFC 6455 compute the same way; package-only, shared by
/// Courier (the client) and CourierTestServer (the server).
package enum WebSocketWire {
    /// The GUID RFC 6455 §1.3 appends to the key before hashing.
    package static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The `Sec-WebSocket-Accept` value for a `Sec-WebSocket-Key` (§4.2.2 step 5.4): the base64
    /// SHA-1 of the key followed by the GUID.
    package static func acceptValue(forKey key: String) -> String {
        Data(WebSocketSHA1.hash(Data((key + acceptGUID).utf8))).base64EncodedString()
    }

    /// XORs `bytes` in place with `key` repeated from the key's first byte (§5.3); masking
    /// twice unmasks. `keyOffset` is where in the key the first byte falls (for a payload
    /// masked in pieces).
    package static func mask(_ bytes: UnsafeMutableRawBufferPointer, key: (UInt8, UInt8, UInt8, UInt8), keyOffset: Int = 0) {
        let keyBytes = [key.0, key.1, key.2, key.3]
        // Eight bytes at a time: the key rotated to the offset and repeated twice is one 64-bit
        // word in memory order.
        var rotated: UInt64 = 0
        for index in 0..<8 { rotated |= UInt64(keyBytes[(keyOffset + index) & 3]) << UInt64(8 * index) }
        let word = UInt64(littleEndian: rotated)
        var index = 0
        while index + 8 <= bytes.count {
            let value = bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) ^ word
            bytes.storeBytes(of: value, toByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            bytes[index] ^= keyBytes[(keyOffset + index) & 3]
            index += 1
        }
    }
}
