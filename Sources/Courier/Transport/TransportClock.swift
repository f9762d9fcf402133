import CourierLocking

/// The time the transports' timeouts run on: the idle timeout, the resource timeout's deadline and,
/// on URLSession, the minimum transfer rate.
///
/// ``system`` is `ContinuousClock`. A test gives a session a ``ManualTransportClock`` instead
/// (``SessionConfiguration/transportClock``): its time stands still until the test moves it, so a
/// timeout fires because the test said the time had come, never because the machine was slow,
/// and no stall of a loaded machine can make a timeout fire that should not.
package struct TransportClock: Sendable {
    /// `ContinuousClock`.
    package static let system = TransportClock(manual: nil)

    private let manual: ManualTransportClock?

    private init(manual: ManualTransportClock?) {
        self.manual = manual
    }

    /// A clock whose time moves only when `clock` is advanced.
    package static func manual(_ clock: ManualTransportClock) -> TransportClock {
        TransportClock(manual: clock)
    }

    /// The current instant.
    var now: ContinuousClock.Instant { manual?.now ?? .now }

    /// Whether the time moves only when a test moves it: timers then wait for
    /// ``TransportClockObserver/clockAdvanced(done:)`` instead of for the time to pass.
    var isManual: Bool { manual != nil }

    /// Has `observer` told when the time jumps forward; nothing for ``system``, whose time only passes.
    func observeAdvances(_ observer: any TransportClockObserver) {
        manual?.add(observer)
    }
}

/// A part of a transport whose timeouts must be looked at again when a ``ManualTransportClock`` moves.
package protocol TransportClockObserver: AnyObject, Sendable {
    /// The time moved: fire the timeouts that are due at the new time, then call `done` (on any thread).
    func clockAdvanced(done: @escaping @Sendable () -> Void)
}

/// A clock for tests: the time stands still until ``advance(by:)`` moves it.
///
/// ```swift
/// let clock = ManualTransportClock()
/// let session = Session(configuration: { var c = SessionConfiguration(); c.requestTimeout = 2; c.transportClock = .manual(clock); return c }())
/// // ... the server stalls ...
/// await clock.advance(by: .seconds(2))   // the request now fails with .timedOut, at once
/// ```
package final class ManualTransportClock: Sendable {
    private struct Watcher {
        weak var observer: (any TransportClockObserver)?
    }

    private struct State {
        var now: ContinuousClock.Instant
        var watchers: [Watcher] = []
    }

    // Guards the current time and the observers to tell when it moves.
    private let state: Locked<State>

    /// Creates a clock that starts at `start`.
    package init(start: ContinuousClock.Instant = .now) {
        state = Locked(State(now: start))
    }

    /// The current instant.
    package var now: ContinuousClock.Instant { state.withLock { $0.now } }

    fileprivate func add(_ observer: any TransportClockObserver) {
        state.withLock { state in
            state.watchers.removeAll { $0.observer == nil }
            state.watchers.append(Watcher(observer: observer))
        }
    }

    /// Moves the time forward by `duration`, and returns once every transport using this clock
    /// has fired the timeouts due at the new time (a transfer that timed out has delivered its
    /// `.timedOut` end to its request by then).
    package func advance(by duration: Duration) async {
        let observers = state.withLock { state -> [any TransportClockObserver] in
            state.now += duration
            state.watchers.removeAll { $0.observer == nil }
            return state.watchers.compactMap(\.observer)
        }
        await withTaskGroup(of: Void.self) { group in
            for observer in observers {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        observer.clockAdvanced { continuation.resume() }
                    }
                }
            }
        }
    }
}
