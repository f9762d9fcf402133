import Foundation

/// The checksum that closes a head file (``CacheEntryFormat``): 64 bits over every byte before
/// it, eight at a time. It exists to turn what a crash, a full disk or a failing one can do to a
/// file (cut it short, leave old bytes in it, flip bits) into a miss; it is not a defence against
/// forgery, since whoever can write the cache directory can write a valid file. Any change
/// confined to one 8-byte word is always caught (every step is a bijection of the state), other
/// changes with odds of about 2⁻⁶⁴ of slipping through.
///
/// SHA-256 did the same job at about 0.3 GB/s, a third of the CPU of a hit read from disk; this is
/// several GB/s (`Benchmarks/PROFILES.md`, workload M-warm).
enum CacheChecksum {
    /// The checksum of `bytes`.
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
            state = (state ^ word) &* 0xBF58_476D_1CE4_E5B9
            state ^= state >> 31
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < bytes.count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        state = (state ^ tail) &* 0x94D0_49BB_1331_11EB
        // splitmix64's finaliser: every input bit reaches every output bit.
        state ^= state >> 30
        state = state &* 0xBF58_476D_1CE4_E5B9
        state ^= state >> 27
        state = state &* 0x94D0_49BB_1331_11EB
        state ^= state >> 31
        return state
    }

    /// The checksum of `data`, as 16 lower-case hex digits.
    static func hex<Bytes: DataProtocol>(of data: Bytes) -> String {
        let value: UInt64
        if let contiguous = data.withContiguousStorageIfAvailable({ of(UnsafeRawBufferPointer($0)) }) {
            value = contiguous
        } else {
            value = Array(data).withUnsafeBytes { of($0) }
        }
        return withUnsafeBytes(of: value.bigEndian) { Array($0) }.hexString
    }
}
