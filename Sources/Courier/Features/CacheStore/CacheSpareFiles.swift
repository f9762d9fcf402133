import CourierLocking
import CourierSupport
import Foundation

/// Temporary files a ``DiskResponseStore`` keeps for its next writes (a ``FastPaths`` speed trick).
///
/// A head is replaced by swapping it with the new one (``CacheFileIO/exchange(_:_:)``), so the
/// replaced file comes back under the temporary name, and the next write reuses it instead of
/// creating a file. Creating a file is the expensive part of a write on a busy ext4: with many
/// recently deleted files the inode allocator's search took about 0.35 ms a file on the benchmark
/// machine, against about 0.01 ms to write 10 KiB into an existing one (`Benchmarks/PROFILES.md`).
/// A `304` that rewrites a head therefore no longer creates a file.
///
/// Each spare stays locked (`flock`) like any temporary file while this process holds it, so a
/// scan by another cache leaves it alone; left behind by a killed process, it is an unlocked
/// temporary file the next scan removes. What is left when the store goes is removed.
final class CacheSpareFiles: Sendable {
    /// The most spares kept; one is enough for a stream of rewrites, a few cover concurrent ones.
    static let limit = 4

    /// A locked, open temporary file, positioned at its start (its old bytes are overwritten).
    struct Spare {
        let url: URL
        let descriptor: Int32
        /// The file's length when it was kept: a write of fewer bytes must cut it to length.
        let length: Int64
    }

    private let spares = Locked<[Spare]>([])

    /// A spare, if there is one; the caller owns it from then on.
    func take() -> Spare? {
        spares.withLock { $0.popLast() }
    }

    /// Keeps the file now at `url` (a replaced head under a temporary name) as a spare, or
    /// removes it when it cannot be reclaimed or enough are kept. Only a store file is ever kept
    /// (``CacheFileIO/reclaim(_:)``): a link or a FIFO that stood where the head was is removed
    /// by name, and what a link pointed to is never opened, let alone written.
    func keep(_ url: URL) {
        guard let (descriptor, length) = CacheFileIO.reclaim(url) else {
            if let status = CacheFileIO.status(url), !status.isKept {
                if !status.isDirectory { CacheFileIO.remove(url) }
            } else {
                // Locked by another process's scan (which removes it), or gone: nothing to keep.
                CacheFileIO.removeIfUnlocked(url)
            }
            return
        }
        let kept = spares.withLock { spares -> Bool in
            guard spares.count < Self.limit else { return false }
            spares.append(Spare(url: url, descriptor: descriptor, length: length))
            return true
        }
        guard !kept else { return }
        CacheFileIO.remove(url)
        CacheFileIO.close(descriptor)
    }

    deinit {
        for spare in spares.withLock({ $0 }) {
            CacheFileIO.remove(spare.url)
            CacheFileIO.close(spare.descriptor)
        }
    }
}
