import Foundation

/// SHA-1 (RFC 3174, FIPS 180-4), only for the WebSocket handshake's `Sec-WebSocket-Accept`
/// (RFC 6455 §4.2.2), which is not a security use; nothing else should hash with it.
///
/// ```swift
/// let digest = WebSocketSHA1.hash(Data("abc".utf8))   // 20 bytes, a9993e36...
/// ```
/// Package-only and not named `SHA1`, so it cannot clash with CryptoKit's `Insecure.SHA1` in code
/// that imports both; Courier and CourierTestServer share it (client and server side of the handshake).
package enum WebSocketSHA1 {
    /// The digest length in bytes.
    package static let digestByteCount = 20

    /// The digest of `data`.
    package static func hash(_ data: Data) -> [UInt8] {
        // Padding (RFC 3174 §4): 0x80, zeros to 56 mod 64, then the bit length big-endian.
        var message = [UInt8](data)
        let bitLength = UInt64(message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for shift in stride(from: 56, through: 0, by: -8) { message.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift))) }

        var h: (UInt32, UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476, 0xC3D2_E1F0)
        var w = [UInt32](repeating: 0, count: 80)
        for blockStart in stride(from: 0, to: message.count, by: 64) {
            for index in 0..<16 {
                let offset = blockStart + index * 4
                w[index] =
                    UInt32(message[offset]) << 24 | UInt32(message[offset + 1]) << 16
                    | UInt32(message[offset + 2]) << 8 | UInt32(message[offset + 3])
            }
            for index in 16..<80 { w[index] = rotateLeft(w[index - 3] ^ w[index - 8] ^ w[index - 14] ^ w[index - 16], 1) }
            var (a, b, c, d, e) = h
            for index in 0..<80 {
                let f: UInt32
                let k: UInt32
                switch index {
                case 0..<20: (f, k) = ((b & c) | (~b & d), 0x5A82_7999)
                case 20..<40: (f, k) = (b ^ c ^ d, 0x6ED9_EBA1)
                case 40..<60: (f, k) = ((b & c) | (b & d) | (c & d), 0x8F1B_BCDC)
                default: (f, k) = (b ^ c ^ d, 0xCA62_C1D6)
                }
                let temp = rotateLeft(a, 5) &+ f &+ e &+ k &+ w[index]
                (e, d, c, b, a) = (d, c, rotateLeft(b, 30), a, temp)
            }
            h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(digestByteCount)
        for word in [h.0, h.1, h.2, h.3, h.4] {
            digest += [
                UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
                UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word),
            ]
        }
        return digest
    }

    private static func rotateLeft(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value << count | value >> (32 - count)
    }
}
