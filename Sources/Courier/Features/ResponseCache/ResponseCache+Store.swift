import Foundation

/// The store API both cache policies use: look up, write as a body arrives, freshen a head after
/// a `304`, and keep the disk store within its capacity.
extension ResponseCache {
    /// The key the HTTP cache stores a `GET` (and serves a `HEAD`) of `url` under:
    /// `HTTP GET <url>`, with scheme and host lower-cased, a default port and the fragment
    /// dropped and the query kept in its order (RFC 9111 keys on the URI as sent). Request
    /// headers do not take part: `Vary` is checked against the stored request fields instead.
    static func httpKey(for url: URL) -> ResponseCacheKey {
        ResponseCacheKey(rawValue: "HTTP GET \(url.normalisedKey(sortingQuery: false))")
    }

    /// The entry stored for `key`, from memory, else from disk (a disk entry with a small body is
    /// then kept in memory too); marks it used, for both tiers' least-recently-used order.
    func entry(for key: ResponseCacheKey) -> StoredEntry? {
        let now = now()
        if let (inMemory, marksDisk) = withMemory({ $0.hit(key, at: now, diskMarkInterval: Self.diskUseMarkInterval) }) {
            if marksDisk { disk?.touch(key, at: now) }
            return inMemory
        }
        guard let onDisk = disk?.read(key, touchingAt: now) else { return nil }
        if case .data = onDisk.body { withMemory { $0.insert(onDisk, markedOnDiskAt: now) } }
        return onDisk
    }

    /// How often at most a hit in memory marks the disk copy used (its modification time, which
    /// orders the disk's least-recently-used eviction across processes): once a minute.
    static let diskUseMarkInterval: TimeInterval = 60

    /// A writer that stores a response for `key` as its body arrives; see ``ResponseCacheWriter``.
    func makeWriter(for key: ResponseCacheKey, head: CacheEntryHead, url: URL?, version: Int?) -> ResponseCacheWriter {
        ResponseCacheWriter(cache: self, key: key, head: head, url: url, version: version)
    }

    /// Replaces the head of the entry stored for `key` (after a `304 Not Modified`), leaving its
    /// body untouched: on disk only the small head file is rewritten. Returns the updated entry,
    /// or `nil` when nothing is stored for `key`.
    @discardableResult
    func updateHead(for key: ResponseCacheKey, _ head: CacheEntryHead) -> StoredEntry? {
        // Most 304s change only `Date` (and perhaps `Expires` or `Age`): memory takes the new head,
        // and the disk copy is left as it is. Another process reading it sees the older times
        // and revalidates once more, which costs a 304; rewriting the head file on every 304
        // cost ten times the exchange itself (Benchmarks/PROFILES.md, workload M).
        if let updated = withMemory({ $0.updateHeadIfOnlyTimesChanged(of: key, to: head) }) { return updated }
        // An inline entry memory holds is written with its new head as it is, without reading the
        // file back first (a decode and a checksum of the whole file).
        if let disk, let held = withMemory({ $0.value(for: key) }), let updated = disk.replaceHead(of: held, with: head, now: now()) {
            withMemory { $0.insert(updated) }
            return updated
        }
        if let disk, let updated = disk.updateHead(of: key, to: head, now: now()) {
            withMemory { memory in
                if case .data = updated.body { memory.insert(updated) } else { memory.remove(key) }
            }
            return updated
        }
        return withMemory { $0.updateHead(of: key, to: head) }
    }

    /// Publishes an entry a writer finished: in memory when its body is in memory and fits, and
    /// on disk (see ``DiskResponseStore/publish(_:spilledBody:inlineLimit:now:)``).
    func publish(_ entry: StoredEntry, spilledBody: DiskResponseStore.SpilledBody?) -> StoredEntry? {
        var published = entry
        if let disk {
            let result = disk.publish(entry, spilledBody: spilledBody, inlineLimit: Self.spillThreshold, now: now())
            if let result { noteDiskWrite(result.bytes) }
            if spilledBody != nil {
                guard let file = result?.bodyFile else {
                    withMemory { $0.remove(entry.key) }
                    return nil
                }
                published.body = .file(file)
            } else if result == nil {
                // The previous disk entry, if any, is now older than what memory holds.
                disk.remove(entry.key)
            }
        }
        let now = now()
        withMemory { $0.insert(published, markedOnDiskAt: disk == nil ? nil : now) }  // a file body is not kept (and drops an older copy)
        return published
    }

    /// Counts `bytes` written to disk and scans the directory (cleaning and eviction) before this
    /// cache has looked at it at all, once its estimate passes ``diskCapacity``, and after every
    /// tenth of the capacity it wrote itself: other caches and processes on the directory write
    /// too, and the last rule bounds how far they can take it past the capacity unnoticed.
    func noteDiskWrite(_ bytes: Int64) {
        let shouldScan = diskEstimate.withLock { estimate -> Bool in
            guard !estimate.scanning else { return false }
            if let known = estimate.bytes {
                estimate.bytes = known + bytes
                estimate.writtenSinceScan += bytes
                guard known + bytes > diskCapacity || estimate.writtenSinceScan > diskCapacity / 10 else { return false }
            }
            estimate.scanning = true
            return true
        }
        if shouldScan { scanDisk() }
    }

    /// Scans the disk store now: removes what killed writers left, files of another format
    /// version, unreferenced body files, and, beyond ``diskCapacity``, the least recently used
    /// entries. Returns the bytes left.
    @discardableResult
    func scanDisk() -> Int64 {
        guard let disk else { return 0 }
        let total = disk.scan(capacity: diskCapacity, target: diskCapacity / 10 * 9)
        diskEstimate.withLock { estimate in
            estimate.bytes = total
            estimate.writtenSinceScan = 0
            estimate.scanning = false
        }
        return total
    }
}
