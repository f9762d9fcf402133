import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the tool writes what a user names (`-o`, `-D`, `-c`, `--trace`...), opened as curl opens
/// it: the name is opened and written through, never replaced. `-o /dev/null`, a FIFO another
/// process reads, or `/dev/stdout` get the bytes; a device is never removed, recreated or given
/// another mode (a tool run as root once replaced `/dev/null` with a regular file).
enum OutputPath {
    /// Whether something other than a regular file or a directory is at `path` (following a
    /// link, as opening it does): a character or block device, a FIFO or a socket.
    static func isSpecial(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        let type = info.st_mode & S_IFMT
        return type != S_IFREG && type != S_IFDIR
    }

    /// Opens `path` for writing, created with the tool's default mode when absent (0644 less the
    /// umask), truncated when it is a regular file (or appended to, with `appending`); nil with
    /// `errno` set when it cannot be opened.
    static func openForWriting(_ path: String, appending: Bool) -> FileHandle? {
        var descriptor: Int32
        repeat {
            descriptor = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (appending ? O_APPEND : O_TRUNC), FileMode.defaultMode)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { return nil }
        return FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
    }
}
