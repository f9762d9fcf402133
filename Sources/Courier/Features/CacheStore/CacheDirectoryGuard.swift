import CourierLocking
import CourierSupport
import Foundation

/// Whether a ``DiskResponseStore`` may use its directory: a directory owned by this process's
/// user (``KeptFiles/directoryState(_:)``), created private (0700) when absent. Anything else
/// at the path (a file, another user's directory) makes the disk tier do nothing: every read is
/// a miss and nothing is written, removed or scanned there.
///
/// A directory found usable is remembered (a hit costs no extra system call); one that is absent
/// or unusable is looked at again on the next use, and a scan looks again whatever was found.
final class CacheDirectoryGuard: Sendable {
    let url: URL
    /// Guards whether the directory was found usable.
    private let usable = Locked(false)

    init(_ url: URL) {
        self.url = url
    }

    /// Whether the store may read the directory (an absent one holds nothing to read).
    func mayRead() -> Bool {
        if usable.withLock({ $0 }) { return true }
        return check() == .usable
    }

    /// Whether the store may write in the directory, creating it when absent.
    func mayWrite() -> Bool {
        if usable.withLock({ $0 }) { return true }
        return recreate()
    }

    /// Creates the directory if it is absent (an app may remove it at any time) and checks it again.
    func recreate() -> Bool {
        if check() == .absent {
            KeptFiles.createPrivateDirectory(url)
            return check() == .usable
        }
        return usable.withLock { $0 }
    }

    /// Forgets what was found, so the next use looks again (a scan's first step).
    func forget() {
        usable.withLock { $0 = false }
    }

    private func check() -> KeptFiles.DirectoryState {
        let state = KeptFiles.directoryState(url)
        usable.withLock { $0 = state == .usable }
        return state
    }
}
