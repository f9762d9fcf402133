import Foundation

/// A scripted WebSocket server session (RFC 6455) for testing WebSocket clients: the handshake,
/// then steps that send messages or hand-made (even invalid) frames, echo, wait, close, or drop
/// the connection. Every frame the client sends is checked as a strict server would and recorded
/// in a ``WebSocketRecording``.
///
/// ```swift
/// server.route("/chat") { _ in
///     .webSocket(WebSocketScript([.send(.text("welcome")), .echo()], subprotocol: .firstOffered))
/// }
/// // … the client connects to ws://127.0.0.1:<port>/chat, reads "welcome", sends "hi", reads "hi" …
/// let socket = try await server.takeWebSocket()
/// try await socket.waitUntilFinished()
/// #expect(socket.messages == [.text("hi")])
/// ```
/// A request that is not a valid WebSocket handshake gets `400` (or `426` for a version other than
/// 13). To refuse a handshake, answer with any ordinary ``MockResponse`` instead (`.status(401)`,
/// `.redirect(to:)`).
///
/// Once the steps are done the session stays open: it records what the client sends, answers
/// pings (unless ``answersPings`` is false) and answers the client's close frame, then closes the
/// connection. A client close ends the session at any step.
public struct WebSocketScript: Sendable, Equatable {
    /// Which subprotocol the server picks from the client's `Sec-WebSocket-Protocol` offer.
    public enum SubprotocolChoice: Sendable, Equatable {
        /// None: no `Sec-WebSocket-Protocol` in the answer.
        case none
        /// The first one offered, if any.
        case firstOffered
        /// This one if the client offered it, otherwise none.
        case ifOffered(String)
        /// This one whatever the client offered (a misbehaving server).
        case always(String)
    }

    /// A data message, sent or received.
    public enum Message: Sendable, Hashable, CustomStringConvertible {
        /// A text message.
        case text(String)
        /// A binary message.
        case binary(Data)

        /// The message's payload bytes (UTF-8 for text).
        public var data: Data {
            switch self {
            case .text(let text): return Data(text.utf8)
            case .binary(let data): return data
            }
        }

        /// A short description, e.g. `text(5 bytes)`.
        public var description: String {
            switch self {
            case .text(let text): return "text(\(text.utf8.count) bytes)"
            case .binary(let data): return "binary(\(data.count) bytes)"
            }
        }
    }

    /// One step of a session, run in order.
    public enum Step: Sendable, Equatable {
        /// Sends a message, in one frame, or in frames of at most `fragmentSize` payload bytes.
        case send(Message, fragmentSize: Int? = nil)
        /// Sends one frame exactly as described, valid or not (see ``Frame``).
        case frame(Frame)
        /// Writes these bytes as they are (half a frame, garbage, several frames at once).
        case raw(Data)
        /// Sends a ping with this payload; the pong the client answers with is recorded.
        case ping(Data = Data())
        /// Sends an unsolicited pong with this payload.
        case pong(Data = Data())
        /// Echoes every data message the client sends (as one frame of the same kind) until the
        /// client closes, or only the next `messages` ones if given.
        case echo(messages: Int? = nil)
        /// Waits until the client has sent `count` more data messages.
        case receive(count: Int = 1)
        /// Waits, still answering pings and recording frames.
        case delay(Duration)
        /// Waits until `gate` is opened (or the server shuts down).
        case wait(Gate)
        /// Starts the close handshake (§7.1.2): sends a close frame with `code` (none when nil) and
        /// `reason`, waits for the client's close frame, then closes the connection.
        case close(code: UInt16? = 1000, reason: String = "")
        /// Waits for the client's close frame and answers it (unless the server sent a close frame
        /// first), leaving the connection up: the next step decides how it ends, such as
        /// `.end(.reset)` for a server that resets the connection right after the close handshake.
        /// Without a further step the server closes the connection normally.
        case receiveClose
        /// Ends the connection at once without a close frame: `.close` (FIN), `.reset` (RST),
        /// `.stall` (send nothing more, keep reading until the client goes), `.shutdownOutput`.
        case end(SocketEffect)
    }

    /// The steps, in order.
    public var steps: [Step]
    /// How the subprotocol is chosen.
    public var subprotocol: SubprotocolChoice
    /// Extra header fields for the `101` answer (e.g. a `Sec-WebSocket-Extensions` the client
    /// never offered, to test that it refuses).
    public var extraHeaders: HeaderFields
    /// Replaces the correct `Sec-WebSocket-Accept` value (to test that a client checks it).
    public var acceptValueOverride: String?
    /// Whether pings are answered with a pong carrying the same payload; false plays a server
    /// that never answers (keep-alive timeout tests).
    public var answersPings: Bool
    /// The largest message (or single frame) accepted from the client; a larger one fails the
    /// connection with close code 1009, before its payload is read.
    public var maximumMessageSize: Int

    /// A script; the server accepts the handshake and runs `steps`.
    public init(
        _ steps: [Step] = [], subprotocol: SubprotocolChoice = .none, extraHeaders: HeaderFields = [:],
        acceptValueOverride: String? = nil, answersPings: Bool = true, maximumMessageSize: Int = 16 << 20
    ) {
        self.steps = steps
        self.subprotocol = subprotocol
        self.extraHeaders = extraHeaders
        self.acceptValueOverride = acceptValueOverride
        self.answersPings = answersPings
        self.maximumMessageSize = max(0, maximumMessageSize)
    }

    /// An echo server: every data message comes back until the client closes.
    public static let echo = WebSocketScript([.echo()])

    /// The subprotocol answered to a client that offered `offered`.
    func chosenSubprotocol(offered: [String]) -> String? {
        switch subprotocol {
        case .none: return nil
        case .firstOffered: return offered.first
        case .ifOffered(let name): return offered.contains(name) ? name : nil
        case .always(let name): return name
        }
    }
}

extension MockResponse {
    /// Accepts a WebSocket handshake with `101 Switching Protocols` and runs `script` on the
    /// connection. The response's gate, header delay and effects at `.afterRequest` /
    /// `.responseStart` apply to the handshake.
    ///
    /// ```swift
    /// server.enqueue(.webSocket(.echo))
    /// ```
    public static func webSocket(_ script: WebSocketScript) -> MockResponse {
        MockResponse(status: 101).withBehavior { $0.webSocket = script }
    }

    /// The WebSocket script this response runs, if it is a ``webSocket(_:)`` response.
    public var webSocketScript: WebSocketScript? {
        behavior.webSocket
    }
}
