import Foundation

/// The download store's files, as seen from outside the process that writes them.
enum StoreFiles {
    /// The size of the (single) `.part` file in `store`, or 0 when there is none.
    static func partSize(in store: URL) -> Int64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []
        return names.filter { $0.hasSuffix(".part") }.map { PatternFile.size(store.appendingPathComponent($0)) }.max() ?? 0
    }

    /// The names of every file in `store`.
    static func names(in store: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []).sorted()
    }
}

/// Quotes `text` for `sh -c` (single quotes).
func shellQuoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\\\''") + "'"
}
