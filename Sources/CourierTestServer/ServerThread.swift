#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A joinable POSIX thread that runs a closure; the server's blocking I/O never touches Swift's
/// cooperative pool.
struct ServerThread: Sendable {
    /// The `pthread_t` as an integer, so the handle stays Sendable on every platform.
    private let handle: UInt

    private final class Payload: Sendable {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts a thread named `name` (truncated to 15 bytes) that runs `body`; nil if the system
    /// refused to create one.
    static func start(name: String, _ body: @escaping @Sendable () -> Void) -> ServerThread? {
        let context = Unmanaged.passRetained(Payload(name: name, body: body)).toOpaque()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 2 << 20)
        #if canImport(Glibc)
        var thread = pthread_t()
        let result = pthread_create(
            &thread, &attributes,
            { context in
                guard let context else { return nil }
                ServerThread.run(context)
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Payload>.fromOpaque(context).release()
            return nil
        }
        // Named by the creator so the name is in place before `start` returns.
        if let setName = linuxSetName { _ = setName(thread, String(name.utf8.prefix(15)) ?? "TestServer") }
        return ServerThread(handle: UInt(thread))
        #else
        var thread: pthread_t?
        let result = pthread_create(
            &thread, &attributes,
            { context in
                ServerThread.run(context)
                return nil
            }, context)
        guard result == 0, let thread else {
            Unmanaged<Payload>.fromOpaque(context).release()
            return nil
        }
        return ServerThread(handle: UInt(bitPattern: thread))
        #endif
    }

    /// Whether the caller is running on this thread.
    var isCurrent: Bool {
        #if canImport(Glibc)
        return pthread_equal(pthread_self(), pthread_t(handle)) != 0
        #else
        guard let thread = pthread_t(bitPattern: handle) else { return false }
        return pthread_equal(pthread_self(), thread) != 0
        #endif
    }

    /// Waits for the thread to finish; a thread cannot join itself, so it is detached instead.
    func join() {
        #if canImport(Glibc)
        let thread = pthread_t(handle)
        #else
        guard let thread = pthread_t(bitPattern: handle) else { return }
        #endif
        if pthread_equal(pthread_self(), thread) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    #if canImport(Glibc)
    /// `pthread_setname_np` is a GNU extension the Glibc module does not export, so it is looked
    /// up at run time.
    private static let linuxSetName: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "pthread_setname_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32).self)
    }()
    #endif

    private static func run(_ context: UnsafeMutableRawPointer) {
        let payload = Unmanaged<Payload>.fromOpaque(context).takeRetainedValue()
        #if !canImport(Glibc)
        // Darwin only lets a thread name itself.
        pthread_setname_np(String(payload.name.utf8.prefix(15)) ?? "TestServer")
        #endif
        payload.body()
    }
}
