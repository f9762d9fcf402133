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
    /// registered so that `observer` hears how it opens, closes and completes; not resumed yet.
    /// Throws `.sessionInvalidated` once the transport is shut down.
    func makeWebSocketTask(_ request: URLRequest, observer: any WebSocketTaskObserver) throws(CourierError) -> URLSessionWebSocketTask
    /// Cancels `task` while it runs: with a close frame (`close`'s code and reason), or at once when nil.
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
