import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A transport that runs WebSockets itself, a whole message at a time: URLSession's
/// `URLSessionWebSocketTask`. The WebSocket feature drives it through
/// ``WebSocketMessageEngine``; transports that open raw connections instead are
/// ``RawConnectionTransport``s.
protocol WebSocketTaskTransport: Transport {
    /// Creates a WebSocket task for `request` (ws or wss, with the handshake's extra headers),
    /// registered so that `observer` hears how it opens, closes and completes, and hands it, not
    /// resumed yet, to `created`; `.sessionInvalidated` once the transport is shut down. Returns at
    /// once: `created` runs where the transport makes its Foundation calls (``performFoundationCall(_:)``).
    func makeWebSocketTask(
        _ request: URLRequest, observer: any WebSocketTaskObserver,
        then created: @escaping @Sendable (Result<URLSessionWebSocketTask, CourierError>) -> Void)
    /// Runs `call`, which calls a task's methods, after the calls and cancels asked for before it,
    /// and never on the caller's thread: FoundationNetworking's methods may wait for the work queue
    /// every URLSession of the process shares, which a streamed body's read can hold for as long
    /// as its source takes, and a thread of Swift's pool must not wait for that.
    func performFoundationCall(_ call: @escaping @Sendable () -> Void)
    /// Cancels `task` while it runs, as a Foundation call: with a close frame (`close`'s code and
    /// reason), or at once when nil.
    func cancelWebSocketTask(_ task: URLSessionWebSocketTask, with close: (code: URLSessionWebSocketTask.CloseCode, reason: Data?)?)
}

/// Told, on the transport's delegate queue, what happens to a WebSocket task. Held weakly.
protocol WebSocketTaskObserver: AnyObject, Sendable {
    /// The server accepted the opening handshake, choosing `subprotocol` (nil or empty: none).
    func webSocketTaskDidOpen(subprotocol: String?)
    /// The server's close frame arrived, with this code (the task's `CloseCode` raw value) and reason.
    func webSocketTaskDidReceiveClose(code: Int, reason: Data?)
    /// The task ended: `error` nil after a close, else why.
    func webSocketTaskDidComplete(error: (any Error)?)
}
