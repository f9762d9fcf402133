/// CRC-32 as used by gzip (RFC 1952): reflected polynomial 0xEDB88320.
struct CRC32 {
    private var state: UInt32 = 0xFFFF_FFFF

    /// The checksum of everything passed to ``update(_:)`` so far.
    var checksum: UInt32 { ~state }

    /// Adds bytes to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var crc = state
        CRC32.table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8)
            }
        }
        state = crc
    }

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 {
            value = value & 1 == 1 ? (value >> 1) ^ 0xEDB8_8320 : value >> 1
        }
        return value
    }
}

/// Adler-32 as used by zlib (RFC 1950).
struct Adler32 {
    private var low: UInt32 = 1
    private var high: UInt32 = 0

    /// The checksum of everything passed to ``update(_:)`` so far.
    var checksum: UInt32 { high << 16 | low }

    /// Adds bytes to the checksum.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        // 5552 is the largest run for which `high` cannot overflow 32 bits before the modulo.
        var start = 0
        while start < bytes.count {
            let end = min(start + 5552, bytes.count)
            for index in start..<end {
                low &+= UInt32(bytes[index])
                high &+= low
            }
            low %= 65521
            high %= 65521
            start = end
        }
    }
}
