import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
private let systemClose = Glibc.close
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
private let systemClose = Darwin.close
#endif

/// An open file written with plain POSIX calls: no buffering, so memory never holds more than
/// the chunk being written.
final class FileWriter {
    let url: URL
    private var descriptor: Int32
    /// Bytes in the file (its size when opened, plus everything written since).
    private(set) var length: Int64

    /// Opens `url` for writing, creating it; `truncatingTo` cuts it to that length first.
    init(url: URL, truncatingTo length: Int64?) throws {
        self.url = url
        descriptor = open(url.path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError(.fileSystem, "Could not open \(url.path) for writing: \(String(cString: strerror(errno))).", url: url)
        }
        // Truncate only when the size is wrong: on ext4, truncating a file to zero (even a new, empty
        // one) makes the kernel flush all of its data synchronously at close() ("auto_da_alloc"),
        // which cost half a second per gigabyte.
        if let length, lseek(descriptor, 0, SEEK_END) != off_t(length) {
            guard ftruncate(descriptor, off_t(length)) == 0 else {
                let reason = String(cString: strerror(errno))
                _ = systemClose(descriptor)
                throw CourierError(.fileSystem, "Could not truncate \(url.path): \(reason).", url: url)
            }
        }
        let end = lseek(descriptor, 0, SEEK_END)
        self.length = Int64(max(0, end))
    }

    deinit {
        close()
    }

    func write(_ data: Data) throws {
        guard descriptor >= 0 else { throw CourierError(.fileSystem, "\(url.path) is already closed.", url: url) }
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let written = systemWrite(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw CourierError(.fileSystem, "Writing to \(url.path) failed: \(String(cString: strerror(errno))).", url: url)
                }
                offset += written
            }
        }
        length += Int64(data.count)
    }

    /// Forces the written bytes to stable storage.
    func synchronize() {
        if descriptor >= 0 { _ = fsync(descriptor) }
    }

    func close() {
        if descriptor >= 0 {
            _ = systemClose(descriptor)
            descriptor = -1
        }
    }
}

/// Moves a finished download to its destination, honouring ``DownloadOptions``.
func moveDownload(_ source: URL, to destination: URL, options: DownloadOptions) throws {
    let manager = FileManager.default
    let directory = destination.deletingLastPathComponent()
    var isDirectory: ObjCBool = false
    if !manager.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
        guard options.contains(.createIntermediateDirectories) else {
            throw CourierError(
                .fileSystem, "The destination directory \(directory.path) does not exist (use .createIntermediateDirectories).",
                underlyingError: CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: directory.path]), url: destination)
        }
        do {
            try manager.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            throw CourierError(.fileSystem, "Could not create \(directory.path).", underlyingError: error, url: destination)
        }
    } else if !isDirectory.boolValue {
        throw CourierError(
            .fileSystem, "The destination's parent \(directory.path) is a file, not a directory.",
            underlyingError: POSIXError(.ENOTDIR), url: destination)
    }
    var destinationIsDirectory: ObjCBool = false
    if manager.fileExists(atPath: destination.path, isDirectory: &destinationIsDirectory) {
        // `.removePreviousFile` replaces a file, never a directory (whose name a server chose).
        guard !destinationIsDirectory.boolValue else {
            throw CourierError(
                .fileSystem, "A directory exists at \(destination.path); a download never replaces a directory.",
                underlyingError: POSIXError(.EISDIR), url: destination)
        }
        guard options.contains(.removePreviousFile) else {
            throw CourierError(
                .fileSystem, "A file already exists at \(destination.path) (use .removePreviousFile).",
                underlyingError: CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: destination.path]), url: destination)
        }
        do {
            try manager.removeItem(at: destination)
        } catch {
            throw CourierError(.fileSystem, "Could not remove the previous file at \(destination.path).", underlyingError: error, url: destination)
        }
    }
    do {
        try manager.moveItem(at: source, to: destination)
    } catch {
        throw CourierError(.fileSystem, "Could not move the download to \(destination.path).", underlyingError: error, url: destination)
    }
}

/// What a finished download must be, checked before it is delivered.
public struct DownloadIntegrity: Sendable, Hashable {
    /// The exact size in bytes, if known.
    public var expectedLength: Int64?
    /// The SHA-256 of the content, as hex (case-insensitive).
    public var sha256: String?

    /// Creates a check; give either or both.
    public init(expectedLength: Int64? = nil, sha256: String? = nil) {
        self.expectedLength = expectedLength
        self.sha256 = sha256
    }

    /// Throws `.resumeFailed` naming what did not match.
    func verify(_ url: URL) throws {
        let size = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? NSNumber)?.int64Value ?? -1
        if let expectedLength, size != expectedLength {
            throw CourierError(
                .resumeFailed, "The download has \(size) bytes but \(expectedLength) were expected; the file was not delivered.", url: url)
        }
        if let sha256 {
            let actual = try Self.sha256(of: url)
            guard actual.caseInsensitiveCompare(sha256) == .orderedSame else {
                throw CourierError(
                    .resumeFailed, "The download's SHA-256 is \(actual), not \(sha256.lowercased()); the file was not delivered.", url: url)
            }
        }
    }

    static func sha256(of url: URL) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw CourierError(.fileSystem, "Could not read \(url.path) to check its SHA-256.", url: url)
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finalize().hexString
    }
}
