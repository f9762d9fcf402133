import Foundation

/// The store's internals as reached through a ``ResponseCache`` (tests and tools inspect a
/// cache's tiers this way).
extension ResponseCache {
    /// Bodies up to this size are stored inline; see ``CacheStore/spillThreshold``.
    static var spillThreshold: Int { CacheStore.spillThreshold }
    /// The disk tier, or `nil` for a memory-only cache.
    var disk: DiskResponseStore? { storage.disk }
    /// The current time of the store.
    var now: @Sendable () -> Date { storage.now }

    /// The key the HTTP cache stores a `GET` of `url` under; see ``CacheStore/httpKey(for:)``.
    static func httpKey(for url: URL) -> ResponseCacheKey { CacheStore.httpKey(for: url) }

    /// See ``CacheStore/freshEntry(for:maximumAge:version:)``.
    func freshEntry(for key: ResponseCacheKey, maximumAge: Duration, version: Int?) -> StoredEntry? {
        storage.freshEntry(for: key, maximumAge: maximumAge, version: version)
    }

    /// See ``CacheStore/entry(for:)``.
    func entry(for key: ResponseCacheKey) -> StoredEntry? { storage.entry(for: key) }

    /// See ``CacheStore/makeWriter(for:head:url:version:)``.
    func makeWriter(for key: ResponseCacheKey, head: CacheEntryHead, url: URL?, version: Int?) -> ResponseCacheWriter {
        storage.makeWriter(for: key, head: head, url: url, version: version)
    }

    /// See ``CacheStore/updateHead(for:_:)``.
    @discardableResult
    func updateHead(for key: ResponseCacheKey, _ head: CacheEntryHead) -> StoredEntry? { storage.updateHead(for: key, head) }

    /// See ``CacheStore/publish(_:spilledBody:)``.
    func publish(_ entry: StoredEntry, spilledBody: DiskResponseStore.SpilledBody?) -> StoredEntry? {
        storage.publish(entry, spilledBody: spilledBody)
    }

    /// See ``CacheStore/scanDisk()``.
    @discardableResult
    func scanDisk() -> Int64 { storage.scanDisk() }

    /// The keys in memory, most recently used first.
    var memoryKeysByRecency: [ResponseCacheKey] { storage.memoryKeysByRecency }

    /// Runs `body` on the memory tier, under its lock.
    func withMemory<Result>(_ body: (inout MemoryResponseStore) -> Result) -> Result { storage.withMemory(body) }
}
