#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value guarded by a POSIX mutex: the one lock type of Courier, its integrations,
/// CourierTestServer and the `courier` tool (package-only: it is not part of any product's API).
///
/// Not `Synchronization.Mutex`: on Linux that is built on futexes ThreadSanitizer cannot see, so
/// every contended access is reported as a race and real races would drown in the noise.
/// `pthread_mutex_t` is understood by ThreadSanitizer and costs the same when uncontended.
package struct Locked<State> {
    private let storage: LockedStorage<State>

    /// Creates the lock holding `state`.
    package init(_ state: State) {
        storage = LockedStorage.make(state)
    }

    /// Runs `body` with exclusive access to the state. `body` must not block or take this lock again.
    package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { state, mutex in
            pthread_mutex_lock(mutex)
            defer { pthread_mutex_unlock(mutex) }
            return try body(&state.pointee)
        }
    }
}

// The mutex guards every access to `state`, so the box is as sendable as the state it holds.
extension Locked: @unchecked Sendable where State: Sendable {}

/// The state and its mutex in one allocation: the state is the buffer's header, the mutex its one
/// element (a tail-allocated element has a stable address, which a mutex needs).
private final class LockedStorage<State>: ManagedBuffer<State, pthread_mutex_t> {
    static func make(_ state: State) -> LockedStorage<State> {
        let storage = unsafeDowncast(create(minimumCapacity: 1) { _ in state }, to: LockedStorage<State>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            pthread_mutex_init(mutex, nil)
        }
        return storage
    }

    deinit {
        withUnsafeMutablePointerToElements { mutex in
            pthread_mutex_destroy(mutex)
            mutex.deinitialize(count: 1)
        }
    }
}
