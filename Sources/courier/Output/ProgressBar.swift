/// What a progress display needs to know at one instant.
struct ProgressSample: Equatable, Sendable {
    /// Bytes of the file so far (including bytes resumed from disk).
    var completed: Int64
    /// The file's full size, or -1 when unknown.
    var total: Int64
    /// Bytes that were already on disk when this run started (resumed, not transferred).
    var resumed: Int64
    /// Seconds since this run's transfer started.
    var elapsed: Double

    /// Bytes per second transferred by this run (resumed bytes do not count).
    var rate: Double {
        guard elapsed > 0 else { return 0 }
        return Double(max(0, completed - resumed)) / elapsed
    }

    /// Seconds left at the current rate; nil when it cannot be told.
    var eta: Double? {
        guard total >= 0, rate > 0 else { return nil }
        return Double(max(0, total - completed)) / rate
    }

    /// The whole-number percentage, 0...100; nil when the total is unknown. 100 only when done.
    var percent: Int? {
        guard total > 0 else { return total == 0 ? 100 : nil }
        let value = Int(Double(completed) / Double(total) * 100)
        return completed >= total ? 100 : min(99, value)
    }
}

/// Formats progress lines. Pure: every function depends only on its arguments.
enum ProgressBar {
    /// The line redrawn in place on a terminal, at most `width - 1` characters:
    /// ` 42% [########>       ]  84.0 MiB / 200.0 MiB   95.3 MiB/s  ETA 0:02`.
    ///
    /// Every field has a fixed width, so the bar does not jump about as the numbers change.
    static func terminalLine(_ sample: ProgressSample, width: Int) -> String {
        let rate = pad(Units.rate(sample.rate), to: 11)
        let tail: String
        if sample.total >= 0 {
            let eta = sample.eta.map { "ETA \(Units.clock($0))" } ?? "ETA --:--"
            tail = "  \(pad(Units.bytes(sample.completed), to: 9)) / \(pad(Units.bytes(sample.total), to: 9))  \(rate)  \(eta)"
        } else {
            tail = "  \(pad(Units.bytes(sample.completed), to: 9))  \(rate)  \(Units.elapsed(sample.elapsed))"
        }
        let head = sample.percent.map { pad(String($0), to: 3) + "% " } ?? " ... "
        // The widest tail (hours of ETA) decides the bar's width, not the current one.
        let barWidth = min(30, width - 1 - head.count - 2 - 47)
        let line = barWidth >= 5 ? head + "[" + bar(sample, width: barWidth) + "]" + tail : head + String(tail.dropFirst(2))
        return String(line.prefix(max(1, width - 1)))
    }

    /// The last line once the transfer is complete:
    /// `100% 200.0 MiB (209715200 bytes) in 2.1 s, average 95.3 MiB/s`, plus what was resumed.
    static func finalLine(_ sample: ProgressSample) -> String {
        var line = "100% \(Units.bytes(sample.completed)) (\(sample.completed) bytes) in \(Units.elapsed(sample.elapsed))"
        line += ", average \(Units.rate(sample.rate))"
        if sample.resumed > 0 { line += ", \(Units.bytes(sample.resumed)) resumed from disk" }
        return line
    }

    /// A plain line for a log or a pipe: `progress: 42% 84.0 MiB of 200.0 MiB at 95.3 MiB/s, ETA 0:02`.
    static func plainLine(_ sample: ProgressSample) -> String {
        guard sample.total >= 0, let percent = sample.percent else {
            return "progress: \(Units.bytes(sample.completed)) at \(Units.rate(sample.rate))"
        }
        let eta = sample.eta.map { ", ETA \(Units.clock($0))" } ?? ""
        return "progress: \(percent)% \(Units.bytes(sample.completed)) of \(Units.bytes(sample.total)) at \(Units.rate(sample.rate))\(eta)"
    }

    /// `width` cells: `#` for done, `>` at the edge, spaces after; a moving marker when the total is unknown.
    static func bar(_ sample: ProgressSample, width: Int) -> String {
        guard width > 0 else { return "" }
        guard sample.total > 0 else {
            let position = Int(sample.elapsed * 8) % width
            return String(repeating: " ", count: position) + String("<=>".prefix(width - position))
                + String(repeating: " ", count: max(0, width - position - 3))
        }
        let filled = min(width, Int(Double(width) * Double(sample.completed) / Double(sample.total)))
        if filled >= width { return String(repeating: "#", count: width) }
        return String(repeating: "#", count: filled) + ">" + String(repeating: " ", count: width - filled - 1)
    }

    private static func pad(_ text: String, to width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
