import CourierLocking
import Foundation

/// A clock that moves only when a test advances it: a sleep returns once ``advance(to:)`` or
/// ``advance(by:)`` reaches its deadline (or throws when its task is cancelled), so timeouts of
/// tens of seconds are tested without waiting for them, and the test can see what is waiting
/// (``deadlines``) before it moves the time.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        /// The time since the clock started.
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var nextSleeper = 0
    }

    private let state = Locked(State())

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .nanoseconds(1) }

    /// The deadlines of the sleeps waiting now, as offsets from the start, in order.
    var deadlines: [Duration] { state.withLock { $0.sleepers.values.map(\.deadline.offset).sorted() } }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state -> Int in
            state.nextSleeper += 1
            return state.nextSleeper
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate = state.withLock { state -> Result<Void, any Error>? in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the time to `offset` from the start (never back) and wakes every sleep due by then,
    /// earliest first.
    func advance(to offset: Duration) {
        let due = state.withLock { state -> [Sleeper] in
            state.now = max(state.now, Instant(offset: offset))
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers.removeValue(forKey: id) }
            return due.values.sorted { $0.deadline < $1.deadline }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    /// Moves the time on by `duration`.
    func advance(by duration: Duration) {
        advance(to: now.offset + duration)
    }

    /// Waits (in real time, up to `timeout`) until a sleep with this deadline is waiting.
    func waitForSleep(until offset: Duration, timeout: Duration = .seconds(120)) async -> Bool {
        await eventually(timeout: timeout) { self.deadlines.contains(offset) }
    }
}
