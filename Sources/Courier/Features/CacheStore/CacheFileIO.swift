import CCourierSystem
import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few POSIX file operations the disk store needs and Foundation does not offer: exclusive
/// creation, advisory locks that die with their process, positional reads and explicit mtimes.
///
/// The directory is input too: every open here goes through ``KeptFiles`` (no final symbolic
/// link followed, no blocking on a FIFO, only a regular file owned by this process's user with
/// one link accepted; anything else is refused as if absent). Paths are opened relative to the
/// directory path rather than to a held directory descriptor: an app or another process may
/// remove and recreate the directory at any time, and a held descriptor would then write into a
/// directory nobody can see; the directory's own type and owner are checked by
/// ``KeptFiles/directoryState(_:)``.
///
/// Every function reports failure with `nil` / `false` and never throws: the disk tier is best
/// effort, and a failure only means a miss or an entry not stored.
enum CacheFileIO {
    /// Creates `url` (failing if anything, a dangling link included, is there) for reading and
    /// writing, readable by its owner only, and takes an exclusive `flock` on it at once: a scan
    /// never removes a temporary file while its writer lives, and the lock is released by the
    /// kernel when a killed writer's descriptors close.
    static func createLocked(_ url: URL) -> Int32? {
        guard let (descriptor, _) = KeptFiles.createExclusive(url.path) else { return nil }
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
        KeptFiles.openExisting(url.path, access: writable ? O_RDWR : O_RDONLY).map { ($0.descriptor, Status($0.info)) }
    }

    /// Whether `info` describes a file the store may read or write (``KeptFiles/isKept(_:)``): a
    /// regular file owned by this process's effective user, with exactly one link.
    static func isStoreFile(_ info: stat) -> Bool {
        KeptFiles.isKept(info)
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

    /// Size, modification time, identity and kind of a file.
    typealias Status = KeptFiles.Status

    /// The status of the file at `url` (not following a final symlink).
    static func status(_ url: URL) -> Status? {
        KeptFiles.status(atPath: url.path)
    }

    static func status(of descriptor: Int32) -> Status? {
        KeptFiles.status(of: descriptor)
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
        csystem_rename_exchange(first.path, second.path) == 0
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
}

// The C functions whose names the enum's own methods shadow.
private func posixRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
