import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Asks for a password as curl does for `-u USER`: the prompt on standard error, the answer read
/// from the terminal (`/dev/tty`) with echo off, or from standard input when there is no terminal.
enum PasswordPrompt {
    /// The longest answer read; the rest of a longer line is dropped.
    static let maximumLength = 1024
    /// The interrupt slot of the prompt (transfers use theirs from 0).
    static let slot = -1

    /// Prints `prompt` and returns the line typed (without its newline); "" when nothing can be read.
    /// Ctrl-C while it waits gives the terminal its echo back before `interrupts` ends the process.
    static func ask(_ prompt: String, interrupts: Interrupts) -> String {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        let descriptor = terminal >= 0 ? terminal : STDIN_FILENO
        defer { if terminal >= 0 { close(terminal) } }
        _ = Console.writeAll(STDERR_FILENO, Data(prompt.utf8))
        var saved = termios()
        let echoOff = isatty(descriptor) == 1 && tcgetattr(descriptor, &saved) == 0
        if echoOff {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            _ = tcsetattr(descriptor, TCSANOW, &quiet)
            let restore = saved
            interrupts.onInterrupt(slot: slot) {
                var echoing = restore
                _ = tcsetattr(descriptor, TCSANOW, &echoing)
                Console.shared.message("\ncourier: interrupted")
                exit(ExitCode.interrupted.rawValue)
            }
        }
        defer { interrupts.clearHandler(slot: slot) }
        let line = readLine(descriptor)
        if echoOff {
            _ = tcsetattr(descriptor, TCSANOW, &saved)
            // The newline typed was not echoed.
            _ = Console.writeAll(STDERR_FILENO, Data("\n".utf8))
        }
        return line
    }

    /// One line from `descriptor`, a byte at a time (so nothing after it is consumed), at most
    /// ``maximumLength`` bytes kept.
    private static func readLine(_ descriptor: Int32) -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while true {
            let count = read(descriptor, &byte, 1)
            if count < 0, errno == EINTR { continue }
            guard count == 1, byte != UInt8(ascii: "\n") else { break }
            if bytes.count < maximumLength { bytes.append(byte) }
        }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
