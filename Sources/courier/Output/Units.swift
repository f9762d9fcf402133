import Foundation

/// Human-readable sizes, rates and durations, in binary units (KiB, MiB, GiB).
enum Units {
    /// `512 B`, `1.5 KiB`, `200.0 MiB`, `1.00 GiB`.
    static func bytes(_ count: Int64) -> String {
        let value = Double(max(0, count))
        switch value {
        case ..<1024: return "\(max(0, count)) B"
        case ..<(1024 * 1024): return String(format: "%.1f KiB", value / 1024)
        case ..<(1024 * 1024 * 1024): return String(format: "%.1f MiB", value / 1024 / 1024)
        default: return String(format: "%.2f GiB", value / 1024 / 1024 / 1024)
        }
    }

    /// `95.3 MiB/s`; `-` for a rate that is not a finite positive number yet.
    static func rate(_ bytesPerSecond: Double) -> String {
        guard bytesPerSecond.isFinite, bytesPerSecond > 0 else { return "- B/s" }
        return bytes(Int64(bytesPerSecond)) + "/s"
    }

    /// A clock-style duration: `0:07`, `12:34`, `1:02:03`; `--:--` when unknown.
    static func clock(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0, seconds < 360_000 else { return "--:--" }
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, (total % 3600) / 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    /// A short elapsed time: `2.3 ms`, `350 ms`, `2.4 s`, `1:05`.
    static func elapsed(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "-" }
        if seconds < 0.01 { return String(format: "%.1f ms", seconds * 1000) }
        if seconds < 1 { return String(format: "%.0f ms", seconds * 1000) }
        if seconds < 60 { return String(format: "%.1f s", seconds) }
        return clock(seconds)
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}
