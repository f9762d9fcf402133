import Courier
import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierLocking

/// The process's standard streams: unbuffered writes that survive `EINTR`, terminal detection,
/// and one lock for standard error so that messages and the progress bar never interleave.
///
/// A progress bar is a line without a newline that is redrawn in place. Any message printed
/// while one is on screen first blanks it; the next progress update draws it again.
final class Console: Sendable {
    /// The console of this process.
    static let shared = Console()

    private struct State {
        /// How many columns the progress line currently drawn on standard error occupies (0: none).
        var drawnWidth = 0
        /// Set once a write to standard output failed (for example a closed pipe): stop writing.
        var stdoutBroken = false
    }

    private let state = Locked(State())

    /// Whether standard output is a terminal.
    let stdoutIsTerminal: Bool
    /// Whether standard error is a terminal.
    let stderrIsTerminal: Bool
    /// Whether ANSI colours may be used on standard output (a terminal, and `NO_COLOR` unset or empty).
    let stdoutUsesColour: Bool

    private init() {
        stdoutIsTerminal = isatty(STDOUT_FILENO) == 1
        stderrIsTerminal = isatty(STDERR_FILENO) == 1
        // https://no-color.org: a NO_COLOR that is present and not empty turns colours off.
        stdoutUsesColour = stdoutIsTerminal && (ProcessInfo.processInfo.environment["NO_COLOR"] ?? "").isEmpty
    }

    /// The width of the terminal on standard error, or 80 when it cannot be told.
    var stderrColumns: Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    // MARK: Standard output

    /// Writes bytes to standard output; returns false once standard output is broken.
    @discardableResult
    func out(_ data: Data) -> Bool {
        state.withLock { state in
            guard !state.stdoutBroken else { return false }
            if !Console.writeAll(STDOUT_FILENO, data) { state.stdoutBroken = true }
            return !state.stdoutBroken
        }
    }

    /// Writes bytes to standard output; returns false once standard output is broken.
    @discardableResult
    func out(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { buffer in
            state.withLock { state in
                guard !state.stdoutBroken else { return false }
                if !Console.writeAll(STDOUT_FILENO, buffer) { state.stdoutBroken = true }
                return !state.stdoutBroken
            }
        }
    }

    /// Writes text to standard output.
    @discardableResult
    func out(_ text: String) -> Bool {
        out(Data(text.utf8))
    }

    // MARK: Standard error

    /// Prints one line to standard error, blanking a progress line first if one is drawn.
    func message(_ line: String) {
        state.withLock { state in
            _ = Console.writeAll(STDERR_FILENO, Data((Console.blanking(&state) + line + "\n").utf8))
        }
    }

    /// Writes `text` to standard error as it is (`-w`'s `%{stderr}`), blanking a progress line first.
    func messageText(_ text: String) {
        state.withLock { state in
            _ = Console.writeAll(STDERR_FILENO, Data((Console.blanking(&state) + text).utf8))
        }
    }

    /// Draws `line` as the progress line on standard error, replacing the one on screen.
    func drawProgress(_ line: String) {
        state.withLock { state in
            let width = line.count
            let padding = String(repeating: " ", count: max(0, state.drawnWidth - width))
            _ = Console.writeAll(STDERR_FILENO, Data(("\r" + line + padding).utf8))
            state.drawnWidth = max(width, 1)
        }
    }

    /// Replaces the progress line with `line` and ends it with a newline, so that the text after
    /// the last carriage return is exactly `line`.
    func finishProgress(_ line: String) {
        state.withLock { state in
            _ = Console.writeAll(STDERR_FILENO, Data((Console.blanking(&state) + line + "\n").utf8))
        }
    }

    /// Blanks the progress line on screen, if one is drawn, and leaves the cursor at its start.
    func clearProgress() {
        state.withLock { state in
            let blank = Console.blanking(&state)
            if !blank.isEmpty { _ = Console.writeAll(STDERR_FILENO, Data(blank.utf8)) }
        }
    }

    /// `\r`, spaces over the drawn progress line, `\r`; empty when none is drawn.
    private static func blanking(_ state: inout State) -> String {
        guard state.drawnWidth > 0 else { return "" }
        defer { state.drawnWidth = 0 }
        return "\r" + String(repeating: " ", count: state.drawnWidth) + "\r"
    }

    /// Writes every byte of `data` to `descriptor`, retrying after `EINTR` and short writes.
    @discardableResult
    static func writeAll(_ descriptor: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { writeAll(descriptor, $0) }
    }

    /// Writes every byte of `buffer` to `descriptor`, retrying after `EINTR` and short writes.
    static func writeAll(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) -> Bool {
        DescriptorIO.writeAll(descriptor, buffer)
    }
}
