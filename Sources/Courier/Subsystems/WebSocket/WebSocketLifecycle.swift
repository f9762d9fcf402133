import Foundation

/// How a WebSocket ended: the transition into ``WebSocketLifecycle/Phase/closed(_:)`` carries it.
enum WebSocketEnd: Sendable, Equatable {
    /// Closed by the close handshake, normally (or as the application asked).
    case closed(WebSocketCloseStatus)
    /// Failed, with the status the connection was closed with when there is one.
    case failed(CourierError, WebSocketCloseStatus?)

    /// The close status, when there is one.
    var status: WebSocketCloseStatus? {
        switch self {
        case .closed(let status): status
        case .failed(_, let status): status
        }
    }

    static func == (lhs: WebSocketEnd, rhs: WebSocketEnd) -> Bool {
        switch (lhs, rhs) {
        case (.closed(let left), .closed(let right)): left == right
        case (.failed(let left, let leftStatus), .failed(let right, let rightStatus)):
            left.kind == right.kind && left.message == right.message && leftStatus == rightStatus
        default: false
        }
    }
}

/// The life of one WebSocket from preparing its handshake to its end, without I/O: the socket
/// (``WebSocket``) tells it what happened and carries out the actions it returns. The framing and
/// the close handshake's bytes are ``WebSocketStateMachine``'s; this machine decides when the
/// connection opens, when it closes, and how it ended, which only the transition into
/// ``Phase/closed(_:)`` records.
///
/// Once the server's close frame has arrived, its code and reason are how the connection ended,
/// however the TCP connection then goes: closed (FIN), reset (RST, as many servers do right after
/// the close handshake), a write that fails, or the close timeout (§7.1.5: 1006 is only for a
/// connection that closed without a close frame).
struct WebSocketLifecycle: Sendable {
    /// Where the connection is.
    enum Phase: Sendable, Equatable {
        /// The handshake request is being prepared (the session's adapters run).
        case preparing
        /// The transport is connecting (TCP, proxy, TLS).
        case connecting
        /// The opening handshake was written; its answer is awaited.
        case handshaking
        /// The server refused the handshake; the start of its body is read for the error.
        case rejected(ResponseHead, body: Data)
        /// Messages flow both ways.
        case open
        /// A close frame was sent or received (`serverFirst`: the server's came first); the
        /// server's, once it arrived.
        case closing(serverFirst: Bool, serverClose: WebSocketCloseFrame?)
        /// Ended.
        case closed(WebSocketEnd)

        static func == (lhs: Phase, rhs: Phase) -> Bool {
            switch (lhs, rhs) {
            case (.preparing, .preparing), (.connecting, .connecting), (.handshaking, .handshaking), (.open, .open): true
            case (.rejected(let left, let leftBody), .rejected(let right, let rightBody)):
                left.statusCode == right.statusCode && leftBody == rightBody
            case (.closing(let left, let leftFrame), .closing(let right, let rightFrame)): left == right && leftFrame == rightFrame
            case (.closed(let left), .closed(let right)): left == right
            default: false
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

    /// What happened.
    enum Event: Sendable {
        /// The transport started connecting.
        case connecting
        /// The transport connected.
        case connected
        /// The server accepted the handshake.
        case accepted
        /// The server answered the handshake with another status than 101.
        case refused(ResponseHead)
        /// Bytes of a refused handshake's body arrived; `ended`: the connection ended.
        case rejectionBody(Data, ended: Bool)
        /// The connection did not open in time.
        case openingTimedOut(Duration)
        /// The application asked to close.
        case closeRequested(WebSocketCloseCode, reason: String)
        /// The application cancelled: close with 1001 without waiting.
        case cancelled
        /// The server's close frame arrived, with this code and reason.
        case closeReceived(WebSocketCloseFrame)
        /// The protocol ended the connection with this outcome.
        case protocolEnded(WebSocketCloseOutcome)
        /// The connection failed (the transport, a timeout, a protocol violation, a bad handshake).
        case failed(CourierError, WebSocketCloseStatus?)
    }

    /// What the socket must do, in order.
    enum Action: Sendable, Equatable {
        /// Write the handshake request and start reading.
        case writeHandshake
        /// The connection is open: answer whoever waits for it, start the keep-alive pings.
        case opened
        /// Have the protocol send a close frame.
        case sendClose(WebSocketCloseCode, reason: String)
        /// Drop the connection if the close handshake has not ended in time.
        case scheduleCloseTimeout
        /// Tell the state handlers.
        case stateChanged(WebSocket.State)
        /// Write what is queued if the socket takes it, release the connection (or stop the
        /// attempt) and answer every waiter with `end`.
        case finish(WebSocketEnd)
    }

    /// The most of a refused handshake's body kept for the error.
    static let rejectionBodyLimit = 64 << 10

    /// The WebSocket URL, for errors.
    let url: URL
    private(set) var phase: Phase = .preparing

    init(url: URL) {
        self.url = url
    }

    /// Applies `event` and returns what to do.
    mutating func handle(_ event: Event) -> [Action] {
        let before = phase.state
        var actions = transition(event)
        if phase.state != before { actions.append(.stateChanged(phase.state)) }
        return actions
    }

    private mutating func transition(_ event: Event) -> [Action] {
        switch (phase, event) {
        case (.closed, _):
            return []

        case (.preparing, .connecting):
            phase = .connecting
            return []
        case (.preparing, .connected), (.connecting, .connected):
            phase = .handshaking
            return [.writeHandshake]
        case (.handshaking, .accepted):
            phase = .open
            return [.opened]
        case (.handshaking, .refused(let head)):
            phase = .rejected(head, body: Data())
            return head.expectedContentLength == 0 ? finishRejection(head, body: Data()) : []
        case (.rejected(let head, var body), .rejectionBody(let bytes, let ended)):
            // At most the announced length, and at most the limit.
            let length =
                head.expectedContentLength >= 0
                ? min(Int(clamping: head.expectedContentLength), Self.rejectionBodyLimit)
                : Self.rejectionBodyLimit
            body.append(bytes.prefix(length - body.count))
            phase = .rejected(head, body: body)
            return body.count >= length || ended ? finishRejection(head, body: body) : []
        case (.preparing, .openingTimedOut(let timeout)), (.connecting, .openingTimedOut(let timeout)),
            (.handshaking, .openingTimedOut(let timeout)), (.rejected, .openingTimedOut(let timeout)):
            return finish(.failed(CourierError(.timedOut, "The WebSocket did not open within \(timeout).", url: url), nil))

        case (.open, .closeRequested(let code, let reason)):
            phase = .closing(serverFirst: false, serverClose: nil)
            return [.sendClose(code, reason: reason), .scheduleCloseTimeout]
        case (.closing, .closeRequested):
            return []
        case (_, .closeRequested):
            return finish(.failed(CourierError(.cancelled, "The WebSocket was closed before it opened.", url: url), nil))

        case (.open, .cancelled):
            return [.sendClose(.goingAway, reason: "")] + finish(cancelled(status: WebSocketCloseStatus(code: .goingAway)))
        case (.closing, .cancelled):
            return finish(cancelled(status: WebSocketCloseStatus(code: .goingAway)))
        case (_, .cancelled):
            return finish(cancelled(status: nil))

        case (.open, .closeReceived(let frame)):
            phase = .closing(serverFirst: true, serverClose: frame)
            // The server closes the TCP connection now (§7.1.1); if it does not, Courier does.
            return [.scheduleCloseTimeout]
        case (.closing(let serverFirst, _), .closeReceived(let frame)):
            phase = .closing(serverFirst: serverFirst, serverClose: frame)
            return [.scheduleCloseTimeout]

        case (.closing(let serverFirst, _), .protocolEnded(.clean(let frame))):
            return finishCleanly(frame, serverFirst: serverFirst)
        case (.open, .protocolEnded(.clean(let frame))):
            return finishCleanly(frame, serverFirst: true)
        case (.closing(let serverFirst, let frame?), .protocolEnded(.abnormal)), (.closing(let serverFirst, let frame?), .failed):
            // The server's close frame came: how the TCP connection ended after it does not matter.
            return finishCleanly(frame, serverFirst: serverFirst)
        case (.closing(let serverFirst, nil), .protocolEnded(.abnormal)):
            return finish(.failed(connectionLost, WebSocketCloseStatus(code: .abnormalClosure, initiatedByServer: serverFirst)))
        case (_, .protocolEnded(.abnormal)):
            return finish(.failed(connectionLost, phase == .open ? WebSocketCloseStatus(code: .abnormalClosure, initiatedByServer: true) : nil))
        case (_, .protocolEnded(.failed(let violation))):
            return finish(.failed(CourierError(webSocketViolation: violation, url: url), WebSocketCloseStatus(code: violation.closeCode)))
        case (.rejected(let head, let body), .failed):
            // The connection ended (or failed) while the refusal's body was read: report the refusal.
            return finishRejection(head, body: body)
        case (_, .failed(let error, let status)):
            return finish(.failed(error, status))

        case (_, .protocolEnded(.clean)), (_, .connecting), (_, .connected), (_, .accepted), (_, .refused),
            (_, .rejectionBody), (_, .openingTimedOut), (_, .closeReceived):
            return []
        }
    }

    private var connectionLost: CourierError {
        CourierError(.connectionLost, "The connection closed without a WebSocket close frame.", url: url)
    }

    private func cancelled(status: WebSocketCloseStatus?) -> WebSocketEnd {
        .failed(CourierError(.cancelled, "The WebSocket was cancelled.", url: url), status)
    }

    /// The close handshake ended: normally, unless the server closed first with an abnormal code.
    private mutating func finishCleanly(_ frame: WebSocketCloseFrame, serverFirst: Bool) -> [Action] {
        let status = WebSocketCloseStatus(code: frame.code, reason: frame.reason, initiatedByServer: serverFirst)
        if serverFirst, !status.isNormal {
            return finish(.failed(CourierError(webSocketClosedWith: status, url: url), status))
        }
        return finish(.closed(status))
    }

    private mutating func finishRejection(_ head: ResponseHead, body: Data) -> [Action] {
        let response = WebSocketHandshakeResponse(statusCode: head.statusCode, headers: head.headers, body: body)
        return finish(.failed(CourierError(webSocketHandshake: .unexpectedStatus(head.statusCode), response: response, url: url), nil))
    }

    private mutating func finish(_ end: WebSocketEnd) -> [Action] {
        phase = .closed(end)
        return [.finish(end)]
    }
}
