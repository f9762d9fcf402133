import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How much of a resumable download came from disk.
enum ResumeFigures {
    /// The bytes that were already on disk: the start of the final response's `Content-Range`
    /// (a 206), or the whole file when the store already held every byte and none were received.
    static func resumedBytes(response: HTTPURLResponse?, metrics: TransferMetrics?, size: Int64) -> Int64 {
        if let range = response?.value(forHTTPHeaderField: "Content-Range"), let start = contentRangeStart(range) {
            return min(start, size)
        }
        if let metrics, metrics.bytesReceived == 0, size > 0 { return size }
        return 0
    }

    /// The first byte position of `bytes first-last/total`.
    static func contentRangeStart(_ value: String) -> Int64? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
    }

    /// `courier: resumed N bytes from the download store; fetched M bytes`, or why nothing was
    /// resumed: there was no partial, or the server sent the whole file again (it changed, or it
    /// ignores ranges), so the `partialBefore` bytes on disk were replaced.
    static func summary(resumed: Int64, size: Int64, partialBefore: Int64 = 0) -> String {
        let fetched = max(0, size - resumed)
        if resumed > 0 { return "courier: resumed \(resumed) bytes from the download store; fetched \(fetched) bytes" }
        if partialBefore > 0 {
            return
                "courier: nothing resumed: the server sent the whole file again, replacing the \(partialBefore) bytes on disk; fetched \(fetched) bytes"
        }
        return "courier: nothing to resume; fetched \(fetched) bytes"
    }
}
