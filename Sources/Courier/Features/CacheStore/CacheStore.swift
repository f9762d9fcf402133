import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// The storage both caches keep their responses in: a memory tier (least recently used evicted
/// first) and, with a directory, a disk tier (entries, eviction by scans, crash-safe writes); the
/// keys, the writers that store a body as it arrives, and the replay of a stored entry.
///
/// Neither cache policy owns it: ``ResponseCache`` (the TTL policy, public) and ``HTTPCache`` (the
/// RFC 9111 policy) both use one store, so what one stores the other's lookups see, and neither
/// names the other's types. The public ``ResponseCache`` documents what the store guarantees.
///
/// All methods are thread-safe. Disk reads and writes happen on the calling thread outside the
/// store's locks; disk failures only cause misses.
final class CacheStore: Sendable {
    /// Bodies up to this size are kept in memory while written and stored inline in their entry's
    /// head file; larger ones go to a body file of their own.
    static let spillThreshold = 64 << 10
    /// Response headers that describe the bytes on the wire rather than the body Courier keeps,
    /// hop-by-hop fields, and `Set-Cookie` (cookies are not replayed); neither cache policy stores
    /// them, except `Content-Encoding` with a body kept still in that coding (the transport did
    /// not decode it).
    static let droppedHeaders = [
        "Content-Encoding", "Content-Length", "Transfer-Encoding", "Set-Cookie", "Connection",
        "Keep-Alive", "Proxy-Connection", "TE", "Trailer", "Upgrade",
    ]

    /// The most bytes the memory tier holds (bodies plus headers); `0` keeps nothing in memory.
    let memoryCapacity: Int
    /// Where entries are also written, or `nil` for a memory-only store.
    let diskDirectory: URL?
    /// The most bytes the disk store should hold (every file of the store counted).
    let diskCapacity: Int64
    /// The largest body stored, in bytes (see ``ResponseCache/maximumEntrySize``).
    let maximumEntrySize: Int64

    private let memory: Locked<MemoryResponseStore>
    let disk: DiskResponseStore?
    /// What this store believes the disk holds (`nil` until its first scan), what it wrote
    /// since its last scan, and whether a scan is running.
    let diskEstimate = Locked((bytes: Int64?.none, writtenSinceScan: Int64(0), scanning: false))
    /// The current time; tests move it to expire entries without sleeping.
    let now: @Sendable () -> Date
    /// Called on the writing thread before each disk write of a body or an entry (a test hook:
    /// tests check which thread does the store's file I/O).
    let diskWriteObserver = Locked<(@Sendable () -> Void)?>(nil)

    init(memoryCapacity: Int, diskDirectory: URL?, diskCapacity: Int64, maximumEntrySize: Int64?, now: @escaping @Sendable () -> Date) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.diskDirectory = diskDirectory
        self.diskCapacity = max(0, diskCapacity)
        let tierCapacity = diskDirectory == nil ? Int64(self.memoryCapacity) : self.diskCapacity
        self.maximumEntrySize = max(0, min(maximumEntrySize ?? tierCapacity / 8, tierCapacity))
        self.memory = Locked(MemoryResponseStore(capacity: memoryCapacity))
        self.disk = diskDirectory.map(DiskResponseStore.init(directory:))
        self.now = now
    }

    /// What the entries in memory cost together, in bytes.
    var memoryCost: Int { memory.withLock { $0.totalCost } }

    /// How many responses are held in memory.
    var memoryCount: Int { memory.withLock { $0.count } }

    /// The bytes the disk store's files take now, found by listing the directory; `0` without one.
    var diskSize: Int64 { disk?.size() ?? 0 }

    /// The entry stored for `key` if it is younger than `maximumAge` and was stored with the same
    /// `version` (see ``ResponseCache/fresh(for:maximumAge:version:)``), with its body file unread.
    func freshEntry(for key: ResponseCacheKey, maximumAge: Duration, version: Int?) -> StoredEntry? {
        let now = now()
        func isFresh(_ entry: StoredEntry) -> Bool {
            entry.version == version && now.timeIntervalSince(entry.head.responseTime) < maximumAge.timeInterval
        }
        if let inMemory = memory.withLock({ $0.value(for: key) }), isFresh(inMemory) {
            disk?.touch(key, at: now)
            return inMemory
        }
        // Another cache on the same directory may have stored a newer response.
        guard let onDisk = disk?.read(key, touchingAt: nil), isFresh(onDisk) else { return nil }
        disk?.touch(key, at: now)
        memory.withLock { $0.insert(onDisk) }
        return onDisk
    }

    /// The response last stored for `key`, whatever its age and version.
    func latest(for key: ResponseCacheKey) -> CachedResponse? {
        let inMemory = memory.withLock { $0.value(for: key) }
        guard let onDisk = disk?.read(key, touchingAt: now()), onDisk.head.responseTime > inMemory?.head.responseTime ?? .distantPast,
            let response = onDisk.cachedResponse
        else { return inMemory?.cachedResponse }
        memory.withLock { $0.insert(onDisk) }
        return response
    }

    /// Stores `response` for `key` (see ``ResponseCache/store(_:for:)``), keeping `Content-Encoding`
    /// when `keepingContentEncoding` (the body is still in that coding: replayed without the field,
    /// it would pass for plain).
    func store(_ response: CachedResponse, for key: ResponseCacheKey, keepingContentEncoding: Bool) {
        var kept = response
        for name in Self.droppedHeaders where !(keepingContentEncoding && name == "Content-Encoding") { kept.headers.remove(name: name) }
        kept.headers.update(name: "Content-Length", value: String(kept.data.count))
        let entry = StoredEntry(kept, key: key)
        memory.withLock { $0.insert(entry) }
        guard let disk else { return }
        guard Int64(kept.data.count) <= maximumEntrySize else {
            disk.remove(key)
            return
        }
        if let published = disk.publish(entry, spilledBody: nil, inlineLimit: Self.spillThreshold, now: now()) {
            noteDiskWrite(published.bytes)
        }
    }

    /// Removes the response stored for `key`, in memory and on disk.
    func remove(for key: ResponseCacheKey) {
        memory.withLock { $0.remove(key) }
        disk?.remove(key)
    }

    /// Removes every stored response, in memory and on disk (other files in the directory stay).
    func removeAll() {
        memory.withLock { $0.removeAll { _ in true } }
        disk?.removeEverything()
        diskEstimate.withLock { $0.bytes = nil }
    }

    /// Removes every response stored `age` or longer ago, in memory and on disk.
    func removeExpired(olderThan age: Duration) {
        let cutoff = now().addingTimeInterval(-age.timeInterval)
        memory.withLock { $0.removeAll { $0.head.responseTime <= cutoff } }
        disk?.removeAll { $0.responseTime <= cutoff.timeIntervalSince1970 }
    }

    /// The keys in memory, most recently used first.
    var memoryKeysByRecency: [ResponseCacheKey] { memory.withLock { $0.keysByRecency } }

    /// Runs `body` on the memory tier, under its lock.
    func withMemory<Result>(_ body: (inout MemoryResponseStore) -> Result) -> Result {
        memory.withLock(body)
    }

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
            willWriteToDisk()
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

    /// Tells ``diskWriteObserver``, if any, that the calling thread is about to write to disk.
    func willWriteToDisk() {
        diskWriteObserver.withLock { $0 }?()
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
