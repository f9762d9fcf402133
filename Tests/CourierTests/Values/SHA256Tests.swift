import CourierSupport
import Foundation
import Testing
import CourierTestSupport
@_spi(Transport) @testable import Courier

extension Values {
    @Suite("SHA256") struct SHA256Tests {
        @Test(
            "FIPS 180-4 test vectors",
            arguments: [
                ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
                ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
                (
                    "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
                ),
                (
                    "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
                    "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
                ),
            ])
        func vectors(message: String, digest: String) {
            #expect(SHA256.hash(Data(message.utf8)).hexString == digest)
        }

        @Test("one million 'a's")
        func millionA() {
            let digest = SHA256.hash(Data(repeating: UInt8(ascii: "a"), count: 1_000_000))
            #expect(digest.hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
            #expect(digest.count == SHA256.digestByteCount)
        }

        /// Digests of `(0..<n).map { UInt8($0 % 251) }`, around the padding boundaries (from Python's hashlib).
        @Test(
            "lengths around the block and padding boundaries",
            arguments: [
                (55, "463eb28e72f82e0a96c0a4cc53690c571281131f672aa229e0d45ae59b598b59"),
                (56, "da2ae4d6b36748f2a318f23e7ab1dfdf45acdc9d049bd80e59de82a60895f562"),
                (63, "29af2686fd53374a36b0846694cc342177e428d1647515f078784d69cdb9e488"),
                (64, "fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"),
                (65, "4bfd2c8b6f1eec7a2afeb48b934ee4b2694182027e6d0fc075074f2fabb31781"),
                (119, "da18797ed7c3a777f0847f429724a2d8cd5138e6ed2895c3fa1a6d39d18f7ec6"),
                (120, "f52b23db1fbb6ded89ef42a23ce0c8922c45f25c50b568a93bf1c075420bbb7c"),
                (128, "471fb943aa23c511f6f72f8d1652d9c880cfa392ad80503120547703e56a2be5"),
                (1000, "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d"),
            ])
        func boundaries(length: Int, digest: String) {
            #expect(SHA256.hash(Self.pattern(length)).hexString == digest)
        }

        @Test("streaming in odd-sized pieces gives the same digest", arguments: [1, 2, 3, 7, 55, 56, 57, 63, 64, 65, 100, 127, 999])
        func streaming(pieceSize: Int) {
            let message = Self.pattern(1000)
            var hasher = SHA256()
            var offset = 0
            var turn = 0
            while offset < message.count {
                // Alternate the piece size with a one-byte piece to hit every buffer state.
                let size = turn.isMultiple(of: 2) ? pieceSize : 1
                let end = min(offset + size, message.count)
                if turn.isMultiple(of: 3) {
                    message[offset..<end].withUnsafeBytes { hasher.update($0) }
                } else {
                    hasher.update(Data(message[offset..<end]))
                }
                offset = end
                turn += 1
            }
            #expect(hasher.finalize().hexString == "4e4c294b331f7a2099a379bec34b9f9fc03dc46ab465d998f4d683da53487e6d")
        }

        @Test("finalize leaves the hasher usable for more input")
        func finalizeIsNonDestructive() {
            var hasher = SHA256()
            hasher.update(Data("ab".utf8))
            #expect(hasher.finalize() == SHA256.hash(Data("ab".utf8)))
            #expect(hasher.finalize() == SHA256.hash(Data("ab".utf8)))
            hasher.update([UInt8(ascii: "c")])
            #expect(hasher.finalize().hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
            hasher.update(UnsafeRawBufferPointer(start: nil, count: 0))
            #expect(hasher.finalize() == SHA256.hash(Data("abc".utf8)))
        }

        @Test("hexString writes two lower-case digits per byte")
        func hex() {
            #expect([0x00, 0x0F, 0xA0, 0xFF].hexString == "000fa0ff")
            #expect([UInt8]().hexString == "")
        }

        @Test("prints throughput (debug builds are far slower than release)")
        func throughput() {
            let data = Data(repeating: 0x5A, count: 4 << 20)
            let elapsed = ContinuousClock().measure { _ = SHA256.hash(data) }
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            TestEnvironment.note("SHA-256 over 4 MiB: \(Int(Double(data.count) / seconds / 1e6)) MB/s in this build")
        }

        static func pattern(_ length: Int) -> Data {
            Data((0..<length).map { UInt8($0 % 251) })
        }
    }
}
