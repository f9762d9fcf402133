import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Supplies a request body to libcurl's read callback: bytes in memory, or a file read piece by
/// piece from a descriptor opened when the transfer starts and closed when it ends.
/// A file body is exactly its announced length: a file that shrinks or grows while it is sent fails.
///
/// Loop-thread confined, like the transfer that owns it.
final class CurlBodySource {
    private enum Storage {
        case data(Data)
        case file(descriptor: Int32, path: String)
        case stream(BodyStream)
    }

    /// What ``read(into:)`` returns when a stream body has no bytes yet (libcurl is told to pause
    /// sending until the stream's waker runs).
    static let wouldBlock = -1

    private var storage: Storage
    /// Bytes the request announces (`Content-Length`).
    let length: Int64
    /// Bytes handed to libcurl so far.
    private(set) var offset: Int64 = 0
    /// Why reading failed, once it has.
    private(set) var failure: CourierError?

    /// Opens `body` for reading; throws `.fileSystem` when a file body cannot be opened.
    init(_ body: TransportBody, url: URL) throws(CourierError) {
        length = body.length
        switch body {
        case .empty:
            storage = .data(Data())
        case .data(let data):
            storage = .data(data)
        case .file(let fileURL, _):
            // Opened without blocking (a FIFO would stall the event loop in open(2)) and checked
            // to still be the regular file of the announced length.
            let path = fileURL.path
            storage = .file(descriptor: try UploadFile.open(path, length: length, url: url), path: path)
        case .stream(let stream):
            try stream.claim(url: url)
            storage = .stream(stream)
        }
    }

    /// The stream of a stream body.
    var stream: BodyStream? {
        if case .stream(let stream) = storage { stream } else { nil }
    }

    deinit { close() }

    /// Releases the file descriptor (when the transfer completes); later reads fail.
    func close() {
        if case .file(let descriptor, _) = storage {
            closeFileDescriptor(descriptor)
            storage = .data(Data())
            offset = length
        } else if case .stream(let stream) = storage {
            stream.stop()
        }
    }

    /// Fills `buffer` with the next bytes; returns the count (0 at the end) or `nil` after a failure,
    /// which is recorded in ``failure``.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        let wanted = Int(min(Int64(buffer.count), length - offset))
        switch storage {
        case .stream(let stream):
            switch stream.read(into: buffer) {
            case .bytes(let count):
                offset += Int64(count)
                return count
            case .end:
                return 0
            case .wait:
                return Self.wouldBlock
            case .failed:
                failure = stream.failure
                return nil
            }
        case .data(let data):
            guard wanted > 0 else { return 0 }
            let start = Int(offset)
            data.withUnsafeBytes { bytes in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[start..<start + wanted]))
            }
            offset += Int64(wanted)
            return wanted
        case .file(let descriptor, let path):
            guard wanted > 0 else { return 0 }
            var count: Int
            repeat {
                count = pread(descriptor, buffer.baseAddress, wanted, off_t(offset))
            } while count < 0 && errno == EINTR
            if count < 0 {
                let code = errno
                failure = CourierError(
                    .fileSystem, "Cannot read the request body file \(path): \(String(cString: strerror(code)))",
                    underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO))
                return nil
            }
            if count == 0 {
                failure = CourierError(.fileSystem, "The request body file \(path) ended after \(offset) of \(length) bytes")
                return nil
            }
            offset += Int64(count)
            // Exactly `length` bytes go out: a file that grew past them fails rather than
            // leaving bytes the request did not announce.
            if offset == length, UploadFile.hasByte(descriptor, at: length) {
                failure = UploadFile.grewError(path, length: length)
                return nil
            }
            return count
        }
    }

    /// Moves the read position to `position` (libcurl rewinds when it resends on a fresh
    /// connection); returns false when the position is outside the body.
    func seek(to position: Int64) -> Bool {
        // A stream cannot go back; "back" to where it is costs nothing.
        if case .stream = storage { return position == offset }
        guard position >= 0, position <= length else { return false }
        offset = position
        return true
    }
}

/// `close(2)`, out of reach of ``CurlBodySource/close()``, which shadows it inside the class.
private func closeFileDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
