import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive, advisory lock on a file (`flock`), held until ``release()`` or the process ends.
/// It excludes other processes and other open descriptions in this process alike.
///
/// The lock file is removed when the lock is released with ``releaseRemovingFile()``, so that a
/// finished or discarded download leaves nothing behind. Removing a lock file is safe because
/// taking the lock checks, once it is held, that the file locked is still the one at the path:
/// a process that opened the file before it was removed, and locked it after, starts again.
///
/// The lock file is a kept file (``KeptFiles``): a link, a FIFO or another user's file under its
/// name is removed and replaced, never opened; a directory there is a `.fileSystem` error.
final class FileLock {
    private var descriptor: Int32
    private let path: String

    /// Takes the lock without waiting; `nil` if someone else holds it.
    init?(url: URL) throws(CourierError) {
        path = url.path
        descriptor = -1
        // A few attempts: each failed check means another process removed the file in between.
        for _ in 0..<16 {
            let (opened, _) = try CourierError.mappingFileSystem { () throws(FileSystemFailure) in
                try KeptFiles.openOrCreate(url, access: O_RDWR, what: "the download's lock file")
            }
            guard flock(opened, LOCK_EX | LOCK_NB) == 0 else {
                _ = close(opened)
                // deinit still runs for a failed class initializer: `descriptor` is -1, a no-op.
                return nil
            }
            if Self.isStillAtPath(opened, path) {
                descriptor = opened
                return
            }
            _ = close(opened)
        }
        return nil
    }

    deinit {
        release()
    }

    /// Releases the lock, leaving the lock file in place.
    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        _ = close(descriptor)
        descriptor = -1
    }

    /// Removes the lock file, then releases the lock.
    func releaseRemovingFile() {
        guard descriptor >= 0 else { return }
        _ = unlink(path)
        release()
    }

    /// Whether the lock on `url` is free right now (for listing and pruning); a free lock's file is removed.
    static func isFree(_ url: URL) -> Bool {
        guard let lock = try? FileLock(url: url) else { return false }
        lock.releaseRemovingFile()
        return true
    }

    /// Whether `descriptor` is the file at `path` (not one removed, or replaced, since it was
    /// opened), and still a kept file: one link, the name itself, not a link to it.
    private static func isStillAtPath(_ descriptor: Int32, _ path: String) -> Bool {
        var opened = stat()
        var current = stat()
        guard fstat(descriptor, &opened) == 0, KeptFiles.isKept(opened), lstat(path, &current) == 0 else { return false }
        return opened.st_ino == current.st_ino && opened.st_dev == current.st_dev
    }
}
