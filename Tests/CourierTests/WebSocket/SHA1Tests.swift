import CourierSupport
import Testing
import Foundation
@testable import Courier

/// SHA-1 against the test vectors of RFC 3174 §7.3 (and the empty input).
struct SHA1Tests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test(
        arguments: [
            ("", 1, "da39a3ee5e6b4b0d3255bfef95601890afd80709"),
            ("abc", 1, "a9993e364706816aba3e25717850c26c9cd0d89d"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1, "84983e441c3bd26ebaae4aa1f95129e5e54670f1"),
            ("a", 1_000_000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"),
            ("01234567012345670123456701234567", 20, "dea356a2cddd90c7a7ecedc5ebb563934f460452"),
        ] as [(String, Int, String)])
    func matchesRFC3174(text: String, repeats: Int, digest: String) {
        let input = Data(String(repeating: text, count: repeats).utf8)
        #expect(Self.hex(SHA1.hash(input)) == digest)
    }

    /// Inputs whose padding crosses a block boundary (55, 56, 63, 64 bytes).
    @Test func padsAtBlockBoundaries() {
        let expected = [
            55: "c1c8bbdc22796e28c0e15163d20899b65621d65a",
            56: "c2db330f6083854c99d4b5bfb6e8f29f201be699",
            64: "0098ba824b5c16427bd7a1122a5a442a25ec644d",
        ]
        for (length, digest) in expected {
            #expect(Self.hex(SHA1.hash(Data(repeating: UInt8(ascii: "a"), count: length))) == digest, "\(length) bytes")
        }
    }
}
