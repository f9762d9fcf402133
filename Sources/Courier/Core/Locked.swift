#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex: Courier's one lock type (also used by the `courier` tool,
/// through the `Locking` SPI).
///
/// Not `Synchronization.Mutex`: on Linux that is built on futexes ThreadSanitizer cannot see, so
/// every contended access is reported as a race and real races would drown in the noise.
/// `pthread_mutex_t` is understood by ThreadSanitizer and costs the same when uncontended.
@_spi(Locking) public final class Locked<State> {
    // `mutex` guards `state`: it is read and written only inside `withLock`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    /// Creates the lock holding `state`.
    public init(_ state: State) {
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

    /// Runs `body` with exclusive access to the state. `body` must not block or take this lock again.
    public func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

// The mutex guards every access to `state`, so the box is as sendable as the state it holds.
@_spi(Locking) extension Locked: @unchecked Sendable where State: Sendable {}
