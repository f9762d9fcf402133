import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// A stored response: status, headers, body, when it was stored and with which version.
public struct CachedResponse: Sendable, Hashable {
    /// The status code.
    public var statusCode: Int
    /// The response headers.
    public var headers: HTTPHeaders
    /// The body.
    public var data: Data
    /// When it was stored.
    public var storedAt: Date
    /// The version it was stored with, if any.
    public var version: Int?

    /// Creates a stored response.
    public init(statusCode: Int, headers: HTTPHeaders, data: Data, storedAt: Date, version: Int?) {
        self.statusCode = statusCode
        self.headers = headers
        self.data = data
        self.storedAt = storedAt
        self.version = version
    }
}

/// Courier's own response cache: answers requests marked `cached(for:version:)` from a stored
/// response younger than their maximum age, without a network request.
///
/// Unlike HTTP caching it ignores `Cache-Control` and validators: the request says how long its
/// response stays good (a TTL) and which data version it expects, as app-level caches of
/// YTKNetwork-style clients did. Entries live in memory, bounded by ``memoryCapacity`` bytes with
/// the least recently used evicted first, and, when a ``diskDirectory`` is given, also on disk,
/// where a new `ResponseCache` on the same directory (a new `Session`, a new process) finds them.
///
/// ```swift
/// let cache = ResponseCache(memoryCapacity: 20 << 20, diskDirectory: cachesURL.appendingPathComponent("api"))
/// let api = Session(baseURL: apiURL, responseCache: cache)
/// let profile = try await api.request("profile").cached(for: .seconds(180), version: 2)
///     .serializingDecodable(Profile.self).value
/// ```
///
/// All methods are thread-safe. Disk reads and writes happen on the calling thread (for a
/// request, its own executor) outside the cache's lock; disk failures only cause misses.
public final class ResponseCache: Sendable {
    /// The memory capacity used when none is given: 10 MiB.
    public static let defaultMemoryCapacity = 10 << 20
    /// Response headers that describe the bytes on the wire rather than the body Courier keeps,
    /// or that must not be replayed; they are not stored.
    static let droppedHeaders = ["Content-Encoding", "Content-Length", "Transfer-Encoding", "Set-Cookie", "Connection", "Keep-Alive"]

    /// The most bytes the memory tier holds (bodies plus headers); `0` keeps nothing in memory.
    public let memoryCapacity: Int
    /// Where entries are also written, or `nil` for a memory-only cache.
    public let diskDirectory: URL?

    private let memory: Locked<MemoryResponseStore>
    private let disk: DiskResponseStore?
    /// The current time; tests move it to expire entries without sleeping.
    let now: @Sendable () -> Date

    /// Creates a cache holding up to `memoryCapacity` bytes in memory and, if `diskDirectory` is
    /// given, every entry on disk as well (the directory is created when first needed).
    public convenience init(memoryCapacity: Int = ResponseCache.defaultMemoryCapacity, diskDirectory: URL? = nil) {
        self.init(memoryCapacity: memoryCapacity, diskDirectory: diskDirectory, now: { Date() })
    }

    init(memoryCapacity: Int, diskDirectory: URL?, now: @escaping @Sendable () -> Date) {
        self.memoryCapacity = max(0, memoryCapacity)
        self.diskDirectory = diskDirectory
        self.memory = Locked(MemoryResponseStore(capacity: memoryCapacity))
        self.disk = diskDirectory.map(DiskResponseStore.init(directory:))
        self.now = now
    }

    /// What the entries in memory cost together, in bytes.
    public var memoryCost: Int { memory.withLock { $0.totalCost } }

    /// How many responses are held in memory.
    public var memoryCount: Int { memory.withLock { $0.count } }

    /// The response stored for `key` if it is younger than `maximumAge` and was stored with the
    /// same `version` (a response stored without a version matches only a request without one).
    public func fresh(for key: ResponseCacheKey, maximumAge: Duration, version: Int?) -> CachedResponse? {
        let now = now()
        func isFresh(_ response: CachedResponse) -> Bool {
            response.version == version && now.timeIntervalSince(response.storedAt) < maximumAge.timeInterval
        }
        if let inMemory = memory.withLock({ $0.value(for: key) }), isFresh(inMemory) { return inMemory }
        // Another cache on the same directory may have stored a newer response.
        guard let onDisk = disk?.read(key), isFresh(onDisk) else { return nil }
        memory.withLock { $0.insert(onDisk, for: key) }
        return onDisk
    }

    /// The response last stored for `key`, whatever its age and version.
    public func latest(for key: ResponseCacheKey) -> CachedResponse? {
        let inMemory = memory.withLock { $0.value(for: key) }
        guard let onDisk = disk?.read(key), onDisk.storedAt > inMemory?.storedAt ?? .distantPast else { return inMemory }
        memory.withLock { $0.insert(onDisk, for: key) }
        return onDisk
    }

    /// Stores `response` for `key`, replacing what was stored before, in memory (evicting the
    /// least recently used entries beyond ``memoryCapacity``) and on disk.
    ///
    /// Headers describing the wire form (`Content-Encoding`, `Content-Length`, `Transfer-Encoding`)
    /// and `Set-Cookie` are not kept: the body is stored decoded, and cookies are not replayed.
    public func store(_ response: CachedResponse, for key: ResponseCacheKey) {
        var kept = response
        for name in Self.droppedHeaders { kept.headers.remove(name: name) }
        kept.headers.update(name: "Content-Length", value: String(kept.data.count))
        memory.withLock { $0.insert(kept, for: key) }
        disk?.write(kept, for: key)
    }

    /// Removes the response stored for `key`, in memory and on disk.
    public func remove(for key: ResponseCacheKey) {
        memory.withLock { $0.remove(key) }
        disk?.remove(key)
    }

    /// Removes every stored response, in memory and on disk (other files in the directory stay).
    public func removeAll() {
        memory.withLock { $0.removeAll { _ in true } }
        disk?.removeAll { _ in true }
    }

    /// Removes every response stored `age` or longer ago, in memory and on disk.
    public func removeExpired(olderThan age: Duration) {
        let cutoff = now().addingTimeInterval(-age.timeInterval)
        memory.withLock { $0.removeAll { $0.storedAt <= cutoff } }
        disk?.removeAll { $0.storedAt <= cutoff }
    }

    /// The keys in memory, most recently used first.
    var memoryKeysByRecency: [ResponseCacheKey] { memory.withLock { $0.keysByRecency } }
}
