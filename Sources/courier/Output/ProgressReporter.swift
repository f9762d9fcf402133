import Courier
import Foundation
import CourierLocking

/// Shows a transfer's progress on standard error: one bar per transfer, redrawn in place (at
/// most ten times a second) when standard error is a terminal; nothing in the ``Style/silent``
/// style (a pipe, `-s`); plain lines at most once a second in the ``Style/plain`` style.
///
/// Progress hooks call ``update(_:)`` from any queue; the command calls ``finish(size:resumed:)``
/// (the bar becomes the final line) or ``stop()`` (the bar is erased) when the request has ended,
/// after which late updates are ignored.
final class ProgressReporter: Sendable {
    /// How progress is shown.
    enum Style: Sendable {
        /// A bar redrawn with `\r`.
        case terminal
        /// Occasional plain lines.
        case plain
        /// Nothing.
        case silent
    }

    private struct State {
        var resumed: Int64?
        var lastShown: ContinuousClock.Instant?
        var isDone = false
    }

    /// How progress is shown.
    let style: Style
    private let console: Console
    private let start = ContinuousClock.now
    private let state = Locked(State())

    /// Creates a reporter; the clock for rates and elapsed time starts now.
    init(style: Style, console: Console = .shared) {
        self.style = style
        self.console = console
    }

    /// The style for the process's standard error: a bar on a terminal, nothing otherwise (a
    /// pipe or a log gets no progress, as with curl's `-s`-less runs into a pipe).
    static var styleForStandardError: Style {
        Console.shared.stderrIsTerminal ? .terminal : .silent
    }

    private var elapsed: Double { (ContinuousClock.now - start).seconds }

    /// Shows `progress` if enough time has passed since the last line.
    ///
    /// The line is written under the state's lock, as ``finish(size:resumed:)`` and ``stop()``
    /// write theirs: an update that found the transfer still running could otherwise draw its bar
    /// after the final line (a loaded machine preempted one between the check and the write, and
    /// a stale bar stayed on screen).
    func update(_ progress: TransferProgress) {
        guard style != .silent else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.isDone else { return }
            let resumed = state.resumed ?? progress.completedUnitCount
            state.resumed = resumed
            let interval: Duration = style == .terminal ? .milliseconds(100) : .seconds(1)
            if let last = state.lastShown, now - last < interval { return }
            if state.lastShown == nil, style == .plain, now - start < interval { return }
            state.lastShown = now
            let sample = ProgressSample(
                completed: progress.completedUnitCount, total: progress.totalUnitCount,
                resumed: resumed, elapsed: (now - start).seconds)
            switch style {
            case .terminal: console.drawProgress(ProgressBar.terminalLine(sample, width: console.stderrColumns))
            case .plain: console.message(ProgressBar.plainLine(sample))
            case .silent: break
            }
        }
    }

    /// Replaces the bar with the final line: 100%, the size, the time and the average rate.
    func finish(size: Int64, resumed: Int64) {
        let sample = ProgressSample(completed: size, total: size, resumed: resumed, elapsed: elapsed)
        endOnce {
            switch style {
            case .terminal: console.finishProgress(ProgressBar.finalLine(sample))
            case .plain: console.message(ProgressBar.finalLine(sample))
            case .silent: break
            }
        }
    }

    /// Stops updates and takes the bar off the screen (after a failure or an interruption, the
    /// message that follows says how far the transfer got): no stale progress line stays behind.
    func stop() {
        endOnce {
            if style == .terminal { console.clearProgress() }
        }
    }

    /// Marks the reporter done and writes its last output, under the lock updates write under.
    private func endOnce(_ write: () -> Void) {
        state.withLock { state in
            guard !state.isDone else { return }
            state.isDone = true
            write()
        }
    }
}
