import Foundation

/// The memory tier of ``CacheStore``: entries with their body in memory, bounded by a total
/// cost in bytes, the least recently used evicted first. A value type; the cache keeps it behind a lock.
///
/// Recency is a doubly linked list threaded through a dictionary by key, so lookups, inserts
/// and evictions are all O(1). The links live apart from the entries: moving an entry to the
/// front then copies two keys, not the entry (a dozen references), which cost a hit from memory
/// a tenth of its time.
struct MemoryResponseStore {
    private struct Node {
        var cost: Int
        /// When the disk copy was last marked used (or written), `nil` if never by this cache.
        var diskMarkedAt: Date?
        /// The next more recently used key.
        var newer: ResponseCacheKey?
        /// The next less recently used key.
        var older: ResponseCacheKey?
    }

    /// The most bytes the entries may cost together.
    let capacity: Int
    /// What the entries cost together now.
    private(set) var totalCost = 0
    private var entries: [ResponseCacheKey: StoredEntry] = [:]
    private var nodes: [ResponseCacheKey: Node] = [:]
    private var newest: ResponseCacheKey?
    private var oldest: ResponseCacheKey?

    init(capacity: Int) {
        self.capacity = max(0, capacity)
    }

    /// How many responses are held.
    var count: Int { nodes.count }

    /// The keys from the most to the least recently used.
    var keysByRecency: [ResponseCacheKey] {
        var keys: [ResponseCacheKey] = []
        var cursor = newest
        while let key = cursor, let node = nodes[key] {
            keys.append(key)
            cursor = node.older
        }
        return keys
    }

    /// What an entry costs: its body plus its headers and a fixed overhead.
    static func cost(of entry: StoredEntry) -> Int {
        Int(clamping: entry.body.length) + entry.head.headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
            + entry.key.rawValue.utf8.count + 64
    }

    /// The stored entry, which becomes the most recently used.
    mutating func value(for key: ResponseCacheKey) -> StoredEntry? {
        guard let entry = entries[key] else { return nil }
        moveToFront(key)
        return entry
    }

    /// ``value(for:)``, and whether the disk copy should be marked used at `now`
    /// (``shouldMarkDiskUse(of:at:interval:)``), in one pass.
    mutating func hit(_ key: ResponseCacheKey, at now: Date, diskMarkInterval: TimeInterval) -> (entry: StoredEntry, marksDisk: Bool)? {
        guard let entry = value(for: key) else { return nil }
        return (entry, shouldMarkDiskUse(of: key, at: now, interval: diskMarkInterval))
    }

    /// Stores `entry` as the most recently used, evicting the least recently used entries until
    /// the total fits. An entry that alone exceeds the capacity, or whose body is not in memory,
    /// is not kept (and any earlier entry for its key is dropped).
    mutating func insert(_ entry: StoredEntry, markedOnDiskAt: Date? = nil) {
        let key = entry.key
        remove(key)
        let cost = Self.cost(of: entry)
        guard cost <= capacity, case .data = entry.body else { return }
        while totalCost + cost > capacity, let victim = oldest { remove(victim) }
        entries[key] = entry
        nodes[key] = Node(cost: cost, diskMarkedAt: markedOnDiskAt, newer: nil, older: newest)
        if let previous = newest { nodes[previous]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
        totalCost += cost
    }

    /// Removes the entry for `key`, if any.
    mutating func remove(_ key: ResponseCacheKey) {
        entries[key] = nil
        guard let node = nodes.removeValue(forKey: key) else { return }
        unlink(newer: node.newer, older: node.older)
        totalCost -= node.cost
    }

    /// Removes every entry `shouldRemove` selects.
    mutating func removeAll(where shouldRemove: (StoredEntry) -> Bool) {
        for (key, entry) in entries where shouldRemove(entry) { remove(key) }
    }

    /// Whether the disk copy of `key` should be marked used at `now`: not when this cache marked
    /// or wrote it less than `interval` ago (the disk's recency is coarse, and a hit should not
    /// cost a system call each time). Records `now` when it answers `true`.
    mutating func shouldMarkDiskUse(of key: ResponseCacheKey, at now: Date, interval: TimeInterval) -> Bool {
        guard let index = nodes.index(forKey: key) else { return false }
        if let marked = nodes.values[index].diskMarkedAt, now.timeIntervalSince(marked) < interval, now >= marked { return false }
        nodes.values[index].diskMarkedAt = now
        return true
    }

    /// Replaces the head of the entry for `key` when the new head differs from the stored one only
    /// in when it was received (`Date`, `Age`, `Expires` and the request and response times), as
    /// most `304`s do; `nil` (and nothing changed) otherwise or when `key` is not held.
    mutating func updateHeadIfOnlyTimesChanged(of key: ResponseCacheKey, to head: CacheEntryHead) -> StoredEntry? {
        guard let entry = entries[key], Self.withoutTimes(entry.head) == Self.withoutTimes(head) else { return nil }
        return updateHead(of: key, to: head)
    }

    /// `head` with what only says when it was received left out.
    private static func withoutTimes(_ head: CacheEntryHead) -> CacheEntryHead {
        var head = head
        for name in ["Date", "Age", "Expires"] { head.headers.remove(name: name) }
        head.requestTime = .distantPast
        head.responseTime = .distantPast
        return head
    }

    /// Replaces the head of the entry for `key`, if any, keeping its place and body.
    mutating func updateHead(of key: ResponseCacheKey, to head: CacheEntryHead) -> StoredEntry? {
        guard var entry = entries[key], let oldCost = nodes[key]?.cost else { return nil }
        entry.head = head
        let updatedCost = Self.cost(of: entry)
        totalCost += updatedCost - oldCost
        entries[key] = entry
        nodes[key]?.cost = updatedCost
        moveToFront(key)
        while totalCost > capacity, let victim = oldest, victim != key { remove(victim) }
        return entries[key]
    }

    private mutating func moveToFront(_ key: ResponseCacheKey) {
        guard newest != key, let index = nodes.index(forKey: key) else { return }
        let (newer, older) = (nodes.values[index].newer, nodes.values[index].older)
        nodes.values[index].newer = nil
        nodes.values[index].older = newest
        unlink(newer: newer, older: older)
        if let previous = newest { nodes[previous]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    /// Detaches a node from its neighbours `newer` and `older` by joining them to each other; the
    /// node itself keeps stale links until relinked or dropped.
    private mutating func unlink(newer: ResponseCacheKey?, older: ResponseCacheKey?) {
        if let newer { nodes[newer]?.older = older } else { newest = older }
        if let older { nodes[older]?.newer = newer } else { oldest = newer }
    }
}
