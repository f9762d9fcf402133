import CourierTestServer
import Foundation

/// A fresh directory under the system temporary directory, removed by ``remove()``.
struct TemporaryDirectory: Sendable {
    let url: URL

    init(_ label: String = "test") throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// A path inside the directory.
    func path(_ name: String) -> URL { url.appendingPathComponent(name) }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Pattern files: written and checked a chunk at a time, never held whole in memory.
enum PatternFile {
    static let chunk = 4 << 20

    /// Writes `count` bytes of ``PatternBody`` for `seed` to `url`.
    static func write(_ url: URL, count: Int64, seed: UInt64) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < count {
            let length = Int(min(Int64(chunk), count - offset))
            try handle.write(contentsOf: PatternBody.data(offset: offset, count: length, seed: seed))
            offset += Int64(length)
        }
    }

    /// The offset of the first byte of the file at `url` that differs from `count` pattern bytes
    /// for `seed` (the file's length if it is shorter, `count` if it is longer); nil if identical.
    static func firstMismatch(_ url: URL, count: Int64, seed: UInt64) throws -> Int64? {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var offset: Int64 = 0
        while offset < count {
            let length = Int(min(Int64(chunk), count - offset))
            let data = try handle.read(upToCount: length) ?? Data()
            let expected = PatternBody.data(offset: offset, count: length, seed: seed)
            if data != expected {
                return offset + Int64(firstDifference(data, expected))
            }
            offset += Int64(length)
        }
        return (try handle.read(upToCount: 1) ?? Data()).isEmpty ? nil : count
    }

    /// The offset of the first byte of `data[range]` that differs from the pattern starting at
    /// `patternOffset`; nil if identical. Compares a chunk at a time.
    static func firstMismatch(in data: Data, range: Range<Int>, patternOffset: Int64, seed: UInt64) -> Int64? {
        var position = range.lowerBound
        while position < range.upperBound {
            let length = min(chunk, range.upperBound - position)
            let expected = PatternBody.data(offset: patternOffset + Int64(position - range.lowerBound), count: length, seed: seed)
            let actual = Data(data[(data.startIndex + position)..<(data.startIndex + position + length)])
            if actual != expected {
                return Int64(position - range.lowerBound + firstDifference(actual, expected))
            }
            position += length
        }
        return nil
    }

    /// The index of the first differing byte of two buffers (the shorter length if one is a prefix).
    static func firstDifference(_ lhs: Data, _ rhs: Data) -> Int {
        let a = [UInt8](lhs), b = [UInt8](rhs)
        for index in 0..<min(a.count, b.count) where a[index] != b[index] { return index }
        return min(a.count, b.count)
    }

    /// The size of the file at `url`, or 0 if there is none.
    static func size(_ url: URL) -> Int64 {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? 0
    }
}

/// Waits for an observable condition, checking every millisecond, up to `timeout`.
///
/// The checks run on a thread of their own: when the whole suite runs, the cooperative pool can
/// be busy for seconds, and a check that waits its turn there misses a child process's progress
/// (a throttled download can finish before the test notices it started).
func eventually(timeout: Duration, _ condition: @escaping @Sendable () -> Bool) async -> Bool {
    await onOwnThread { poll(timeout: timeout, condition) }
}

/// Blocks the calling thread until `condition` holds (true) or `timeout` passes (false).
func poll(timeout: Duration, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        usleep(1_000)
    }
    return true
}

/// Runs `body` on a new thread, outside the cooperative pool, and returns its result.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: body()) }.start()
    }
}
