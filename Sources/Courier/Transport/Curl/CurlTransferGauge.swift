import Synchronization

/// How many transfers a transport's loops carry in all, counted by their mailboxes with their own
/// per-origin counts (``CurlMailbox/transferAssigned(origin:)``, ``CurlMailbox/transferEnded(origin:)``).
/// Shared by the loops of one transport; read by each loop before it sleeps (``CurlLoopScheduling``).
final class CurlTransferGauge: Sendable {
    private let count = Atomic<Int>(0)

    /// The transfers handed to the loops and not yet ended.
    var current: Int { count.load(ordering: .relaxed) }

    /// A transfer was handed to a loop.
    func transferStarted() { count.add(1, ordering: .relaxed) }

    /// A transfer handed to a loop ended, or its loop refused it.
    func transferEnded() { count.subtract(1, ordering: .relaxed) }
}
