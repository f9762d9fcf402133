import Foundation

/// How a WebSocket ended: the transition into ``WebSocketCore/Phase/closed(_:)`` carries it.
enum WebSocketEnd: Sendable {
    /// Closed by the close handshake, normally (or as the application asked).
    case closed(WebSocketCloseStatus)
    /// Failed, with the status the connection was closed with when there is one.
    case failed(CourierError, WebSocketCloseStatus?)

    var status: WebSocketCloseStatus? {
        switch self {
        case .closed(let status): status
        case .failed(_, let status): status
        }
    }
}

/// Everything a ``WebSocket`` holds, guarded by its lock: where the connection is in its life
/// (``Phase``), the protocol (``WebSocketClientConnection``), and the buffers and waiters between
/// the socket and the application.
struct WebSocketCore: Sendable {
    /// The connection's life. The connection (or the attempt to make it) is carried by the phases
    /// that have one; how it ended by ``closed(_:)``.
    enum Phase: Sendable {
        /// The handshake request is being prepared (the session's adapters run).
        case preparing
        /// The transport is connecting (TCP, proxy, TLS).
        case connecting(any RawConnectAttempt)
        /// The opening handshake was written; its answer is awaited.
        case handshaking(any RawConnection)
        /// The server refused the handshake; the start of its body is being read for the error.
        case rejected(any RawConnection, ResponseHead, body: Data)
        /// Messages flow both ways.
        case open(any RawConnection)
        /// A close frame was sent or received; the close handshake is finishing.
        case closing(any RawConnection)
        /// Ended; nothing more happens.
        case closed(WebSocketEnd)

        /// The connection, in the phases that have one.
        var connection: (any RawConnection)? {
            switch self {
            case .handshaking(let connection), .rejected(let connection, _, _), .open(let connection), .closing(let connection):
                connection
            case .preparing, .connecting, .closed:
                nil
            }
        }

        /// The phase as the application sees it.
        var state: WebSocket.State {
            switch self {
            case .preparing, .connecting, .handshaking, .rejected: .connecting
            case .open: .open
            case .closing: .closing
            case .closed: .closed
            }
        }
    }

    /// A ping waiting for its pong.
    struct Ping: Sendable {
        var payload: Data
        var sentAt: ContinuousClock.Instant
        /// The caller of ``WebSocket/ping(_:)``; nil for a keep-alive ping.
        var waiter: CheckedContinuation<Duration, any Error>?
    }

    var phase: Phase = .preparing
    /// The protocol, once the handshake request is built.
    var client: WebSocketClientConnection?
    /// Bytes to write, in order; the first one is written from `outputOffset`.
    var output: [Data] = []
    var outputOffset = 0
    var outputBytes = 0
    /// Messages received and not yet taken, from `inboxHead`.
    var inbox: [WebSocketMessage] = []
    var inboxHead = 0
    var inboxBytes = 0
    /// The one consumer waiting in ``WebSocket/Messages``.
    var messageWaiter: CheckedContinuation<WebSocketMessage?, any Error>?
    var openWaiters: [CheckedContinuation<Void, any Error>] = []
    var sendWaiters: [CheckedContinuation<Void, any Error>] = []
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    var pings: [Ping] = []
    var pingCounter: UInt64 = 0
    /// Reading stopped because `inboxBytes` reached the receive buffer size.
    var readingPaused = false
    /// Writing stopped on a full socket; the poller says when it drains.
    var writeBlocked = false
    /// The application called close(): messages arriving after it are not delivered.
    var closeRequested = false
    /// Why the connection is failing, recorded before the protocol reports the end.
    var failure: CourierError?
    /// Our close frame, once sent, and whether the server's came first.
    var sentClose: WebSocketCloseFrame?
    var serverClosedFirst = false
    var subprotocol: String?
    var isCompressed = false
    var stateHandlers: [(queue: DispatchQueue, handler: @Sendable (WebSocket.State) -> Void)] = []
    var reportedState: WebSocket.State = .connecting
    /// Timers not fired yet, to cancel at the end.
    var timers: [Int: Task<Void, Never>] = [:]
    var nextTimer = 0
    /// Where each read lands.
    var readBuffer = [UInt8](repeating: 0, count: 64 << 10)

    /// Whether the phase is `rejected`.
    var isReadingRejection: Bool {
        if case .rejected = phase { true } else { false }
    }

    /// Whether the phase is closed.
    var isClosed: Bool {
        if case .closed = phase { true } else { false }
    }
}
