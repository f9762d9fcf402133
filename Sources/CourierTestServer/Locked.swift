#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a pthread mutex.
///
/// Used instead of `Synchronization.Mutex` because on Linux `Mutex` waits on a raw futex
/// inside the uninstrumented standard library, so ThreadSanitizer cannot see the
/// happens-before edge of a contended lock and reports false races; pthread mutexes are
/// intercepted by TSan.
final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is only read or written while `mutex` is held.
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a lock guarding `value`.
    init(_ value: Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
