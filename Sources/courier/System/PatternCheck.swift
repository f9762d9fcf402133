import CourierTestServer
import Foundation

/// Compares files with ``PatternBody`` a chunk at a time (never the whole file in memory).
enum PatternCheck {
    /// Whether the file at `url` is exactly `count` pattern bytes for `seed`.
    static func fileMatches(_ url: URL, count: Int64, seed: UInt64, chunk: Int = 1 << 20) -> Bool {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return false }
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < count {
            let length = Int(min(Int64(chunk), count - offset))
            guard let data = try? handle.read(upToCount: length), data.count == length,
                data == PatternBody.data(offset: offset, count: length, seed: seed)
            else { return false }
            offset += Int64(length)
        }
        return ((try? handle.read(upToCount: 1)) ?? Data()).isEmpty
    }
}
