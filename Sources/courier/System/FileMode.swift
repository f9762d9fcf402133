import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The permissions of files `courier` writes (`-o`, `-O`): 0644 minus the umask, as a file
/// created by a shell redirection or by curl would have (Courier's download store and temporary
/// files are private, 0600, and the finished file is moved into place from there).
enum FileMode {
    /// The mode of a finished output file: 0644 with the process's umask applied.
    static var defaultMode: mode_t { 0o644 & ~umask }

    /// The process's umask, read without changing it where possible (`/proc/self/status` on
    /// Linux); otherwise set and restored, once, when the tool starts.
    static let umask: mode_t = {
        #if os(Linux)
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Umask:") }),
            let value = mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8)
        {
            return value
        }
        #endif
        let current = systemUmask(0o022)
        _ = systemUmask(current)
        return current
    }()

    /// Gives the file at `url` the default mode, if it is a regular file (a device such as
    /// `/dev/null` keeps its own).
    static func applyDefault(to url: URL) {
        guard !OutputPath.isSpecial(url.path) else { return }
        _ = chmod(url.path, defaultMode)
    }

    /// `-R`: gives the file at `path` the `Last-Modified` time of `response`, when it has one.
    static func applyLastModified(of response: HTTPURLResponse, to path: String) {
        guard let text = response.value(forHTTPHeaderField: "Last-Modified"), let date = CookieDate.parse(text) else { return }
        try? FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: path)
    }

    private static func systemUmask(_ mask: mode_t) -> mode_t {
        #if canImport(Glibc)
        Glibc.umask(mask)
        #else
        Darwin.umask(mask)
        #endif
    }
}
