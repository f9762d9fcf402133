import Foundation

/// MD5 (RFC 1321), for HTTP Digest authentication's `MD5` and `MD5-sess` algorithms only: MD5 is
/// broken as a general-purpose hash, and nothing else in Courier uses it.
package enum MD5 {
    /// The 16-byte digest of `bytes`.
    package static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var message = bytes
        let bitLength = UInt64(bytes.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        for index in 0..<8 { message.append(UInt8(truncatingIfNeeded: bitLength >> (UInt64(index) * 8))) }

        var a0: UInt32 = 0x6745_2301, b0: UInt32 = 0xEFCD_AB89, c0: UInt32 = 0x98BA_DCFE, d0: UInt32 = 0x1032_5476
        var words = [UInt32](repeating: 0, count: 16)
        for chunk in stride(from: 0, to: message.count, by: 64) {
            for index in 0..<16 {
                let base = chunk + index * 4
                words[index] =
                    UInt32(message[base]) | UInt32(message[base + 1]) << 8
                    | UInt32(message[base + 2]) << 16 | UInt32(message[base + 3]) << 24
            }
            var a = a0, b = b0, c = c0, d = d0
            for round in 0..<64 {
                var f: UInt32
                let g: Int
                switch round {
                case 0..<16: f = (b & c) | (~b & d); g = round
                case 16..<32: f = (d & b) | (~d & c); g = (5 &* round &+ 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 &* round &+ 5) % 16
                default: f = c ^ (b | ~d); g = (7 &* round) % 16
                }
                f = f &+ a &+ constants[round] &+ words[g]
                a = d
                d = c
                c = b
                b = b &+ (f << shifts[round] | f >> (32 - shifts[round]))
            }
            a0 = a0 &+ a
            b0 = b0 &+ b
            c0 = c0 &+ c
            d0 = d0 &+ d
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [a0, b0, c0, d0] {
            for index in 0..<4 { digest.append(UInt8(truncatingIfNeeded: word >> (UInt32(index) * 8))) }
        }
        return digest
    }

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// `floor(abs(sin(i + 1)) * 2^32)`.
    private static let constants: [UInt32] = (0..<64).map { index in
        UInt32(truncatingIfNeeded: Int64((abs(sin(Double(index + 1))) * 4_294_967_296).rounded(.down)))
    }
}
