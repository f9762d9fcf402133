import CourierLocking

/// Holds responses until it is opened, so a test can line up concurrent requests (dedupe,
/// cancellation races) before any of them is answered.
///
/// Attach it with ``MockResponse/waiting(for:)``. Once opened a gate stays open; every response
/// held on it is released.
public final class Gate: Sendable, Equatable, CustomStringConvertible {
    private struct State {
        var isOpen = false
        var waiting = 0
        var watchers: [(count: Int, slot: WaitSlot<Bool>)] = []
    }

    private let state = Locked(State())

    /// Creates a closed gate.
    public init() {}

    /// Whether the gate has been opened.
    public var isOpen: Bool {
        state.withLock { $0.isOpen }
    }

    /// How many responses are being held on this gate right now.
    public var waitingCount: Int {
        state.withLock { $0.waiting }
    }

    /// Opens the gate, releasing every held response; later responses pass straight through.
    public func open() {
        state.withLock { $0.isOpen = true }
    }

    /// Waits until at least `count` responses are held on the gate at the same time.
    ///
    /// The default `timeout`, two minutes, is a margin only a hang exceeds, even on a machine
    /// too busy to run the test for a while.
    ///
    /// - Returns: true once that many are held, false if `timeout` passed (or the task was
    ///   cancelled) first.
    @discardableResult
    public func waitUntilWaiting(count: Int, timeout: Duration = .seconds(120)) async -> Bool {
        let slot = WaitSlot<Bool>()
        let satisfied = state.withLock { state in
            if state.waiting >= count { return true }
            state.watchers.append((count, slot))
            return false
        }
        if satisfied { return true }
        let result = (try? await slot.value(timeout: timeout)) ?? false
        state.withLock { state in state.watchers.removeAll { $0.slot === slot } }
        return result
    }

    /// Records that a response started waiting on the gate.
    func enter() {
        let wakeUps: [@Sendable () -> Void] = state.withLock { state in
            state.waiting += 1
            let waiting = state.waiting
            let ready = state.watchers.filter { $0.count <= waiting }
            state.watchers.removeAll { $0.count <= waiting }
            return ready.compactMap { $0.slot.complete(.success(true)) }
        }
        for wakeUp in wakeUps { wakeUp() }
    }

    /// Records that a held response stopped waiting.
    func leave() {
        state.withLock { $0.waiting -= 1 }
    }

    /// Gates compare by identity.
    public static func == (lhs: Gate, rhs: Gate) -> Bool {
        lhs === rhs
    }

    /// A short description including whether the gate is open.
    public var description: String {
        let (open, waiting) = state.withLock { ($0.isOpen, $0.waiting) }
        return "Gate(\(open ? "open" : "closed"), \(waiting) waiting)"
    }
}
