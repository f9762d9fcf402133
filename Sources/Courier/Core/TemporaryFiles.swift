import Foundation

/// Courier's own temporary files: unique names in the session's temporary directory, removed by
/// whoever created them when the request ends.
enum TemporaryFiles {
    /// `<system temp>/courier`.
    static let defaultDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier", isDirectory: true)

    /// A new, unused path in `directory` (created if needed).
    static func makeURL(in directory: URL, prefix: String, extension pathExtension: String = "tmp") -> URL {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory.appendingPathComponent("\(prefix)-\(UUID().uuidString).\(pathExtension)")
    }

    /// Removes `url` if it exists; errors are ignored because the file may already be gone.
    static func remove(_ url: URL?) {
        guard let url else { return }
        try? FileManager.default.removeItem(at: url)
    }
}
