import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening and reading request body files so that a body is exactly the caller's bytes or fails:
/// files are opened without blocking (a FIFO with no writer never stalls a thread), must still be
/// the regular file of the announced length, and a file that shrinks or grows while it is read
/// fails instead of sending fewer or more bytes than announced.
enum UploadFile {
    /// Opens `path` for reading without blocking; throws `.fileSystem` unless it is a regular file
    /// of exactly `length` bytes (symbolic links are followed). The descriptor is blocking again
    /// and close-on-exec.
    static func open(_ path: String, length: Int64, url: URL? = nil) throws(CourierError) -> Int32 {
        let descriptor = openNonBlocking(path)
        guard descriptor >= 0 else { throw failure("Cannot open the request body file \(path)", errno: errno, url: url) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            closeDescriptor(descriptor)
            throw failure("Cannot inspect the request body file \(path)", errno: code, url: url)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            closeDescriptor(descriptor)
            throw CourierError(.fileSystem, "The request body file \(path) is no longer a regular file.", url: url)
        }
        guard Int64(info.st_size) == length else {
            closeDescriptor(descriptor)
            throw CourierError(
                .fileSystem, "The request body file \(path) changed size (\(info.st_size) bytes where \(length) were announced).", url: url)
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        return descriptor
    }

    /// `open(2)` read-only, non-blocking and close-on-exec; `-1` with `errno` set on failure.
    static func openNonBlocking(_ path: String) -> Int32 {
        var descriptor: Int32
        repeat {
            descriptor = Foundation.open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        } while descriptor < 0 && errno == EINTR
        return descriptor
    }

    /// Whether `descriptor` holds a byte at `offset` (a file that grew past its announced length).
    static func hasByte(_ descriptor: Int32, at offset: Int64) -> Bool {
        var byte: UInt8 = 0
        var count: Int
        repeat {
            count = pread(descriptor, &byte, 1, off_t(offset))
        } while count < 0 && errno == EINTR
        return count > 0
    }

    /// The error for a file that grew while it was read.
    static func grewError(_ path: String, length: Int64, url: URL? = nil) -> CourierError {
        CourierError(.fileSystem, "The request body file \(path) grew past the announced \(length) bytes while it was sent.", url: url)
    }

    /// A `.fileSystem` error with `strerror(code)`.
    static func failure(_ message: String, errno code: Int32, url: URL?) -> CourierError {
        CourierError(
            .fileSystem, "\(message): \(String(cString: strerror(code)))",
            underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO), url: url)
    }

    /// `close(2)`.
    static func closeDescriptor(_ descriptor: Int32) {
        _ = Foundation.close(descriptor)
    }

    /// Copies exactly `length` bytes of the regular file at `source` to a new file at
    /// `destination`; `.fileSystem` (and no file left behind) when the source is not a regular
    /// file of that length or shrinks or grows while it is copied.
    static func copy(_ source: URL, length: Int64, to destination: URL) throws(CourierError) {
        let input = try open(source.path, length: length, url: source)
        defer { closeDescriptor(input) }
        var output: Int32
        repeat {
            output = Foundation.open(destination.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        } while output < 0 && errno == EINTR
        guard output >= 0 else { throw failure("Cannot create the upload copy \(destination.path)", errno: errno, url: source) }
        var completed = false
        defer {
            closeDescriptor(output)
            if !completed { _ = unlink(destination.path) }
        }
        let chunk = 1 << 20
        var buffer = [UInt8](repeating: 0, count: chunk)
        var copied: Int64 = 0
        while copied < length {
            let wanted = Int(min(Int64(chunk), length - copied))
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, wanted) }
            } while count < 0 && errno == EINTR
            if count < 0 { throw failure("Cannot read the request body file \(source.path)", errno: errno, url: source) }
            if count == 0 {
                throw CourierError(
                    .fileSystem, "The request body file \(source.path) shrank: it ended after \(copied) of \(length) bytes.", url: source)
            }
            var written = 0
            while written < count {
                let result = buffer.withUnsafeBytes { bytes in
                    write(output, UnsafeRawBufferPointer(rebasing: bytes[written..<count]).baseAddress, count - written)
                }
                if result < 0 {
                    if errno == EINTR { continue }
                    throw failure("Cannot write the upload copy \(destination.path)", errno: errno, url: source)
                }
                written += result
            }
            copied += Int64(count)
        }
        if hasByte(input, at: length) { throw grewError(source.path, length: length, url: source) }
        completed = true
    }
}
