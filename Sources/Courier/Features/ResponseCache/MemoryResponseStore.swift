import Foundation

/// The memory tier of ``ResponseCache``: entries with their body in memory, bounded by a total
/// cost in bytes, the least recently used evicted first. A value type; the cache keeps it behind a lock.
///
/// Recency is a doubly linked list threaded through the dictionary by key, so lookups, inserts
/// and evictions are all O(1).
struct MemoryResponseStore {
    private struct Node {
        var entry: StoredEntry
        var cost: Int
        /// The next more recently used key.
        var newer: ResponseCacheKey?
        /// The next less recently used key.
        var older: ResponseCacheKey?
    }

    /// The most bytes the entries may cost together.
    let capacity: Int
    /// What the entries cost together now.
    private(set) var totalCost = 0
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
        guard let node = nodes[key] else { return nil }
        moveToFront(key)
        return node.entry
    }

    /// Stores `entry` as the most recently used, evicting the least recently used entries until
    /// the total fits. An entry that alone exceeds the capacity, or whose body is not in memory,
    /// is not kept (and any earlier entry for its key is dropped).
    mutating func insert(_ entry: StoredEntry) {
        let key = entry.key
        remove(key)
        let cost = Self.cost(of: entry)
        guard cost <= capacity, case .data = entry.body else { return }
        while totalCost + cost > capacity, let victim = oldest { remove(victim) }
        nodes[key] = Node(entry: entry, cost: cost, newer: nil, older: newest)
        if let previous = newest { nodes[previous]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
        totalCost += cost
    }

    /// Removes the entry for `key`, if any.
    mutating func remove(_ key: ResponseCacheKey) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        unlink(key, node)
        totalCost -= node.cost
    }

    /// Removes every entry `shouldRemove` selects.
    mutating func removeAll(where shouldRemove: (StoredEntry) -> Bool) {
        for (key, node) in nodes where shouldRemove(node.entry) { remove(key) }
    }

    /// Replaces the head of the entry for `key`, if any, keeping its place and body.
    mutating func updateHead(of key: ResponseCacheKey, to head: CacheEntryHead) -> StoredEntry? {
        guard var node = nodes[key] else { return nil }
        node.entry.head = head
        let updatedCost = Self.cost(of: node.entry)
        totalCost += updatedCost - node.cost
        node.cost = updatedCost
        nodes[key] = node
        moveToFront(key)
        while totalCost > capacity, let victim = oldest, victim != key { remove(victim) }
        return nodes[key]?.entry
    }

    private mutating func moveToFront(_ key: ResponseCacheKey) {
        guard newest != key, let node = nodes[key] else { return }
        unlink(key, node)
        nodes[key]?.newer = nil
        nodes[key]?.older = newest
        if let previous = newest { nodes[previous]?.newer = key }
        newest = key
        if oldest == nil { oldest = key }
    }

    /// Detaches `node` from its neighbours; the node itself keeps stale links until relinked or dropped.
    private mutating func unlink(_ key: ResponseCacheKey, _ node: Node) {
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
    }
}
