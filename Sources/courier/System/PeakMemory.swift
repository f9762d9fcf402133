import Foundation

/// The process's peak resident set size, from `/proc/self/status` (`VmHWM`) on Linux.
enum PeakMemory {
    /// Peak RSS in kibibytes, or nil where `/proc` is not available.
    static func kibibytes() -> Int64? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        return parse(status: status)
    }

    /// The `VmHWM:` value (in kB) of a `/proc/<pid>/status` text.
    static func parse(status: String) -> Int64? {
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let digits = line.dropFirst("VmHWM:".count).filter { $0.isNumber }
            return Int64(String(digits))
        }
        return nil
    }

    /// `peak-rss=23.4 MiB (VmHWM 23964 kB)`, or `peak-rss=unknown`.
    static var summary: String {
        guard let kib = kibibytes() else { return "peak-rss=unknown" }
        return "peak-rss=\(Units.bytes(kib * 1024)) (VmHWM \(kib) kB)"
    }
}
