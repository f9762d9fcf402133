import Foundation

/// A value behind an `NSLock`, for the test helpers.
///
/// Not `Synchronization.Mutex`: on Linux its waits are futexes that ThreadSanitizer cannot see, and
/// a CI run reported a false race between two helpers' threads. `NSLock` is a pthread mutex there.
final class TestLock<State>: @unchecked Sendable {
    // `lock` guards `state`: it is read and written only inside `withLock`.
    private let lock = NSLock()
    private var state: State

    init(_ state: State) {
        self.state = state
    }

    /// Runs `body` with exclusive access to the state.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }
}
