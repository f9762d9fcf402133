import CourierLocking
import Foundation

/// An action that runs once, on a thread of its own, as soon as something happens elsewhere.
///
/// On the URLSession transport FoundationNetworking reads a streamed body on the one serial queue
/// that every URLSession of the process shares, and while the body's source waits, every other
/// URLSession request in the test process waits too. A test that holds that queue on purpose ends
/// the hold from here, the moment it begins: not from its own task, which Swift's pool may not run
/// for minutes while the rest of the suite keeps it busy (a ThreadSanitizer run of CI failed four
/// unrelated tests that way).
final class PlainThreadTrigger: Sendable {
    private let state = Locked((fired: false, action: (@Sendable () -> Void)?.none))

    /// Sets what runs when ``fire()`` is called; at once, if it already was.
    func whenFired(_ action: @escaping @Sendable () -> Void) {
        let run = state.withLock { state -> Bool in
            if state.fired { return true }
            state.action = action
            return false
        }
        if run { Thread { action() }.start() }
    }

    /// Runs the action on a new thread (the first call only); one set later runs when it is set.
    func fire() {
        let action = state.withLock { state -> (@Sendable () -> Void)? in
            if state.fired { return nil }
            state.fired = true
            defer { state.action = nil }
            return state.action
        }
        if let action { Thread { action() }.start() }
    }
}
