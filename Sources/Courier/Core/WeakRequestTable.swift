import Foundation

/// Values kept per request, by the request's identity, each beside a weak reference to its
/// request. An owner removes an entry when its request ends; a request released without ending
/// (made and never resumed, or suspended and dropped) has its entry swept out as the table grows,
/// so such requests do not keep one entry each for the owner's life. Sweeping happens when the
/// table reaches twice its live entries (at least 64): O(1) per insertion, amortized.
package struct WeakRequestTable<Value> {
    fileprivate struct Entry {
        weak var request: (any Request)?
        var value: Value
    }

    private var entries: [UUID: Entry] = [:]
    private var sweepAt = 64

    package init() {}

    /// Entries, live and released ones not swept yet.
    package var count: Int { entries.count }

    /// The requests still held by someone.
    package var liveRequests: [any Request] { entries.values.compactMap(\.request) }

    /// The value kept for the request `id`. Setting `nil` removes the entry; setting a value
    /// changes an existing entry only (``insert(_:for:)`` adds one).
    package subscript(id: UUID) -> Value? {
        get { entries[id]?.value }
        set {
            if let newValue { entries[id]?.value = newValue } else { entries[id] = nil }
        }
    }

    /// Keeps `value` for `request`; returns the identities of the released requests this
    /// insertion swept out.
    @discardableResult
    package mutating func insert(_ value: Value, for request: any Request) -> [UUID] {
        entries[request.id] = Entry(request: request, value: value)
        guard entries.count >= sweepAt else { return [] }
        let released = removeReleased()
        sweepAt = max(64, entries.count * 2)
        return released
    }

    /// Removes the entry of the request `id`, returning its value.
    @discardableResult
    package mutating func removeValue(forKey id: UUID) -> Value? {
        entries.removeValue(forKey: id)?.value
    }

    /// Removes the entries of requests nobody holds any more and returns their identities.
    package mutating func removeReleased() -> [UUID] {
        let released = entries.filter { $0.value.request == nil }.map(\.key)
        for id in released { entries.removeValue(forKey: id) }
        return released
    }
}

extension WeakRequestTable: Sendable where Value: Sendable {}
extension WeakRequestTable.Entry: Sendable where Value: Sendable {}
