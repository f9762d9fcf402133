import Foundation

/// What one read or write on a ``RawConnection`` amounted to.
enum RawConnectionIO: Sendable {
    /// This many bytes were read or written (never 0 for a read: that is ``ended``).
    case transferred(Int)
    /// Nothing can be read or written now; the observer hears when that changes.
    case wouldBlock
    /// The peer ended the stream (reads only).
    case ended
    /// The connection failed.
    case failed(CourierError)
}

/// A connection a transport opened (TCP, proxy tunnel, TLS) for a protocol Courier speaks itself
/// once it is up: WebSocket. Reads and writes never block.
///
/// Not thread-safe: its owner serialises every call (one lock around them), as libcurl requires.
protocol RawConnection: AnyObject, Sendable {
    /// Whether bytes may wait inside the connection while the socket has nothing to read (TLS
    /// records decrypted ahead): the owner then reads until ``receive(into:)`` would block
    /// rather than stopping at a short read.
    var holdsReadBytes: Bool { get }
    /// Writes what the socket takes now of `bytes`.
    func send(_ bytes: UnsafeRawBufferPointer) -> RawConnectionIO
    /// Reads what is there into `buffer`.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> RawConnectionIO
    /// What the owner wants to hear about: the observer is told when the connection may be read
    /// (while `reading`) or written (while `writing`), and always when it ends.
    func watch(reading: Bool, writing: Bool)
    /// Blocks the calling thread until the connection may be read or `timeout` passes (a short
    /// wait: a caller waiting for an answer it expects within microseconds); whether it may.
    func awaitReadable(within timeout: Duration) -> Bool
    /// Closes the connection; the observer hears nothing more. Idempotent.
    func close()
}

/// Told, on a transport thread, when a raw connection may be read or written.
protocol RawConnectionObserver: AnyObject, Sendable {
    /// The connection is ready for what was asked (or has ended, which a read then reports).
    func connectionIsReady(readable: Bool, writable: Bool)
    /// The transport shut down: the connection is closed, the owner must stop using it.
    func transportDidShutDown()
}

/// A connection being opened; cancelling it ends the attempt promptly (its completion reports `.cancelled`).
protocol RawConnectAttempt: Sendable {
    /// Stops the attempt. Idempotent; does nothing once the completion ran.
    func cancel()
}

/// A transport that can open raw connections.
protocol RawConnectionTransport: Transport {
    /// Opens a connection to `url`'s host and port (http, or https with the transport's TLS
    /// configuration), through the proxy the transport would use, within `timeout`.
    /// `completion` runs once, on a transport thread, with the connection or the failure.
    func openRawConnection(
        to url: URL, timeout: Duration, observer: any RawConnectionObserver,
        completion: @escaping @Sendable (Result<any RawConnection, CourierError>) -> Void
    ) -> any RawConnectAttempt
}
