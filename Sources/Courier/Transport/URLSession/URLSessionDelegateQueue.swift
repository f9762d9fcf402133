import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The delegate queue of a ``URLSessionTransport``'s URLSession: a serial queue that keeps up with
/// FoundationNetworking, and holds it back while Courier's delegate code is behind.
///
/// FoundationNetworking reads the network, and inflates compressed bodies, on its own thread and
/// hands each callback over with `addOperation` without waiting. A server faster than Courier's
/// delegate code, or a decompression bomb, then piles up `didReceive data` operations before any
/// of Courier's limits sees their bytes: a 1 GiB gzip bomb was inflated and queued whole
/// (1.16 GB resident) while the 256 MiB limit waited its turn. Two things keep that from
/// happening (on Linux; elsewhere this is a plain `OperationQueue`):
///
/// - Operations run in batches on a private serial dispatch queue: one wake-up per batch, not
///   per operation. `OperationQueue`'s own scheduling cost about half a millisecond per
///   operation on Linux, far slower than FoundationNetworking hands them over.
/// - Every hand-over passes through ``addOperation(_:)``, on FoundationNetworking's thread inside
///   libcurl's write callback: once ``capacity`` operations wait, it waits until the queue has
///   worked through half of them. That thread reads nothing meanwhile, so TCP holds the server
///   back and a compressed body is inflated no faster than Courier takes it; a limit acts within
///   ``capacity`` callbacks (of at most 16 KiB each, 8 MiB) of the byte that crossed it.
///
/// FoundationNetworking cannot stop a transfer in the middle of one pass of its read loop, which
/// inflates everything one read brought: what a compressed body holds past a limit is still
/// inflated (and dropped at once) before a cancel takes effect. Memory stays bounded; the time
/// is that of inflating it.
///
/// A wait must never wait for itself. FoundationNetworking runs the work of every session of the
/// process on one serial queue, and its task creation, `resume()`, `cancel()` and
/// `invalidateAndCancel()` wait for that queue: the delegate queue never calls them
/// (``URLSessionTransport`` makes those calls on its Foundation queue), and Courier's own
/// operations (``schedule(_:)``) never wait. As a last resort a wait gives up when the queue
/// finished nothing for ``stallLimit``, and none waits again until the queue moves.
// Unchecked because OperationQueue is not Sendable; its own state is immutable `let`s, and the
// mutable state lives in HandOverGate, whose NSCondition guards it.
final class URLSessionDelegateQueue: OperationQueue, @unchecked Sendable {
    /// How many operations may wait before a hand-over from FoundationNetworking waits: 8 MiB of
    /// body at most.
    static let capacity = 512
    /// How long a hand-over waits for a queue that finishes nothing before it goes ahead.
    static let stallLimit: Duration = .seconds(1)

    #if canImport(FoundationNetworking)
    private let gate = HandOverGate(capacity: URLSessionDelegateQueue.capacity, stallLimit: URLSessionDelegateQueue.stallLimit)
    private let queue = DispatchQueue(label: "courier.urlsession.delegate")
    private static let key = DispatchSpecificKey<ObjectIdentifier>()

    override init() {
        super.init()
        queue.setSpecific(key: Self.key, value: ObjectIdentifier(self))
    }

    /// FoundationNetworking's hand-over (and anyone else's): waits for room unless called on this
    /// queue, then adds `block`.
    override func addOperation(_ block: @escaping @Sendable () -> Void) {
        if !isCurrent { gate.waitForRoom() }
        schedule(block)
    }

    /// Adds Courier's own operation; never waits, wherever it is called from.
    func schedule(_ block: @escaping @Sendable () -> Void) {
        if gate.add(block) { queue.async { [gate] in gate.drain() } }
    }

    /// Whether the caller runs on this queue.
    var isCurrent: Bool { DispatchQueue.getSpecific(key: Self.key) == ObjectIdentifier(self) }

    /// Whether the caller runs on any transport's delegate queue (for tests of who runs where).
    static var isCurrentOnAny: Bool { DispatchQueue.getSpecific(key: key) != nil }
    #else
    /// Adds Courier's own operation.
    func schedule(_ block: @escaping @Sendable () -> Void) {
        addOperation(block)
    }

    /// Whether the caller runs on this queue.
    var isCurrent: Bool { OperationQueue.current === self }

    /// Whether the caller runs on any transport's delegate queue (for tests of who runs where).
    static var isCurrentOnAny: Bool { OperationQueue.current is URLSessionDelegateQueue }
    #endif
}

/// The operations waiting on a ``URLSessionDelegateQueue``, run in batches by one drain at a
/// time, and the hand-overs waiting for room.
final class HandOverGate: @unchecked Sendable {
    // Guards every variable below, and wakes the sleepers.
    private let condition = NSCondition()
    private var operations: [@Sendable () -> Void] = []
    private var waiting = 0
    private var draining = false
    private var finished = 0
    private var sleepers = 0
    private var stalled = false
    private let capacity: Int
    private let stallLimit: Duration

    init(capacity: Int, stallLimit: Duration) {
        self.capacity = max(2, capacity)
        self.stallLimit = stallLimit
    }

    /// Queues `operation`; `true` when no drain is under way, so the caller must start one.
    func add(_ operation: @escaping @Sendable () -> Void) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        operations.append(operation)
        waiting += 1
        guard !draining else { return false }
        draining = true
        return true
    }

    /// Runs the operations in order, a batch at a time, until none is left.
    func drain() {
        var batch: [@Sendable () -> Void] = []
        while true {
            condition.lock()
            guard !operations.isEmpty else {
                draining = false
                condition.unlock()
                return
            }
            swap(&batch, &operations)
            condition.unlock()
            for operation in batch {
                operation()
                ran()
            }
            batch.removeAll(keepingCapacity: true)
        }
    }

    private func ran() {
        condition.lock()
        waiting -= 1
        finished &+= 1
        stalled = false
        if sleepers > 0, waiting <= capacity / 2 { condition.broadcast() }
        condition.unlock()
    }

    /// Returns once fewer than `capacity` operations wait (then only when half of them have run),
    /// or when the queue finished nothing for the stall limit.
    func waitForRoom() {
        condition.lock()
        defer { condition.unlock() }
        guard waiting >= capacity, !stalled else { return }
        sleepers += 1
        defer { sleepers -= 1 }
        var progress = finished
        var lastProgress = ContinuousClock.now
        while waiting > capacity / 2 {
            _ = condition.wait(until: Date(timeIntervalSinceNow: 0.01))
            if finished != progress {
                progress = finished
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress >= stallLimit {
                stalled = true
                return
            }
        }
    }
}
