import Foundation
import CourierLocking

/// Writes one response into a ``CacheStore`` as its body arrives, made by
/// ``CacheStore/makeWriter(for:head:url:version:)``; nothing is visible to readers until
/// ``commit()``.
///
/// The first ``CacheStore/spillThreshold`` bytes are kept in memory; past them, with a disk
/// directory, everything goes to a temporary file in the cache directory (locked while the writer
/// lives), so a large body is never held in memory. Without a disk directory the body stays in
/// memory up to the cache's ``CacheStore/maximumEntrySize``. A body growing past
/// ``CacheStore/maximumEntrySize`` makes the writer discard itself.
///
/// ```swift
/// let writer = cache.makeWriter(for: key, head: head, url: url, version: nil)
/// for piece in pieces where !writer.append(piece) { break }   // false: too large, discarded
/// let entry = writer.commit()                                  // nil if discarded
/// ```
///
/// Thread-safe; meant to be fed by one producer (a transfer's sink, whose events are serial).
final class ResponseCacheWriter: Sendable {
    private struct Spill: Sendable {
        let url: URL
        let descriptor: Int32
    }

    private enum WriterPhase: Sendable { case open, committed, discarded }

    private struct State: Sendable {
        var phase = WriterPhase.open
        var buffer = Data()
        var spill: Spill?
        /// The spilled body's block checksums, computed as it is written.
        var checksums = CacheBodyChecksums()
        var length: Int64 = 0
    }

    /// The key the entry is stored under.
    let key: ResponseCacheKey
    private let cache: CacheStore
    private let head: CacheEntryHead
    private let url: URL?
    private let version: Int?
    /// Held across the file writes of `append`: only the one producer takes it, and
    /// `commit`/`discard`/`deinit` must wait for an append in progress anyway.
    private let state = Locked(State())

    init(cache: CacheStore, key: ResponseCacheKey, head: CacheEntryHead, url: URL?, version: Int?) {
        self.cache = cache
        self.key = key
        self.head = head
        self.url = url
        self.version = version
    }

    /// Bytes appended so far.
    var length: Int64 { state.withLock { $0.length } }

    /// Adds the next piece of the body. Returns `false` (and discards the entry) once the body
    /// would exceed ``CacheStore/maximumEntrySize`` or the temporary file cannot be written;
    /// also `false` after ``commit()`` or ``discard()``.
    @discardableResult
    func append(_ data: Data) -> Bool {
        state.withLock { state -> Bool in
            guard state.phase == .open else { return false }
            guard state.length + Int64(data.count) <= cache.maximumEntrySize else {
                Self.discard(&state)
                return false
            }
            state.length += Int64(data.count)
            if let spill = state.spill {
                cache.willWriteToDisk()
                guard CacheFileIO.writeAll(spill.descriptor, data) else {
                    Self.discard(&state)
                    return false
                }
                state.checksums.add(data)
                return true
            }
            guard let disk = cache.disk, state.buffer.count + data.count > CacheStore.spillThreshold else {
                state.buffer.append(data)
                return true
            }
            cache.willWriteToDisk()
            guard let (url, descriptor) = disk.createTemporaryFile() else {
                Self.discard(&state)
                return false
            }
            state.spill = Spill(url: url, descriptor: descriptor)
            guard CacheFileIO.writeAll(descriptor, CacheEntryFormat.bodyMagic), CacheFileIO.writeAll(descriptor, state.buffer),
                CacheFileIO.writeAll(descriptor, data)
            else {
                Self.discard(&state)
                return false
            }
            state.checksums.add(state.buffer)
            state.checksums.add(data)
            state.buffer = Data()
            return true
        }
    }

    /// Publishes the entry (memory and disk), replacing what was stored for the key, and returns
    /// it; `nil` if the writer was discarded or already committed, or the disk write failed for
    /// a body that lives only on disk.
    func commit() -> StoredEntry? {
        let taken = state.withLock { state -> (buffer: Data, spill: DiskResponseStore.SpilledBody?)? in
            guard state.phase == .open else { return nil }
            defer {
                state.buffer = Data()
                state.spill = nil
            }
            guard let spill = state.spill else {
                state.phase = .committed
                return (state.buffer, nil)
            }
            // The body file ends with its blocks' checksums.
            let sums = state.checksums.finish()
            guard CacheFileIO.writeAll(spill.descriptor, CacheBodyChecksums.trailer(sums)) else {
                Self.discard(&state)
                return nil
            }
            state.phase = .committed
            return (Data(), DiskResponseStore.SpilledBody(url: spill.url, descriptor: spill.descriptor, length: state.length, blockSums: sums))
        }
        guard let taken else { return nil }
        return cache.publish(
            StoredEntry(key: key, head: head, url: url, version: version, body: .data(taken.buffer)),
            spilledBody: taken.spill)
    }

    /// Drops what was written (removing the temporary file); nothing is stored. Idempotent.
    func discard() {
        state.withLock { Self.discard(&$0) }
    }

    private static func discard(_ state: inout State) {
        guard state.phase == .open else { return }
        state.phase = .discarded
        state.buffer = Data()
        state.checksums = CacheBodyChecksums()
        if let spill = state.spill {
            CacheFileIO.remove(spill.url)
            CacheFileIO.close(spill.descriptor)
            state.spill = nil
        }
    }

    deinit {
        discard()
    }
}
