#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock a curl event loop holds for every pass over its transfers, whichever thread runs it:
/// the loop's own thread, or a thread that starts a transfer while the loop sleeps.
///
/// A plain POSIX mutex (ThreadSanitizer understands it), taken and released in different scopes of
/// the loop's run, which `Locked`'s closure cannot express. Also records, per thread, which loop's
/// pass the thread is running away from the loop's own thread, so a sink that shuts the transport
/// down from there is recognised as being inside a pass.
final class CurlPassLock: @unchecked Sendable {
    // `mutex` is the lock itself and is touched only through pthread calls, which are thread-safe.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Waits for the lock. The loop thread only: no other thread ever waits for it.
    func lock() { pthread_mutex_lock(mutex) }

    /// Releases the lock.
    func unlock() { pthread_mutex_unlock(mutex) }

    /// Runs `body` with the lock held and the calling thread marked as inside a pass, or returns
    /// nil at once when the lock is busy (the loop is running a pass, or another thread is).
    func withLockIfAvailable<Result>(_ body: () -> Result) -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        let outer = pthread_getspecific(Self.key)
        pthread_setspecific(Self.key, Unmanaged.passUnretained(self).toOpaque())
        defer {
            pthread_setspecific(Self.key, outer)
            pthread_mutex_unlock(mutex)
        }
        return body()
    }

    /// Whether the calling thread is running a pass under this lock away from the loop's thread.
    var isHeldByCurrentThreadForAPass: Bool {
        pthread_getspecific(Self.key) == Unmanaged.passUnretained(self).toOpaque()
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // Cleared before every pass returns, so no destructor is needed.
        pthread_key_create(&key, nil)
        return key
    }()
}
