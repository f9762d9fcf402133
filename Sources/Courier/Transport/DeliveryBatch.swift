#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Holds back the request drains that transport events start during one pass of a transport's
/// event loop, and starts them together when the pass ends.
///
/// A small response reaches its request as head, body and completion within one pass of libcurl. Each event is queued on the request's executor at once, but a drain
/// started per event may finish before the next event arrives, so one response could cost three
/// thread wake-ups. Inside a batch, the first event only claims the idle executor; ``flush()``
/// then starts one drain per executor for everything the pass delivered.
///
/// A batch belongs to the thread that began it (an event loop's own thread) and is reached through
/// a thread-local, so transports need no new parameter on their sinks.
final class DeliveryBatch {
    private var held: [any HeldDrain] = []
    /// Body bytes delivered since the last flush.
    private var heldBytes = 0

    /// Held drains start early once this many body bytes wait behind them, so a pass that reads
    /// large bodies does not hold them all in memory until it ends.
    static let flushBytes = 1 << 20

    private init() {}

    /// The batch of the current thread, if it began one.
    static var current: DeliveryBatch? {
        guard let pointer = pthread_getspecific(key) else { return nil }
        return Unmanaged<DeliveryBatch>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Begins a batch on the current thread; it stays until ``end()``. For a loop thread that flushes every pass.
    static func begin() -> DeliveryBatch {
        let batch = DeliveryBatch()
        pthread_setspecific(key, Unmanaged.passRetained(batch).toOpaque())
        return batch
    }

    /// Starts what is held and removes the batch from the current thread.
    func end() {
        flush()
        guard let pointer = pthread_getspecific(Self.key) else { return }
        pthread_setspecific(Self.key, nil)
        Unmanaged<DeliveryBatch>.fromOpaque(pointer).release()
    }

    /// Holds `drain` (a request's executor the caller has just claimed) until ``flush()``.
    func hold(_ drain: any HeldDrain) {
        held.append(drain)
    }

    /// Counts body bytes just delivered to a sink, and flushes once ``flushBytes`` are waiting.
    func noteDelivered(bytes: Int) {
        heldBytes += bytes
        if heldBytes >= Self.flushBytes { flush() }
    }

    /// Starts the drain of every executor held since the last flush.
    func flush() {
        heldBytes = 0
        guard !held.isEmpty else { return }
        let drains = held
        held.removeAll(keepingCapacity: true)
        for drain in drains { drain.startClaimedDrain() }
    }

    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // The loop thread ends its batch before it exits, so no destructor is needed.
        pthread_key_create(&key, nil)
        return key
    }()
}

/// A drain claimed while a ``DeliveryBatch`` is open and started when it flushes: a request's
/// executor (Core), named here through this protocol so that the transport layer names no Core type.
protocol HeldDrain: AnyObject {
    /// Starts the drain the caller claimed earlier.
    func startClaimedDrain()
}
