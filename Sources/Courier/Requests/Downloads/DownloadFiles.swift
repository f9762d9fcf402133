import CourierSupport
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
/// the chunk being written. The file is one Courier keeps (a download's temporary or partial
/// file): opened as ``KeptFiles`` says, never through a link, never a FIFO or another user's file.
final class FileWriter {
    let url: URL
    private var descriptor: Int32
    /// Bytes in the file (its size when opened, plus everything written since).
    private(set) var length: Int64

    /// Opens `url` for writing, creating it (``KeptFiles/openOrCreate(_:access:what:)``: whatever
    /// else has the name is replaced, a directory fails); `truncatingTo` cuts it to that length
    /// first. A file shorter than that length is never lengthened: that fails with `.fileSystem`
    /// (the bytes it should hold are gone). `what` names the file in errors.
    init(url: URL, truncatingTo length: Int64?, what: String) throws {
        self.url = url
        descriptor = try CourierError.mappingFileSystem { () throws(FileSystemFailure) in
            try KeptFiles.openOrCreate(url, access: O_WRONLY, what: what).descriptor
        }
        if let length, lseek(descriptor, 0, SEEK_END) < off_t(length) {
            _ = systemClose(descriptor)
            throw CourierError(.fileSystem, "\(url.path) holds fewer than the \(length) bytes to keep: it changed on disk.", url: url)
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
    // The destination's own name counts, not what a link there points to: a link (dangling or
    // not), a FIFO or a device is a file that is there. `.removePreviousFile` removes the name
    // (never a link's target), and the move is a rename: nothing at the destination is ever
    // opened or written through, so a FIFO there cannot hang a download.
    var destinationIsDirectory: ObjCBool = false
    if (KeptFiles.kind(atPath: destination.path) ?? .absent) != .absent {
        // Following a link here: a link to a directory is not replaced either.
        _ = manager.fileExists(atPath: destination.path, isDirectory: &destinationIsDirectory)
        // `.removePreviousFile` replaces a file, never a directory (whose name a server chose).
        guard !destinationIsDirectory.boolValue else {
            throw CourierError(
                .fileSystem, "A directory exists at \(destination.path); a download never replaces a directory.",
                underlyingError: POSIXError(.EISDIR), url: destination)
        }
        // Nor a device or socket: removing `/dev/null` (which root may) breaks the whole machine.
        guard !isDeviceOrSocket(destination.path) else {
            throw CourierError(
                .fileSystem,
                "A device or socket is at \(destination.path); a download never replaces one (stream the body to it with a stream request).",
                underlyingError: POSIXError(.EEXIST), url: destination)
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

/// Whether the name `path` itself (not what a link there points to) is a character or block
/// device or a socket.
private func isDeviceOrSocket(_ path: String) -> Bool {
    var info = stat()
    guard lstat(path, &info) == 0 else { return false }
    let type = info.st_mode & S_IFMT
    return type == S_IFCHR || type == S_IFBLK || type == S_IFSOCK
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

    /// Throws `.resumeFailed` naming what did not match (the file is a kept file, ``KeptFiles``:
    /// anything else under its name is `.fileSystem`).
    func verify(_ url: URL) throws {
        guard expectedLength != nil || sha256 != nil else { return }
        guard let (descriptor, info) = KeptFiles.openExisting(url.path, access: O_RDONLY) else {
            throw CourierError(.fileSystem, "Could not read \(url.path) to check it: it is not the file Courier wrote.", url: url)
        }
        defer { _ = systemClose(descriptor) }
        let size = Int64(info.st_size)
        if let expectedLength, size != expectedLength {
            throw CourierError(
                .resumeFailed, "The download has \(size) bytes but \(expectedLength) were expected; the file was not delivered.", url: url)
        }
        if let sha256 {
            let actual = try Self.sha256(of: descriptor, url: url)
            guard actual.caseInsensitiveCompare(sha256) == .orderedSame else {
                throw CourierError(
                    .resumeFailed, "The download's SHA-256 is \(actual), not \(sha256.lowercased()); the file was not delivered.", url: url)
            }
        }
    }

    static func sha256(of descriptor: Int32, url: URL) throws -> String {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return hasher.finalize().hexString
    }
}
