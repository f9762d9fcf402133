import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An exclusive, advisory lock on a file (`flock`), held until ``release()`` or the process ends.
/// It excludes other processes and other open descriptions in this process alike.
final class FileLock {
    private var descriptor: Int32

    /// Takes the lock without waiting; `nil` if someone else holds it.
    init?(url: URL) throws {
        descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CourierError(.fileSystem, "Could not open the lock file \(url.path): \(String(cString: strerror(errno))).", url: url)
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            _ = close(descriptor)
            // deinit still runs for a failed class initializer: make it a no-op.
            descriptor = -1
            return nil
        }
    }

    deinit {
        release()
    }

    func release() {
        guard descriptor >= 0 else { return }
        _ = flock(descriptor, LOCK_UN)
        _ = close(descriptor)
        descriptor = -1
    }

    /// Whether the lock on `url` is free right now (for listing and pruning).
    static func isFree(_ url: URL) -> Bool {
        guard let lock = try? FileLock(url: url) else { return false }
        lock.release()
        return true
    }
}
