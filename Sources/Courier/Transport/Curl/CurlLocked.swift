#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex.
///
/// The curl transport uses this instead of `Synchronization.Mutex` because on Linux `Mutex` is
/// built on futexes that ThreadSanitizer cannot see: every `Mutex`-guarded access is reported as
/// a race, which would bury real races in the cancel/complete paths. `pthread_mutex_t` is
/// understood by ThreadSanitizer and costs the same uncontended.
final class CurlLocked<State: Sendable>: @unchecked Sendable {
    // `mutex` guards `state`: it is read and written only inside `withLock`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    /// Creates the lock holding `state`.
    init(_ state: State) {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        self.state = state
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the state. `body` must not block or re-enter this lock.
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}
