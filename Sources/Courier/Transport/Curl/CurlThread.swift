import CCourierSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A dedicated POSIX thread for a transport's event loop (never a Swift concurrency or Dispatch
/// thread: the loop blocks in its reactor's wait), joinable so shutdown can wait for it to end.
struct CurlThread: Sendable {
    /// The pthread, as a plain integer so the value is Sendable on every platform.
    private let id: UInt

    /// Why a thread could not be started.
    struct StartError: Error {
        /// The `pthread_create` result.
        let code: Int32
    }

    private final class Entry {
        let name: String
        let body: () -> Void
        init(name: String, body: @escaping () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` (15 characters at most survive) that runs `body`.
    ///
    /// `body` need not be `Sendable`: ownership of everything it captures passes to the new thread,
    /// and the caller must not touch those values afterwards.
    static func start(name: String, _ body: @escaping () -> Void) throws(StartError) -> CurlThread {
        let entry = Unmanaged.passRetained(Entry(name: name, body: body)).toOpaque()
        #if canImport(Darwin)
        var thread: pthread_t?
        #else
        var thread = pthread_t()
        #endif
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                let entry = Unmanaged<Entry>.fromOpaque(argument).takeRetainedValue()
                csystem_name_current_thread(entry.name)
                entry.body()
                return nil
            }, entry)
        guard result == 0 else {
            Unmanaged<Entry>.fromOpaque(entry).release()
            throw StartError(code: result)
        }
        #if canImport(Darwin)
        guard let thread else { throw StartError(code: EAGAIN) }
        let id = UInt(bitPattern: thread)
        #else
        let id = UInt(thread)
        #endif
        return CurlThread(id: id)
    }

    private var pthread: pthread_t? {
        #if canImport(Darwin)
        pthread_t(bitPattern: id)
        #else
        pthread_t(id)
        #endif
    }

    /// Whether the calling thread is this thread.
    var isCurrent: Bool {
        guard let pthread else { return false }
        return pthread_equal(pthread_self(), pthread) != 0
    }

    /// Waits for the thread to end. Call at most once, never from the thread itself.
    func join() {
        guard let pthread else { return }
        _ = pthread_join(pthread, nil)
    }

    /// Lets the thread's resources go when it ends without anyone joining it.
    func detach() {
        guard let pthread else { return }
        _ = pthread_detach(pthread)
    }
}
