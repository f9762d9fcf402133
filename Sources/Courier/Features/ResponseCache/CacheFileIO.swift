import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations the disk store needs and Foundation does not offer: exclusive
/// creation, advisory locks that die with their process, positional reads and explicit mtimes.
///
/// The directory is input too: whoever else can write it may have put a symbolic link, a FIFO, a
/// device, a directory or another user's file where a store file should be. So every open here
/// refuses to follow a final symbolic link (`O_NOFOLLOW`), never blocks (`O_NONBLOCK`, cleared
/// once the file is accepted, so that a FIFO cannot hang the caller), and accepts only what
/// ``isStoreFile(_:)`` accepts: a regular file owned by this process's user, with one link (a hard
/// link to a file elsewhere would let a write reach it). Anything else is refused as if absent.
/// Paths are opened relative to the directory path rather than to a held directory descriptor:
/// an app or another process may remove and recreate the directory at any time, and a held
/// descriptor would then write into a directory nobody can see; the directory's own type and
/// owner are checked by ``directoryState(_:)``.
///
/// Every function reports failure with `nil` / `false` and never throws: the disk tier is best
/// effort, and a failure only means a miss or an entry not stored.
enum CacheFileIO {
    /// Creates `url` (failing if anything, a dangling link included, is there) for reading and
    /// writing, readable by its owner only, and takes an exclusive `flock` on it at once: a scan
    /// never removes a temporary file while its writer lives, and the lock is released by the
    /// kernel when a killed writer's descriptors close.
    static func createLocked(_ url: URL) -> Int32? {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX) == 0 else {
            close(descriptor)
            unlink(url.path)
            return nil
        }
        return descriptor
    }

    /// Opens `url` read-only if it is a store file (``isStoreFile(_:)``); `nil` otherwise, without
    /// following a link or blocking on a FIFO.
    static func openForReading(_ url: URL) -> Int32? {
        openStoreFile(url, writable: false)?.descriptor
    }

    /// Opens `url` (read-only, or for reading and writing) if it is a store file, with its status
    /// from the same `fstat`.
    static func openStoreFile(_ url: URL, writable: Bool) -> (descriptor: Int32, status: Status)? {
        let descriptor = open(url.path, (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard fstat(descriptor, &info) == 0, isStoreFile(info),
            // Reads and writes of a regular file do not block anyway; the flag is cleared so the
            // descriptor behaves as any other from here on.
            fcntl(descriptor, F_SETFL, 0) == 0
        else {
            close(descriptor)
            return nil
        }
        return (descriptor, Status(info))
    }

    /// Whether `info` describes a file the store may read or write: a regular file owned by this
    /// process's effective user, with exactly one link.
    static func isStoreFile(_ info: stat) -> Bool {
        (info.st_mode & S_IFMT) == S_IFREG && info.st_uid == geteuid() && info.st_nlink == 1
    }

    /// Writes all of `data` at the descriptor's current position.
    static func writeAll(_ descriptor: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { DescriptorIO.writeAll(descriptor, $0) }
    }

    /// Up to `count` bytes at `offset` (fewer only at the end of the file); `nil` on an error.
    static func read(_ descriptor: Int32, at offset: Int64, count: Int) -> Data? {
        guard count > 0 else { return Data() }
        // Read into memory of our own that becomes the Data's: `Data(count:)` would zero it first.
        guard let base = malloc(count) else { return nil }
        var total = 0
        while total < count {
            let result = pread(descriptor, base + total, count - total, off_t(offset) + off_t(total))
            if result < 0 {
                if errno == EINTR { continue }
                free(base)
                return nil
            }
            if result == 0 { break }
            total += result
        }
        guard total > 0 else {
            free(base)
            return Data()
        }
        return Data(bytesNoCopy: base, count: total, deallocator: .free)
    }

    /// The size of the open file.
    static func size(of descriptor: Int32) -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Size, modification time, identity and kind of the file at `url` (not following a final symlink).
    struct Status {
        var size: Int64
        var modified: Date
        var device: UInt64
        var inode: UInt64
        /// Whether it is a file the store may use (``isStoreFile(_:)``): else a link, a FIFO, a
        /// directory, a device or socket, another user's file, or a file with other links.
        var isStoreFile: Bool
        /// Whether it is a directory (which the store can neither use nor unlink).
        var isDirectory: Bool
    }

    static func status(_ url: URL) -> Status? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return Status(info)
    }

    static func status(of descriptor: Int32) -> Status? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Status(info)
    }

    /// Sets the file's access and modification times to `date` (the store's recency mark).
    @discardableResult
    static func setModified(_ url: URL, to date: Date) -> Bool {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        let nanoseconds = (date.timeIntervalSince1970 - seconds) * 1_000_000_000
        let time = timespec(tv_sec: Int(seconds), tv_nsec: Int(nanoseconds))
        let times = [time, time]
        // On the name itself: a link's target is never touched.
        return utimensat(AT_FDCWD, url.path, times, AT_SYMLINK_NOFOLLOW) == 0
    }

    /// Renames atomically, replacing `destination` if it exists.
    static func rename(_ source: URL, to destination: URL) -> Bool {
        posixRename(source.path, destination.path) == 0
    }

    /// Swaps the files at `first` and `second` atomically; `false` where the system or file
    /// system cannot, or when either is missing.
    static func exchange(_ first: URL, _ second: URL) -> Bool {
        ccurl_rename_exchange(first.path, second.path) == 0
    }

    /// Opens the file at `url` to be written again as a temporary file, from its start: a store
    /// file (``isStoreFile(_:)``: never through a link, never another user's file or a FIFO), locked
    /// (`flock`, without waiting: someone else's lock means it is theirs) and still linked; `nil`
    /// otherwise. It is not emptied: truncating a file to zero makes ext4 write it back when it is
    /// closed (`auto_da_alloc`), so the writer overwrites it and cuts it to length
    /// (``truncate(_:to:)``) instead. Returns the descriptor and the file's length.
    static func reclaim(_ url: URL) -> (descriptor: Int32, length: Int64)? {
        let descriptor = open(url.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        // Checked once the lock is held: a scan that removed the file held the lock meanwhile,
        // and then its link count is zero.
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &info) == 0, isStoreFile(info),
            fcntl(descriptor, F_SETFL, 0) == 0
        else {
            close(descriptor)
            return nil
        }
        return (descriptor, Int64(info.st_size))
    }

    /// Sets the file's length to `length` bytes.
    static func truncate(_ descriptor: Int32, to length: Int) -> Bool {
        ftruncate(descriptor, off_t(length)) == 0
    }

    /// Removes the file; `false` if it could not (including when it did not exist).
    @discardableResult
    static func remove(_ url: URL) -> Bool {
        unlink(url.path) == 0
    }

    /// Removes `url` unless a live process holds its `flock` (see ``createLocked(_:)``).
    /// Returns whether it was removed.
    @discardableResult
    static func removeIfUnlocked(_ url: URL) -> Bool {
        guard let descriptor = openForReading(url) else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return false }
        return unlink(url.path) == 0
    }

    /// Whether a live process holds the file's `flock`.
    static func isLocked(_ url: URL) -> Bool {
        guard let descriptor = openForReading(url) else { return false }
        defer { close(descriptor) }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }

    /// Releases the descriptor's `flock`.
    static func unlock(_ descriptor: Int32) {
        flock(descriptor, LOCK_UN)
    }

    /// Closes the descriptor.
    static func close(_ descriptor: Int32) {
        _ = closeDescriptor(descriptor)
    }

    /// Creates the directory and its parents if needed, private to this process's user (0700).
    static func createDirectory(_ url: URL) {
        try? FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// What the directory at `url` is: absent (the store creates it when it first writes), or
    /// present and usable (a directory owned by this process's user, as reached through the path
    /// the app gave, links included), or present and not usable (a file, another user's
    /// directory): then the store leaves it alone.
    enum DirectoryState: Equatable {
        case absent, usable, unusable
    }

    static func directoryState(_ url: URL) -> DirectoryState {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return errno == ENOENT ? .absent : .unusable }
        return (info.st_mode & S_IFMT) == S_IFDIR && info.st_uid == geteuid() ? .usable : .unusable
    }
}

extension CacheFileIO.Status {
    init(_ info: stat) {
        size = Int64(info.st_size)
        #if canImport(Darwin)
        let time = info.st_mtimespec
        #else
        let time = info.st_mtim
        #endif
        modified = Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000)
        device = UInt64(truncatingIfNeeded: info.st_dev)
        inode = UInt64(truncatingIfNeeded: info.st_ino)
        isStoreFile = CacheFileIO.isStoreFile(info)
        isDirectory = (info.st_mode & S_IFMT) == S_IFDIR
    }
}

// The C functions whose names the enum's own methods shadow.
private func posixRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
