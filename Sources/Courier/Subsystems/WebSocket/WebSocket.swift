import CourierLocking
import Foundation

/// A WebSocket connection (RFC 6455), opened by ``Session/webSocket(_:protocols:headers:configuration:)``.
///
/// It starts connecting at once, over the session's transport, with its TLS settings, proxy,
/// default headers and adapters. Send with ``send(_:)-(WebSocketMessage)``, read ``messages``, and close
/// with ``close(code:reason:)``:
///
/// ```swift
/// let socket = session.webSocket("wss://api.example.com/v1/live", protocols: ["chat"])
/// try await socket.send(.text("hello"))
/// for try await message in socket.messages {
///     print(message.text ?? "\(message.data.count) bytes")
/// }
/// ```
///
/// Pings from the server are answered automatically; ``ping(_:)`` measures the round trip, and
/// a keep-alive ping every ``WebSocketConfiguration/pingInterval`` (20 s by default) keeps an idle
/// connection alive and fails one whose server went silent, even in the middle of a frame, with
/// `.timedOut`. Backpressure works both
/// ways: a consumer that stops reading stops the socket being read (the server then stops
/// sending), and `send` suspends while the socket and Courier's buffer are full. Cancelling the
/// task that reads ``messages`` (or awaits any call) closes the connection with 1001.
///
/// Every failure is a ``CourierError``: `.webSocketHandshakeFailed` (with the server's answer),
/// `.webSocketClosed` (the server's close code and reason), `.webSocketProtocolViolation`,
/// `.connectionLost`, `.timedOut`, `.cancelled`, and the transport's own kinds.
///
/// On the curl transport (the default on Linux) Courier speaks RFC 6455 itself. On a URLSession
/// transport (every session on Apple platforms) Foundation's `URLSessionWebSocketTask` does,
/// behind this same API, with these differences: URLSession decides compression (``isCompressed``
/// stays false), the payload of pings, and its own buffering (reads stop once
/// ``WebSocketConfiguration/receiveBufferSize`` bytes of messages wait, but URLSession buffers
/// beyond that; `send` returns once URLSession wrote the message); a refusal's
/// ``CourierError/webSocketHandshakeResponse`` has no body; on Linux the task cannot open
/// WebSockets at all and every socket fails with `.invalidConfiguration`.
public final class WebSocket: Sendable {
    /// Where the connection is in its life.
    public enum State: Sendable, Hashable {
        /// Connecting and running the opening handshake.
        case connecting
        /// Open: messages flow both ways.
        case open
        /// A close frame was sent or received; the close handshake is finishing.
        case closing
        /// Closed: ``WebSocket/closeStatus`` says how.
        case closed
    }

    /// The WebSocket URL (ws or wss), resolved against the session's base URL.
    public let url: URL
    /// The settings this connection was opened with.
    public let configuration: WebSocketConfiguration
    /// The subprotocols offered, in order of preference.
    public let protocols: [String]

    /// The session it belongs to, kept alive while the socket is: its transport carries the connection.
    let session: Session
    /// Whether the transport runs the protocol itself (URLSession's `URLSessionWebSocketTask`,
    /// through a ``WebSocketMessageEngine``) rather than Courier over a raw connection.
    let usesMessageEngine: Bool
    /// The clock the opening, ping, keep-alive and close timeouts run on; tests inject one they control.
    let clock: any Clock<Duration>

    // Guards the whole connection state (phase, protocol, buffers, waiters); I/O on the
    // connection happens under it too, which serialises every call into the transport.
    let core: Locked<WebSocketCore>

    init(
        session: Session, url: URL, protocols: [String], configuration: WebSocketConfiguration,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.session = session
        self.clock = clock
        usesMessageEngine = session.transport is any WebSocketTaskTransport
        core = Locked(WebSocketCore(url: url))
        self.url = url
        self.protocols = protocols
        self.configuration = configuration
    }

    deinit {
        // The last reference went without a close: end the connection (it holds no reference back).
        withCore { core in apply(.cancelled, &core) }
    }

    /// Where the connection is.
    public var state: State { withCore { $0.phase.state } }

    /// The subprotocol the server chose from ``protocols``, once open; nil when it chose none.
    public var subprotocol: String? { withCore { $0.subprotocol } }

    /// Whether permessage-deflate is in use (offered by ``WebSocketConfiguration/offersCompression``
    /// and accepted by the server). Always false on a URLSession transport, which does not say.
    public var isCompressed: Bool { withCore { $0.isCompressed } }

    /// How the connection was closed, once it is: the close frame's code and reason, 1006
    /// (``WebSocketCloseCode/abnormalClosure``) when it ended without one; nil while open or when it never opened.
    public var closeStatus: WebSocketCloseStatus? {
        withCore { core in
            if case .closed(let end) = core.phase { end.status } else { nil }
        }
    }

    /// Waits until the connection has opened; throws why it could not. A connection that opened
    /// and has closed since returns too: how it ended shows in ``messages`` and ``closeStatus``.
    /// Sending waits for this itself, so calling it is needed only to learn early.
    public func connect() async throws {
        if withCore({ $0.isOpen }) { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                withCore { core in
                    if core.phase.state == .connecting {
                        core.openWaiters.append(continuation)
                    } else if core.hasOpened {
                        core.later { continuation.resume() }
                    } else {
                        let error = notOpenError(core)
                        core.later { continuation.resume(throwing: error) }
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Sends a message; suspends while more than ``WebSocketConfiguration/sendBufferSize`` bytes
    /// wait to be written, and until the connection is open. On a URLSession transport, returns
    /// once `URLSessionWebSocketTask` wrote it.
    ///
    /// ```swift
    /// try await socket.send(.binary(frame))
    /// ```
    public func send(_ message: WebSocketMessage) async throws {
        if usesMessageEngine { return try await sendThroughEngine(message) }
        let full = try withCore { core throws(CourierError) -> Bool? in
            switch core.phase.state {
            case .connecting: return nil
            case .closing, .closed: throw notOpenError(core)
            case .open: break
            }
            try enqueue(message, &core)
            return core.outputBytes > configuration.sendBufferSize
        }
        switch full {
        case nil:
            try await connect()
            try await send(message)
        case true?:
            try await waitForRoomToSend()
        case false?:
            return
        }
    }

    /// Sends `text` as a text message.
    public func send(_ text: String) async throws { try await send(.text(text)) }

    /// Sends `data` as a binary message.
    public func send(_ data: Data) async throws { try await send(.binary(data)) }

    /// Sends `value` encoded as JSON, in a text message.
    ///
    /// ```swift
    /// try await socket.send(json: Subscribe(channel: "prices"))
    /// ```
    public func send<Value: Encodable>(json value: Value, encoder: JSONEncoder = JSONEncoder()) async throws {
        let data: Data
        do {
            data = try encoder.encode(value)
        } catch {
            throw CourierError(.encodingFailed, "The WebSocket message could not be encoded as JSON: \(error)", underlyingError: error, url: url)
        }
        try await send(.text(String(decoding: data, as: UTF8.self)))
    }

    /// Sends a ping and returns the time until its pong arrived. An empty `payload` (the default)
    /// is replaced by a counter, so each pong is matched to its ping. Fails the connection with
    /// `.timedOut` when no pong comes within ``WebSocketConfiguration/pingTimeout``. On a
    /// URLSession transport `payload` is not sent: `URLSessionWebSocketTask` chooses its own.
    @discardableResult
    public func ping(_ payload: Data = Data()) async throws -> Duration {
        try await connect()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Duration, any Error>) in
                withCore { core in
                    sendPing(payload, waiter: continuation, &core)
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Closes the connection with `code` and `reason` and waits for the close handshake to finish
    /// (or ``WebSocketConfiguration/closeTimeout``). Messages the server sends before its close
    /// frame are still delivered while they fit ``WebSocketConfiguration/receiveBufferSize``
    /// (past it they are discarded, so the handshake can finish). Closing a connection that is
    /// still opening abandons it.
    ///
    /// Throws `.invalidRequest` for a code that may not be sent (1005, 1006, 1015, unassigned ones)
    /// or a reason longer than 123 bytes of UTF-8; nothing is sent then.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async throws {
        guard code.isValidOnWire else {
            throw CourierError(.invalidRequest, "The close code \(code) may not be sent (RFC 6455 §7.4).", url: url)
        }
        guard reason.utf8.count <= WebSocketCloseFrame.maximumReasonByteCount else {
            throw CourierError(
                .invalidRequest, "A close reason may have at most 123 bytes of UTF-8; this one has \(reason.utf8.count).",
                url: url)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            withCore { core in
                apply(.closeRequested(code, reason: reason), &core)
                if core.isClosed { core.later { continuation.resume() } } else { core.closeWaiters.append(continuation) }
            }
        }
    }

    /// Closes the connection with 1001 (going away) at once, without waiting for the server's
    /// answer; whatever awaits the connection fails with `.cancelled`.
    public func cancel() {
        withCore { core in apply(.cancelled, &core) }
    }

    /// Calls `handler` on `queue` each time ``state`` changes.
    @discardableResult
    public func onStateChange(queue: DispatchQueue = .main, _ handler: @escaping @Sendable (State) -> Void) -> Self {
        withCore { $0.stateHandlers.append((queue, handler)) }
        return self
    }

    /// The messages as they arrive, in order (one consumer at a time). The sequence finishes when
    /// the connection closes normally (1000, 1001 or no code) and throws the reason otherwise.
    public var messages: Messages { Messages(socket: self) }

    /// The messages of a ``WebSocket``: see ``WebSocket/messages``.
    public struct Messages: AsyncSequence, Sendable {
        /// Each element is one complete message.
        public typealias Element = WebSocketMessage
        let socket: WebSocket

        /// An iterator over the messages.
        public func makeAsyncIterator() -> Iterator { Iterator(socket: socket) }

        /// Takes the next message, waiting for one.
        public struct Iterator: AsyncIteratorProtocol {
            let socket: WebSocket

            /// The next message; nil once the connection closed normally; throws why it did not.
            public mutating func next() async throws -> WebSocketMessage? {
                try await socket.nextMessage()
            }
        }
    }
}
