import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// Every suite in this target is nested here and runs serially: the leak test counts the
/// process's descriptors and threads, and blocking socket clients should not starve the
/// cooperative pool of a 2-core machine.
@Suite(.serialized, .hangLimit(.seconds(300)))
struct CourierTestServerTests {}

/// Runs blocking work on a dedicated thread (never the cooperative pool) and awaits its result.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

/// The bytes of `text`.
func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}

/// Checks `bytes` against the pattern for `seed` starting at `offset`.
func matchesPattern(_ bytes: [UInt8], offset: Int64, seed: UInt64) -> Bool {
    bytes == [UInt8](PatternBody.data(offset: offset, count: bytes.count, seed: seed))
}

/// Decodes a gzip (RFC 1952) or zlib (RFC 1950) stream made only of stored deflate blocks,
/// checking the header, block lengths, and the CRC-32 / Adler-32 trailer.
enum StoredInflater {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func gunzip(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count >= 18, data[0] == 0x1F, data[1] == 0x8B, data[2] == 8, data[3] == 0 else {
            throw Failure(description: "bad gzip header")
        }
        let (payload, end) = try inflateStored(data, from: 10)
        guard data.count == end + 8 else { throw Failure(description: "trailer length") }
        let crc = UInt32(data[end]) | UInt32(data[end + 1]) << 8 | UInt32(data[end + 2]) << 16 | UInt32(data[end + 3]) << 24
        let size = UInt32(data[end + 4]) | UInt32(data[end + 5]) << 8 | UInt32(data[end + 6]) << 16 | UInt32(data[end + 7]) << 24
        guard crc == crc32(payload) else { throw Failure(description: "CRC mismatch") }
        guard size == UInt32(truncatingIfNeeded: payload.count) else { throw Failure(description: "ISIZE mismatch") }
        return payload
    }

    static func unzlib(_ data: [UInt8]) throws -> [UInt8] {
        guard data.count >= 6, data[0] & 0x0F == 8, (UInt16(data[0]) << 8 | UInt16(data[1])) % 31 == 0, data[1] & 0x20 == 0 else {
            throw Failure(description: "bad zlib header")
        }
        let (payload, end) = try inflateStored(data, from: 2)
        guard data.count == end + 4 else { throw Failure(description: "trailer length") }
        let sum = UInt32(data[end]) << 24 | UInt32(data[end + 1]) << 16 | UInt32(data[end + 2]) << 8 | UInt32(data[end + 3])
        guard sum == adler32(payload) else { throw Failure(description: "Adler-32 mismatch") }
        return payload
    }

    private static func inflateStored(_ data: [UInt8], from start: Int) throws -> ([UInt8], Int) {
        var index = start
        var out: [UInt8] = []
        while true {
            guard index + 5 <= data.count else { throw Failure(description: "truncated block header") }
            let header = data[index]
            guard header & 0b110 == 0 else { throw Failure(description: "not a stored block") }
            let length = Int(data[index + 1]) | Int(data[index + 2]) << 8
            let complement = Int(data[index + 3]) | Int(data[index + 4]) << 8
            guard length ^ 0xFFFF == complement else { throw Failure(description: "NLEN mismatch") }
            index += 5
            guard index + length <= data.count else { throw Failure(description: "truncated block") }
            out += data[index..<(index + length)]
            index += length
            if header & 1 == 1 { return (out, index) }
        }
    }

    /// Bit-by-bit CRC-32, independent of the server's table-driven one.
    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var low: UInt32 = 1
        var high: UInt32 = 0
        for byte in bytes {
            low = (low + UInt32(byte)) % 65521
            high = (high + low) % 65521
        }
        return high << 16 | low
    }
}
