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
/// Every function reports failure with `nil` / `false` and never throws: the disk tier is best
/// effort, and a failure only means a miss or an entry not stored.
enum CacheFileIO {
    /// Creates `url` (failing if it exists) for reading and writing, and takes an exclusive
    /// `flock` on it at once: a scan never removes a temporary file while its writer lives, and
    /// the lock is released by the kernel when a killed writer's descriptors close.
    static func createLocked(_ url: URL) -> Int32? {
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX) == 0 else {
            close(descriptor)
            unlink(url.path)
            return nil
        }
        return descriptor
    }

    /// Opens `url` read-only.
    static func openForReading(_ url: URL) -> Int32? {
        let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
        return descriptor >= 0 ? descriptor : nil
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

    /// The whole file behind `descriptor` (from offset 0), if it is at most `limit` bytes.
    static func readWhole(_ descriptor: Int32, limit: Int) -> Data? {
        guard let size = size(of: descriptor), size <= Int64(limit) else { return nil }
        guard let data = read(descriptor, at: 0, count: Int(size)), data.count == Int(size) else { return nil }
        return data
    }

    /// The size of the open file.
    static func size(of descriptor: Int32) -> Int64? {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    /// Size, modification time and identity of the file at `url` (not following a final symlink).
    struct Status {
        var size: Int64
        var modified: Date
        var device: UInt64
        var inode: UInt64
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
        return utimensat(AT_FDCWD, url.path, times, 0) == 0
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

    /// Opens the file at `url` to be written again as a temporary file, from its start: locked
    /// (`flock`, without waiting: someone else's lock means it is theirs) and still linked; `nil`
    /// otherwise. It is not emptied: truncating a file to zero makes ext4 write it back when it is
    /// closed (`auto_da_alloc`), so the writer overwrites it and cuts it to length
    /// (``truncate(_:to:)``) instead. Returns the descriptor and the file's length.
    static func reclaim(_ url: URL) -> (descriptor: Int32, length: Int64)? {
        let descriptor = open(url.path, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        var info = stat()
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0, fstat(descriptor, &info) == 0, info.st_nlink > 0 else {
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

    /// Creates the directory and its parents if needed.
    static func createDirectory(_ url: URL) {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
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
    }
}

// The C functions whose names the enum's own methods shadow.
private func posixRename(_ source: String, _ destination: String) -> Int32 {
    rename(source, destination)
}

private func closeDescriptor(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
