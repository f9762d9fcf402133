import Foundation

/// Deterministic pseudo-random bytes addressed by offset, so a body of any size can be
/// generated on the fly and any slice of it checked without materialising the rest.
///
/// Byte `i` of the pattern for `seed` is byte `i % 8` (little-endian) of a SplitMix64-style hash
/// of `(seed, i / 8)`.
public enum PatternBody {
    /// The byte at `offset` of the pattern for `seed`.
    public static func byte(at offset: Int64, seed: UInt64) -> UInt8 {
        let position = UInt64(bitPattern: offset)
        return UInt8(truncatingIfNeeded: word(position / 8, seed: seed) >> ((position % 8) * 8))
    }

    /// `count` bytes of the pattern for `seed`, starting at `offset`.
    public static func data(offset: Int64, count: Int, seed: UInt64) -> Data {
        var data = Data(count: max(0, count))
        data.withUnsafeMutableBytes { fill($0, offset: offset, seed: seed) }
        return data
    }

    /// Fills `buffer` with the pattern for `seed` starting at `offset`.
    static func fill(_ buffer: UnsafeMutableRawBufferPointer, offset: Int64, seed: UInt64) {
        guard let base = buffer.baseAddress else { return }
        let count = buffer.count
        var position = UInt64(bitPattern: offset)
        var index = 0
        while index < count && position % 8 != 0 {
            base.storeBytes(of: byte(at: Int64(bitPattern: position), seed: seed), toByteOffset: index, as: UInt8.self)
            index += 1
            position += 1
        }
        let mixedSeed = mix(seed)
        var wordIndex = position / 8
        while index + 8 <= count {
            base.storeBytes(of: mix(wordIndex &* 0x9E37_79B9_7F4A_7C15 &+ mixedSeed).littleEndian, toByteOffset: index, as: UInt64.self)
            index += 8
            wordIndex &+= 1
        }
        position = wordIndex &* 8
        while index < count {
            base.storeBytes(of: byte(at: Int64(bitPattern: position), seed: seed), toByteOffset: index, as: UInt8.self)
            index += 1
            position &+= 1
        }
    }

    @inline(__always)
    private static func word(_ index: UInt64, seed: UInt64) -> UInt64 {
        mix(index &* 0x9E37_79B9_7F4A_7C15 &+ mix(seed))
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var z = value
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
