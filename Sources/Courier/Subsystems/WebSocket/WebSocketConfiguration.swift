/// How a WebSocket connection behaves: limits, compression, keep-alive and buffering.
///
/// ```swift
/// var configuration = WebSocketConfiguration()
/// configuration.pingInterval = .seconds(10)     // keep-alive: a ping every 10 s (default 20 s)…
/// configuration.pingTimeout = .seconds(10)      // …and a server silent for 10 s after it fails (default 30 s)
/// let socket = session.webSocket("v1/live", configuration: configuration)
/// ```
public struct WebSocketConfiguration: Sendable, Hashable {
    /// The largest message accepted, in bytes (compressed messages: once inflated). A larger one
    /// fails the connection with close code 1009 and `.webSocketProtocolViolation`. Default 16 MiB.
    /// On a URLSession transport it is `URLSessionWebSocketTask.maximumMessageSize`.
    public var maximumMessageSize: Int = 16 << 20
    /// Whether to offer permessage-deflate (RFC 7692); used only when the server agrees. Default on,
    /// as browsers do; off where the payloads are already compressed. Not used on a URLSession
    /// transport, where URLSession decides.
    public var offersCompression: Bool = true
    /// How often to send a keep-alive ping while the connection is open; nil for none. Default
    /// 20 s, as in Python's `websockets`: it keeps proxies that drop idle connections (often after
    /// 30 to 120 s) from dropping this one, and with ``pingTimeout`` it bounds how long a server
    /// that went silent, even in the middle of a frame, can hold the connection (50 s by default).
    public var pingInterval: Duration? = .seconds(20)
    /// How long a ping (keep-alive or ``WebSocket/ping(_:)``) may wait for its pong before the
    /// connection is failed with `.timedOut`. The wait starts again while reading is paused for a
    /// slow consumer, and while other bytes keep arriving (a large message the pong waits behind),
    /// so only a server that sends nothing for this long fails. Default 30 s.
    public var pingTimeout: Duration = .seconds(30)
    /// How long the close handshake may take before Courier drops the connection itself. Default 5 s.
    public var closeTimeout: Duration = .seconds(5)
    /// How many bytes of received messages may wait for the consumer before Courier stops reading
    /// the socket (the server then stops sending: backpressure). One message is always accepted
    /// whatever its size. Default 4 MiB. On a URLSession transport Courier stops asking
    /// `URLSessionWebSocketTask` for messages instead; URLSession's own buffer comes on top.
    public var receiveBufferSize: Int = 4 << 20
    /// How many bytes may wait to be written before ``WebSocket/send(_:)-(WebSocketMessage)`` suspends. Default 4 MiB.
    /// Unused on a URLSession transport, where each send waits until its message was written.
    public var sendBufferSize: Int = 4 << 20
    /// The longest the response head of the opening handshake may be, in bytes. Default 64 KiB.
    /// Unused on a URLSession transport, which reads the head itself.
    public var maximumHandshakeResponseSize: Int = 64 << 10

    /// The defaults above.
    public init() {}
}
