import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's response store: answers requests marked `cached(for:version:)` from a stored
/// response younger than their maximum age, without a network request, and holds what the HTTP
/// cache (``SessionConfiguration/httpCache``, RFC 9111) stores. Both share the memory and disk
/// tiers and the keys.
///
/// The TTL policy ignores `Cache-Control` and validators: the request says how long its response
/// stays good (a TTL) and which data version it expects, as app-level caches of YTKNetwork-style
/// clients did. Entries live in memory, bounded by ``memoryCapacity`` bytes with the least
/// recently used evicted first, and, when a ``diskDirectory`` is given, also on disk, bounded by
/// ``diskCapacity`` bytes, where a new `ResponseCache` on the same directory (a new `Session`, a
/// new process) finds them.
///
/// ```swift
/// let cache = ResponseCache(memoryCapacity: 20 << 20, diskDirectory: cachesURL.appendingPathComponent("api"),
///                           diskCapacity: 500 << 20)
/// let api = Session(baseURL: apiURL, responseCache: cache)
/// let profile = try await api.request("profile").cached(for: .seconds(180), version: 2)
///     .serializingDecodable(Profile.self).value
/// ```
///
/// The disk store:
/// - **Bounded, least recently used first.** A file's modification time records when its entry
///   was last stored or served, by any process; when a cache's running estimate of the directory
///   goes over ``diskCapacity`` (and after every tenth of the capacity it wrote, since other
///   caches write too) it rescans the directory and removes the entries used longest ago until
///   the store is back under 90% of the capacity (so a full cache does not rescan on every
///   write). No shared index: several caches and processes may share one directory, which may
///   briefly exceed the capacity by what they wrote since their last scans.
/// - **Crash-safe.** Entries are written to temporary files and renamed into place (body first,
///   head last), and every file is checked when read (format version, lengths, a checksum of each
///   head and of each 64 KiB block of a body file, checked before the block is served), so a
///   process killed mid-write never leaves an entry that is served torn; what it left behind is
///   removed by a later scan.
/// - **The directory is input too.** It is created private (0700) and not used at all when
///   another user owns it; only regular files of this user are opened, never through a link and
///   never a FIFO (see the DocC guide "Caching responses").
/// - **Versioned.** Files carry their format version; files of another version (those of
///   Courier releases before the HTTP cache included) are misses and are removed, never misread.
/// - **Streamed.** Bodies past 64 KiB are written to disk as they arrive and replayed from disk in
///   pieces, never held whole in memory; the memory tier keeps only bodies that are in memory
///   anyway. A body larger than ``maximumEntrySize`` is not stored.
///
/// All methods are thread-safe. Disk reads and writes happen on the calling thread (for a
/// request, its own executor; for what the HTTP cache stores, a serial queue of its exchange, never
/// the transport's thread) outside the cache's locks; disk failures only cause misses.
public final class ResponseCache: Sendable {
    /// The memory capacity used when none is given: 10 MiB.
    public static let defaultMemoryCapacity = 10 << 20
    /// The disk capacity used when none is given: 250 MiB.
    public static let defaultDiskCapacity: Int64 = 250 << 20
    /// The storage this cache policy uses, shared with the session's HTTP cache.
    let storage: CacheStore

    /// The most bytes the memory tier holds (bodies plus headers); `0` keeps nothing in memory.
    public var memoryCapacity: Int { storage.memoryCapacity }
    /// Where entries are also written, or `nil` for a memory-only cache.
    public var diskDirectory: URL? { storage.diskDirectory }
    /// The most bytes the disk store should hold (every file of the store counted); the least
    /// recently used entries are removed beyond it.
    public var diskCapacity: Int64 { storage.diskCapacity }
    /// The largest body stored, in bytes: larger responses are not stored. By default an eighth of
    /// ``diskCapacity`` (31.25 MiB with the default capacity) with a disk directory, an eighth of
    /// ``memoryCapacity`` without one; never more than the capacity of the tier that holds it.
    public var maximumEntrySize: Int64 { storage.maximumEntrySize }

    /// Creates a cache holding up to `memoryCapacity` bytes in memory and, if `diskDirectory` is
    /// given, every entry on disk as well, up to `diskCapacity` bytes (the directory is created
    /// when first needed). `maximumEntrySize` bounds one body (see ``maximumEntrySize`` for the default).
    ///
    /// ```swift
    /// let cache = ResponseCache(diskDirectory: cachesURL.appendingPathComponent("http"), diskCapacity: 1 << 30)
    /// ```
    public convenience init(
        memoryCapacity: Int = ResponseCache.defaultMemoryCapacity, diskDirectory: URL? = nil,
        diskCapacity: Int64 = ResponseCache.defaultDiskCapacity, maximumEntrySize: Int64? = nil
    ) {
        self.init(
            memoryCapacity: memoryCapacity, diskDirectory: diskDirectory, diskCapacity: diskCapacity,
            maximumEntrySize: maximumEntrySize, now: { Date() })
    }

    init(
        memoryCapacity: Int, diskDirectory: URL?, diskCapacity: Int64 = ResponseCache.defaultDiskCapacity,
        maximumEntrySize: Int64? = nil, now: @escaping @Sendable () -> Date
    ) {
        storage = CacheStore(
            memoryCapacity: memoryCapacity, diskDirectory: diskDirectory, diskCapacity: diskCapacity,
            maximumEntrySize: maximumEntrySize, now: now)
    }

    /// What the entries in memory cost together, in bytes.
    public var memoryCost: Int { storage.memoryCost }

    /// How many responses are held in memory.
    public var memoryCount: Int { storage.memoryCount }

    /// The bytes the disk store's files take now (entries, and files being written), found by
    /// listing the directory; `0` for a memory-only cache.
    public var diskSize: Int64 { storage.diskSize }

    /// The response stored for `key` if it is younger than `maximumAge` and was stored with the
    /// same `version` (a response stored without a version matches only a request without one).
    public func fresh(for key: ResponseCacheKey, maximumAge: Duration, version: Int?) -> CachedResponse? {
        storage.freshEntry(for: key, maximumAge: maximumAge, version: version)?.cachedResponse
    }

    /// The response last stored for `key`, whatever its age and version.
    public func latest(for key: ResponseCacheKey) -> CachedResponse? {
        storage.latest(for: key)
    }

    /// Stores `response` for `key`, replacing what was stored before, in memory (evicting the
    /// least recently used entries beyond ``memoryCapacity``) and on disk (unless its body is
    /// larger than ``maximumEntrySize``).
    ///
    /// Headers describing the wire form (`Content-Encoding`, `Content-Length`, `Transfer-Encoding`)
    /// and `Set-Cookie` are not kept: the body given is taken to be decoded, and cookies are not replayed.
    public func store(_ response: CachedResponse, for key: ResponseCacheKey) {
        storage.store(response, for: key, keepingContentEncoding: false)
    }

    /// Removes the response stored for `key`, in memory and on disk.
    public func remove(for key: ResponseCacheKey) {
        storage.remove(for: key)
    }

    /// Removes every stored response, in memory and on disk (other files in the directory stay).
    public func removeAll() {
        storage.removeAll()
    }

    /// Removes every response stored `age` or longer ago, in memory and on disk.
    public func removeExpired(olderThan age: Duration) {
        storage.removeExpired(olderThan: age)
    }
}
