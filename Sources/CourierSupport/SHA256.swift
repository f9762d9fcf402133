import Foundation

/// A streaming SHA-256 (FIPS 180-4), for checking downloaded files without a crypto dependency.
///
/// ```swift
/// var hasher = SHA256()
/// hasher.update(chunk1)
/// hasher.update(chunk2)
/// let hex = hasher.finalize().hexString
/// ```
/// Internal so it cannot clash with CryptoKit's `SHA256` in code that imports both.
package struct SHA256: Sendable {
    /// The digest length in bytes.
    package static let digestByteCount = 32

    private var state = HashState()
    /// Input bytes not yet compressed; fewer than 64.
    private var pending = PendingBlock()
    private var pendingCount = 0
    private var totalByteCount: UInt64 = 0

    /// Creates a hasher with no input.
    package init() {}

    /// The digest of `data`.
    package static func hash(_ data: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// Adds `data` to the input.
    package mutating func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// Adds `bytes` to the input.
    package mutating func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// Adds the bytes in `buffer` to the input.
    package mutating func update(_ buffer: UnsafeRawBufferPointer) {
        guard var input = buffer.baseAddress, !buffer.isEmpty else { return }
        var remaining = buffer.count
        totalByteCount &+= UInt64(remaining)

        if pendingCount > 0 {
            let taken = min(64 - pendingCount, remaining)
            let filled = pendingCount
            withUnsafeMutableBytes(of: &pending) { block in
                block.baseAddress.map { ($0 + filled).copyMemory(from: input, byteCount: taken) }
            }
            pendingCount += taken
            input += taken
            remaining -= taken
            guard pendingCount == 64 else { return }
            withUnsafeBytes(of: pending) { block in
                block.baseAddress.map { Self.compress(&state, blocks: $0, count: 1) }
            }
            pendingCount = 0
        }

        let wholeBlocks = remaining / 64
        if wholeBlocks > 0 {
            Self.compress(&state, blocks: input, count: wholeBlocks)
            input += wholeBlocks * 64
            remaining -= wholeBlocks * 64
        }
        if remaining > 0 {
            let tail = remaining
            withUnsafeMutableBytes(of: &pending) { block in
                block.baseAddress.map { $0.copyMemory(from: input, byteCount: tail) }
            }
            pendingCount = remaining
        }
    }

    /// The digest of everything added so far; the hasher itself is unchanged and can take more input.
    package func finalize() -> [UInt8] {
        var copy = self
        let bitLength = totalByteCount &* 8
        // Pad with 0x80, zeros up to 56 mod 64, then the message length in bits, big-endian.
        let paddingLength = (pendingCount < 56 ? 56 : 120) - pendingCount
        var padding = [UInt8](repeating: 0, count: paddingLength + 8)
        padding[0] = 0x80
        for index in 0..<8 {
            padding[paddingLength + index] = UInt8(truncatingIfNeeded: bitLength >> (56 - 8 * UInt64(index)))
        }
        copy.update(padding)
        var digest = [UInt8](repeating: 0, count: Self.digestByteCount)
        for (index, word) in copy.state.words.enumerated() {
            for byte in 0..<4 {
                digest[index * 4 + byte] = UInt8(truncatingIfNeeded: word >> (24 - 8 * UInt32(byte)))
            }
        }
        return digest
    }

    // MARK: Compression

    private static let roundConstants: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    @inline(__always)
    private static func rotateRight(_ value: UInt32, _ count: UInt32) -> UInt32 {
        (value &>> count) | (value &<< (32 &- count))
    }

    /// One round; the caller rotates which variables play `a`…`h` instead of shifting values.
    @inline(__always)
    private static func round(
        _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
        _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32, _ constantPlusWord: UInt32
    ) {
        let sum1 = rotateRight(e, 6) ^ rotateRight(e, 11) ^ rotateRight(e, 25)
        let choice = g ^ (e & (f ^ g))
        let t1 = h &+ sum1 &+ choice &+ constantPlusWord
        let sum0 = rotateRight(a, 2) ^ rotateRight(a, 13) ^ rotateRight(a, 22)
        let majority = ((a | b) & c) | (a & b)
        d &+= t1
        h = t1 &+ sum0 &+ majority
    }

    /// Runs the compression function over `count` consecutive 64-byte blocks.
    private static func compress(_ state: inout HashState, blocks: UnsafeRawPointer, count: Int) {
        roundConstants.withUnsafeBufferPointer { constants in
            withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { schedule in
                // Both buffers are non-empty (64 constants, 64 words), so they have base addresses.
                guard let k = constants.baseAddress, let w = schedule.baseAddress else { return }
                var h0 = state.h0, h1 = state.h1, h2 = state.h2, h3 = state.h3
                var h4 = state.h4, h5 = state.h5, h6 = state.h6, h7 = state.h7
                for blockIndex in 0..<count {
                    let block = blocks + blockIndex &* 64
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let x = w[i &- 15], y = w[i &- 2]
                        let s0 = rotateRight(x, 7) ^ rotateRight(x, 18) ^ (x &>> 3)
                        let s1 = rotateRight(y, 17) ^ rotateRight(y, 19) ^ (y &>> 10)
                        w[i] = w[i &- 16] &+ s0 &+ w[i &- 7] &+ s1
                    }
                    var a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
                    // Eight rounds per pass, so the a…h shift becomes a renaming and costs no moves.
                    var i = 0
                    while i < 64 {
                        round(a, b, c, &d, e, f, g, &h, k[i] &+ w[i])
                        round(h, a, b, &c, d, e, f, &g, k[i &+ 1] &+ w[i &+ 1])
                        round(g, h, a, &b, c, d, e, &f, k[i &+ 2] &+ w[i &+ 2])
                        round(f, g, h, &a, b, c, d, &e, k[i &+ 3] &+ w[i &+ 3])
                        round(e, f, g, &h, a, b, c, &d, k[i &+ 4] &+ w[i &+ 4])
                        round(d, e, f, &g, h, a, b, &c, k[i &+ 5] &+ w[i &+ 5])
                        round(c, d, e, &f, g, h, a, &b, k[i &+ 6] &+ w[i &+ 6])
                        round(b, c, d, &e, f, g, h, &a, k[i &+ 7] &+ w[i &+ 7])
                        i &+= 8
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d
                    h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                }
                state = HashState(h0: h0, h1: h1, h2: h2, h3: h3, h4: h4, h5: h5, h6: h6, h7: h7)
            }
        }
    }
}

/// The eight working words of the hash.
private struct HashState {
    package var h0: UInt32 = 0x6a09e667, h1: UInt32 = 0xbb67ae85, h2: UInt32 = 0x3c6ef372, h3: UInt32 = 0xa54ff53a
    package var h4: UInt32 = 0x510e527f, h5: UInt32 = 0x9b05688c, h6: UInt32 = 0x1f83d9ab, h7: UInt32 = 0x5be0cd19

    package var words: [UInt32] { [h0, h1, h2, h3, h4, h5, h6, h7] }
}

/// 64 bytes of inline storage for a partial block, so hashing never allocates.
private struct PendingBlock {
    package var storage: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0, 0, 0, 0)
}

extension [UInt8] {
    /// The bytes as lower-case hexadecimal, two digits each (a SHA-256 digest becomes 64 characters).
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in self {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
