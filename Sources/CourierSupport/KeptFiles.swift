import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening, creating and removing the files Courier keeps in directories of its own: the
/// response cache's disk store, the download store, the session's temporary files.
///
/// Those directories are input too: whoever else can write one may have put a symbolic link, a
/// FIFO, a device, a directory, another user's file or a second link to a file elsewhere under a
/// name Courier uses. So an open here never follows a final symbolic link (`O_NOFOLLOW`), never
/// blocks (`O_NONBLOCK`, cleared once the file is accepted: a FIFO cannot hang the caller), and
/// accepts only a *kept file* (``isKept(_:)``): a regular file owned by this process's effective
/// user with exactly one link (a hard link to a file elsewhere would let a write reach it).
/// Files are created exclusively (`O_EXCL`) and readable by their owner only (`0600`),
/// directories private (`0700`). A name is removed with `unlink`, which removes a link, never
/// its target, and never a directory.
package enum KeptFiles {
    /// What the name at a path is, without following a final link (`lstat`).
    package enum Kind: Equatable {
        /// Nothing: the name is free.
        case absent
        /// A kept file (``isKept(_:)``).
        case kept
        /// A directory, which Courier neither uses nor removes.
        case directory
        /// Anything else: a link, a FIFO, a socket, a device, another user's file, a file with
        /// other links. Courier never opens it and may remove the name.
        case foreign
    }

    /// What a directory Courier keeps files in is: absent (created when first written), usable
    /// (a directory owned by this process's user, as reached through the path the app gave,
    /// links included: where the app keeps it is the app's business), or unusable (a file,
    /// another user's directory).
    package enum DirectoryState: Equatable {
        case absent, usable, unusable
    }

    /// Whether `info` describes a file Courier may read or write: a regular file owned by this
    /// process's effective user, with exactly one link.
    package static func isKept(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
    }

    package static func kind(_ info: stat) -> Kind {
        if (info.st_mode & S_IFMT) == S_IFDIR { return .directory }
        return isKept(info) ? .kept : .foreign
    }

    /// What is at `path`; `nil` when `lstat` fails for another reason than an absent name.
    package static func kind(atPath path: String) -> Kind? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT ? .absent : nil }
        return kind(info)
    }

    /// Opens the kept file at `path` with `access` (`O_RDONLY`, `O_WRONLY` or `O_RDWR`); `nil`
    /// when nothing is there, when it is not a kept file, or on an error (`errno` then says
    /// which, unless the file was refused).
    package static func openExisting(_ path: String, access: Int32) -> (descriptor: Int32, info: stat)? {
        guard case .opened(let descriptor, let info) = open(path, access: access) else { return nil }
        return (descriptor, info)
    }

    /// Opens the kept file at `path` with `access`, creating it when the name is free. Anything
    /// else under the name (a link, a FIFO, a device, another user's file, a file with other
    /// links) is never opened as such: the name is removed and a new file created in its place.
    /// A directory is never removed: `what` (e.g. "the download's partial file") names the file
    /// in the `.fileSystem` error that says so, as in any other failure.
    package static func openOrCreate(_ url: URL, access: Int32, what: String) throws(FileSystemFailure) -> (descriptor: Int32, info: stat) {
        let path = url.path
        // A few rounds: each one that fails to settle the name means someone changed it in between.
        for _ in 0..<8 {
            let found: Kind
            switch open(path, access: access) {
            case .opened(let descriptor, let info):
                return (descriptor, info)
            case .refused(let info):
                found = kind(info)
            case .failed(let code):
                guard let kind = kind(atPath: path) else { throw failure("Could not open \(what) \(path)", errno: code, url: url) }
                // A kept file that cannot be opened (no permission, no descriptors left) is an error.
                if kind == .kept { throw failure("Could not open \(what) \(path)", errno: code, url: url) }
                found = kind
            }
            switch found {
            case .absent:
                if let created = createExclusive(path, access: access) { return created }
                if errno != EEXIST { throw failure("Could not create \(what) \(path)", errno: errno, url: url) }
            case .directory:
                throw FileSystemFailure(
                    "A directory is where \(what) should be (\(path)); Courier never removes a directory: remove it.",
                    underlyingError: POSIXError(.EISDIR), url: url)
            case .kept, .foreign:
                if !removeName(path), errno != ENOENT {
                    throw failure("Could not remove what was at \(path) in place of \(what)", errno: errno, url: url)
                }
            }
        }
        throw FileSystemFailure("Could not open \(what) \(path): the name kept changing while it was opened.", url: url)
    }

    /// Creates the file at `path` (failing if anything, a dangling link included, is there),
    /// readable and writable by its owner only; `nil` with `errno` set on failure.
    package static func createExclusive(_ path: String, access: Int32 = O_RDWR) -> (descriptor: Int32, info: stat)? {
        var descriptor: Int32
        repeat {
            descriptor = Foundation.open(path, access | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            _ = Foundation.close(descriptor)
            errno = code
            return nil
        }
        return (descriptor, info)
    }

    /// Removes the name at `path` (a link itself, never its target; never a directory).
    /// Returns whether it did, with `errno` set when not.
    @discardableResult
    package static func removeName(_ path: String) -> Bool {
        unlink(path) == 0
    }

    /// Reads the whole of an open kept file of `info`'s size, if it is at most `limit` bytes;
    /// `nil` when it is larger or a read fails.
    package static func readAll(_ descriptor: Int32, info: stat, limit: Int) -> Data? {
        guard info.st_size >= 0, Int64(info.st_size) <= Int64(limit) else { return nil }
        var data = Data(count: Int(info.st_size))
        var total = 0
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            while total < buffer.count, let base = buffer.baseAddress {
                let count = pread(descriptor, base + total, buffer.count - total, off_t(total))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return count == 0 }
                total += count
            }
            return true
        }
        guard complete else { return nil }
        // A file that shrank since `fstat` gives what it holds now.
        return data.prefix(total)
    }

    /// Size, modification time, identity and kind of a file.
    package struct Status {
        package var size: Int64
        package var modified: Date
        package var device: UInt64
        package var inode: UInt64
        /// Whether it is a kept file (``KeptFiles/isKept(_:)``): else a link, a FIFO, a
        /// directory, a device or socket, another user's file, or a file with other links.
        package var isKept: Bool
        /// Whether it is a directory (which Courier neither uses as a file nor removes).
        package var isDirectory: Bool
    }

    /// The status of the name at `path`, not following a final link (`lstat`).
    package static func status(atPath path: String) -> Status? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return Status(info)
    }

    package static func status(of descriptor: Int32) -> Status? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Status(info)
    }

    // MARK: - Directories

    /// What the directory at `url` is (see ``DirectoryState``). With `sharedSticky`, a directory
    /// root owns with the sticky bit set (`/tmp`) is usable too: there no other user can remove,
    /// rename or replace a file Courier created, only make names of their own, which
    /// ``openOrCreate(_:access:what:)`` never opens.
    package static func directoryState(_ url: URL, sharedSticky: Bool = false) -> DirectoryState {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return errno == ENOENT ? .absent : .unusable }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return .unusable }
        if info.st_uid == geteuid() { return .usable }
        return sharedSticky && info.st_uid == 0 && (info.st_mode & S_ISVTX) != 0 ? .usable : .unusable
    }

    /// Creates the directory and its missing parents, private to this process's user (0700).
    package static func createPrivateDirectory(_ url: URL) {
        try? FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Makes sure Courier may keep files in the directory at `url`, creating it private when
    /// absent; throws `.fileSystem`, naming `what` (e.g. "the download store"), when the path is
    /// a file, another user's directory (`sharedSticky`: see ``directoryState(_:sharedSticky:)``),
    /// or cannot be created.
    package static func prepareDirectory(_ url: URL, for what: String, sharedSticky: Bool = false) throws(FileSystemFailure) {
        var state = directoryState(url, sharedSticky: sharedSticky)
        if state == .absent {
            createPrivateDirectory(url)
            state = directoryState(url, sharedSticky: sharedSticky)
        }
        switch state {
        case .usable:
            return
        case .absent:
            throw FileSystemFailure("Could not create \(what) at \(url.path).", underlyingError: POSIXError(.ENOENT), url: url)
        case .unusable:
            throw FileSystemFailure(
                "Courier does not use \(url.path) for \(what): it is not a directory owned by this process's user (\(geteuid())).",
                underlyingError: POSIXError(.EACCES), url: url)
        }
    }

    // MARK: - Internals

    private enum Opened {
        case opened(descriptor: Int32, info: stat)
        /// Opened, but not a kept file (closed again).
        case refused(stat)
        /// `open` or `fstat` failed with this `errno`.
        case failed(Int32)
    }

    private static func open(_ path: String, access: Int32) -> Opened {
        var descriptor: Int32
        repeat {
            descriptor = Foundation.open(path, access | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        } while descriptor < 0 && errno == EINTR
        guard descriptor >= 0 else { return .failed(errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            _ = Foundation.close(descriptor)
            return .failed(code)
        }
        guard isKept(info) else {
            _ = Foundation.close(descriptor)
            return .refused(info)
        }
        // Reads and writes of a regular file do not block anyway; the flag is cleared so the
        // descriptor behaves as any other from here on.
        guard fcntl(descriptor, F_SETFL, 0) == 0 else {
            let code = errno
            _ = Foundation.close(descriptor)
            return .failed(code)
        }
        return .opened(descriptor: descriptor, info: info)
    }

    private static func failure(_ message: String, errno code: Int32, url: URL) -> FileSystemFailure {
        FileSystemFailure(
            "\(message): \(String(cString: strerror(code))).",
            underlyingError: POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO), url: url)
    }
}

extension KeptFiles.Status {
    package init(_ info: stat) {
        size = Int64(info.st_size)
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        modified = Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        isKept = KeptFiles.isKept(info)
        isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
    }
}
