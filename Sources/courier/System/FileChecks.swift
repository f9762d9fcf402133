import Foundation

/// Checks made before a transfer starts, so that a missing file or directory fails at once
/// (exit status 6) instead of after the bytes have moved.
enum FileChecks {
    /// Why `path` cannot be uploaded, or nil if it is a readable regular file.
    static func readableFileProblem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "cannot read \(path): no such file"
        }
        if isDirectory.boolValue { return "cannot read \(path): it is a directory" }
        if !FileManager.default.isReadableFile(atPath: path) { return "cannot read \(path): permission denied" }
        return nil
    }

    /// Why a download cannot be written to `path`, or nil if its directory exists and `path` is
    /// not a directory.
    static func writableDestinationProblem(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return "cannot write \(path): it is a directory"
        }
        let parent = url.deletingLastPathComponent()
        guard FileManager.default.fileExists(atPath: parent.path, isDirectory: &isDirectory) else {
            return "cannot write \(path): the directory \(parent.path) does not exist"
        }
        if !isDirectory.boolValue { return "cannot write \(path): \(parent.path) is not a directory" }
        if !FileManager.default.isWritableFile(atPath: parent.path) {
            return "cannot write \(path): the directory \(parent.path) is not writable"
        }
        return nil
    }

    /// The size of the file at `url`, or nil.
    static func size(of url: URL) -> Int64? {
        (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value
    }
}
