import Foundation

/// Everything a ``WebSocket`` holds, guarded by its lock: its life (``WebSocketLifecycle``), the
/// protocol (``WebSocketClientConnection``), the connection, and the buffers and waiters between
/// the socket and the application.
struct WebSocketCore: Sendable {
    /// A ping waiting for its pong.
    struct Ping: Sendable {
        var payload: Data
        var sentAt: ContinuousClock.Instant
        /// The caller of ``WebSocket/ping(_:)``; nil for a keep-alive ping.
        var waiter: CheckedContinuation<Duration, any Error>?
    }

    var lifecycle: WebSocketLifecycle
    /// The protocol, once the handshake request is built.
    var client: WebSocketClientConnection?
    /// The attempt to connect, while connecting.
    var attempt: (any RawConnectAttempt)?
    /// The connection, from connected to the end.
    var connection: (any RawConnection)?
    /// Bytes to write, in order; the first one is written from `outputOffset`.
    var output: [Data] = []
    var outputOffset = 0
    var outputBytes = 0
    /// Messages received and not yet taken, from `inboxHead`; a taken slot is emptied at once so
    /// that a slow consumer does not keep what it has read alive.
    var inbox: [WebSocketMessage?] = []
    var inboxHead = 0
    var inboxBytes = 0
    /// The one consumer waiting in ``WebSocket/Messages``.
    var messageWaiter: CheckedContinuation<WebSocketMessage?, any Error>?
    /// Continuations to resume once the lock is released (``WebSocket/withCore(_:)``): never under
    /// it, as a task being cancelled holds the runtime's lock on it while its cancellation handler
    /// waits for this one, and a woken task would find the lock still held.
    var resumptions: [@Sendable () -> Void] = []
    /// Whether the consumer reads on its own thread instead of the poller (``WebSocket/receiveInline()``).
    enum InlineReading: Sendable, Equatable {
        /// The poller reads (unless reading is paused).
        case off
        /// The consumer waits for the next message on its own thread: the poller does not read.
        case waiting
        /// The consumer took a message on its own thread and the poller still does not read: its
        /// next request usually waits inline again, so watching for reads in between would cost two
        /// `epoll_ctl` calls per message on the echo's critical path. A park, a ping, a close or
        /// ``WebSocket/inlineLeaseLimit`` ends the lease (``WebSocket/endInlineLease(_:)``).
        case leased
    }
    var inlineReading = InlineReading.off
    /// A timer ending an inline lease the consumer holds too long is pending.
    var inlineLeaseTimer = false
    /// How long the consumer may wait on its own thread for the next message.
    var inlineWait = WebSocketInlineWait()
    var openWaiters: [CheckedContinuation<Void, any Error>] = []
    var sendWaiters: [CheckedContinuation<Void, any Error>] = []
    var closeWaiters: [CheckedContinuation<Void, Never>] = []
    var pings: [Ping] = []
    var pingCounter: UInt64 = 0
    /// Reading stopped because `inboxBytes` reached the receive buffer size.
    var readingPaused = false
    /// Bytes received so far (over an engine: of messages), which keep a ping's wait alive.
    var bytesReceived: UInt64 = 0
    /// Writing stopped on a full socket; the transport says when it drains.
    var writeBlocked = false
    /// The application called close(): messages arriving after it are not delivered.
    var closeRequested = false
    /// The connection opened at some point.
    var hasOpened = false
    var subprotocol: String?
    var isCompressed = false
    var stateHandlers: [(queue: DispatchQueue, handler: @Sendable (WebSocket.State) -> Void)] = []
    /// Timers not fired yet, to cancel at the end.
    var timers: [Int: Task<Void, Never>] = [:]
    var nextTimer = 0
    /// Where each read lands.
    var readBuffer = [UInt8](repeating: 0, count: 64 << 10)

    // Over a ``WebSocketMessageEngine`` (a URLSession transport) instead of a connection:
    /// The engine, from its creation to the end.
    var engine: (any WebSocketMessageEngine)?
    /// A message was asked of the engine and has not come.
    var engineReceiving = false
    /// Sends the engine has not finished, by number.
    var engineSends: [Int: CheckedContinuation<Void, any Error>] = [:]
    var nextEngineSend = 0
    /// The close frame the application sent, and the server's once it arrived.
    var sentClose: WebSocketCloseFrame?
    var serverClose: WebSocketCloseFrame?

    init(url: URL) {
        lifecycle = WebSocketLifecycle(url: url)
    }

    var phase: WebSocketLifecycle.Phase { lifecycle.phase }

    /// Runs `resumption` once the lock is released.
    mutating func later(_ resumption: @escaping @Sendable () -> Void) {
        resumptions.append(resumption)
    }

    /// Whether the connection has ended.
    var isClosed: Bool {
        if case .closed = lifecycle.phase { true } else { false }
    }

    /// Whether the connection is open.
    var isOpen: Bool { lifecycle.phase == .open }
}
