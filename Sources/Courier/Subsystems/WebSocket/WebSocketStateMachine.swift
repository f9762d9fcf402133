import Foundation

/// The client side of RFC 6455 without I/O: the transport feeds it what happened (bytes arrived,
/// the application asked to send, the connection ended) and carries out the actions it returns
/// (write these bytes, deliver this message, close the connection).
///
/// ``state`` changes only in this type's three functions: ``handle(_:)`` for every event, and,
/// for what a received frame causes (a close frame, a violation), `receive` and `fail` which it calls.
/// Framing and reassembly live in ``WebSocketFrameParser`` and ``WebSocketMessageAssembler``. Pings are answered with pongs automatically, the close handshake runs
/// both ways, text is validated as UTF-8 fragment by fragment, and a protocol violation fails the
/// connection with its close code (§7.1.7).
struct WebSocketStateMachine: Sendable {
    /// Where the connection is in its life (§4, §7).
    enum State: Sendable, Hashable {
        /// The opening handshake has not finished.
        case connecting
        /// Messages flow both ways.
        case open
        /// A close frame was sent, received or both; the connection is still up. Once both are
        /// there the handshake is done and the server is expected to close the TCP connection.
        case closing(sent: WebSocketCloseFrame?, received: WebSocketCloseFrame?)
        /// The connection has ended; nothing more happens.
        case closed(WebSocketCloseOutcome)
    }

    /// What happened.
    enum Event: Sendable, Hashable {
        /// The server accepted the opening handshake.
        case handshakeCompleted
        /// Bytes arrived from the server.
        case bytesReceived(Data)
        /// The application wants to send a message.
        case send(WebSocketMessage)
        /// The application wants to send a ping with this payload (at most 125 bytes).
        case sendPing(Data)
        /// The application wants to send an unsolicited pong (a heartbeat, §5.5.3).
        case sendPong(Data)
        /// The application wants to close with this code and reason (§7.1.2).
        case close(WebSocketCloseCode, reason: String)
        /// The connection ended (end of stream, reset, a failed read or write, or a local close),
        /// as the transport saw it: a clean end once the server's close frame has arrived.
        case connectionClosed
    }

    /// What the transport must do, in order.
    enum Action: Sendable, Hashable {
        /// Write these bytes to the connection.
        case send(Data)
        /// Hand this message to the application.
        case deliver(WebSocketMessage)
        /// A pong arrived with this payload (the answer to a ping, or a heartbeat).
        case pongReceived(Data)
        /// The server's close frame arrived, with this code and reason: it is how the connection
        /// ends, whatever happens to the TCP connection next. When the server closed first, the
        /// ``send(_:)`` answering it comes right after. The server should then close the TCP
        /// connection (§7.1.1); the transport closes it itself if it does not do so soon.
        case closeReceived(WebSocketCloseFrame)
        /// The server broke the protocol: a close frame with the violation's code was sent (in
        /// the ``send(_:)`` before this, when one could still be sent) and the connection must be
        /// closed now (§7.1.7). The state is ``State/closed(_:)`` already.
        case fail(WebSocketProtocolViolation)
        /// Close the TCP connection now.
        case closeConnection
        /// The connection has ended, with this outcome.
        case closed(WebSocketCloseOutcome)
        /// The request could not be carried out in this state or with these arguments; nothing was sent.
        case refused(Refusal)
    }

    /// Why a request of the application was refused.
    enum Refusal: Sendable, Hashable {
        /// The connection is not open (still connecting, or closing or closed).
        case notOpen
        /// A ping or pong payload longer than 125 bytes (§5.5).
        case controlPayloadTooLong(Int)
        /// A close code that may not be sent (§7.4: 1005, 1006, 1015 and unassigned codes).
        case invalidCloseCode(WebSocketCloseCode)
        /// A close reason longer than 123 bytes of UTF-8 (§5.5.1).
        case closeReasonTooLong(Int)
    }

    /// The largest message accepted; a larger one fails the connection with 1009.
    let maximumMessageSize: Int
    private let keys: WebSocketMaskingKeySource
    /// Compresses outgoing messages when permessage-deflate was agreed and zlib can.
    private let deflater: WebSocketDeflater?
    private(set) var state: State = .connecting
    private var parser: WebSocketFrameParser
    private var reassembly: WebSocketMessageAssembler

    /// - Parameters:
    ///   - maximumMessageSize: the largest message accepted, on the wire and inflated.
    ///   - keys: where each frame's masking key comes from.
    ///   - compression: the permessage-deflate parameters the handshake agreed on, if any; the
    ///     server's compressed messages are then inflated, and data messages sent compressed
    ///     when `compressesOutgoing` (and zlib can; otherwise they go uncompressed, which §6 allows).
    init(
        maximumMessageSize: Int = WebSocketFrameParser.defaultMaximumMessageSize, keys: WebSocketMaskingKeySource = .random,
        compression: WebSocketDeflateParameters? = nil, compressesOutgoing: Bool = true
    ) {
        self.maximumMessageSize = maximumMessageSize
        self.keys = keys
        deflater = compression.flatMap { parameters in
            compressesOutgoing
                ? WebSocketDeflater(
                    windowBits: parameters.clientMaxWindowBits ?? 15,
                    resetsPerMessage: parameters.clientNoContextTakeover) : nil
        }
        let inflater = compression.flatMap { WebSocketInflater(resetsPerMessage: $0.serverNoContextTakeover) }
        parser = WebSocketFrameParser(maximumMessageSize: maximumMessageSize, allowsCompressedMessages: inflater != nil)
        reassembly = WebSocketMessageAssembler(maximumMessageSize: maximumMessageSize, inflater: inflater)
    }

    /// Applies `event` and returns what to do, in order.
    mutating func handle(_ event: Event) -> [Action] {
        switch (state, event) {
        case (.connecting, .handshakeCompleted):
            state = .open
            return []
        case (_, .handshakeCompleted):
            return []

        case (.open, .send(let message)):
            let (opcode, payload): (WebSocketOpcode, Data) =
                switch message {
                case .text(let text): (.text, Data(text.utf8))
                case .binary(let data): (.binary, data)
                }
            if let compressed = deflater?.deflate(payload) {
                return [.send(WebSocketFrameEncoder.encode(opcode: opcode, payload: compressed, rsv1: true, key: keys.nextKey()))]
            }
            return [.send(encode(opcode, payload))]
        case (.open, .sendPing(let payload)), (.open, .sendPong(let payload)):
            guard payload.count <= 125 else { return [.refused(.controlPayloadTooLong(payload.count))] }
            if case .sendPing = event { return [.send(encode(.ping, payload))] }
            return [.send(encode(.pong, payload))]
        case (_, .send), (_, .sendPing), (_, .sendPong):
            return [.refused(.notOpen)]

        case (.open, .close(let code, let reason)):
            guard code.isValidOnWire else { return [.refused(.invalidCloseCode(code))] }
            let reasonLength = reason.utf8.count
            guard reasonLength <= WebSocketCloseFrame.maximumReasonByteCount else { return [.refused(.closeReasonTooLong(reasonLength))] }
            let close = WebSocketCloseFrame(code: code, reason: reason)
            state = .closing(sent: close, received: nil)
            return [.send(encode(.close, close.payload))]
        case (.closing, .close), (.closed, .close):
            // Already closing: the first close stands.
            return []
        case (.connecting, .close):
            state = .closed(.abnormal)
            return [.closeConnection, .closed(.abnormal)]

        case (.open, .bytesReceived(let bytes)), (.closing(_, received: nil), .bytesReceived(let bytes)):
            return receive(bytes)
        case (_, .bytesReceived):
            // Before the handshake the transport reads the response head itself; after the peer's
            // close frame nothing more may come (§5.5.1), so it is discarded.
            return []

        case (.closing(_, received: .some(let peer)), .connectionClosed):
            state = .closed(.clean(peer))
            return [.closed(.clean(peer))]
        case (.closed, .connectionClosed):
            return []
        case (_, .connectionClosed):
            state = .closed(.abnormal)
            return [.closed(.abnormal)]
        }
    }

    /// Reads the frames in `bytes` and acts on each, in one switch over what each frame amounted to.
    private mutating func receive(_ bytes: Data) -> [Action] {
        let output = parser.parse(bytes)
        var actions: [Action] = []
        for frame in output.frames {
            switch reassembly.receive(frame) {
            case .none:
                break
            case .message(let message):
                actions.append(.deliver(message))
            case .ping(let payload):
                // Only while open: after our close frame nothing more may be sent (§5.5.1).
                if state == .open { actions.append(.send(encode(.pong, payload))) }
            case .pong(let payload):
                actions.append(.pongReceived(payload))
            case .close(let peer):
                if case .closing(let sent?, _) = state {
                    state = .closing(sent: sent, received: peer)
                    actions.append(.closeReceived(peer))
                } else {
                    // Echo the code (§5.5.1); a close without a code is answered without one. The
                    // frame is reported first, so that a write failing on a server already gone
                    // still ends with the code it sent.
                    let echo = WebSocketCloseFrame(code: peer.code)
                    state = .closing(sent: echo, received: peer)
                    actions += [.closeReceived(peer), .send(encode(.close, echo.payload))]
                }
                // Anything after the close frame is ignored.
                return actions
            case .violation(let violation):
                return actions + fail(violation)
            }
        }
        if let failure = output.failure { return actions + fail(failure) }
        return actions
    }

    /// Fails the connection (§7.1.7): a close frame with the violation's code if none was sent yet.
    private mutating func fail(_ violation: WebSocketProtocolViolation) -> [Action] {
        var actions: [Action] = []
        if case .closing(.some, _) = state {
        } else {
            actions.append(.send(encode(.close, WebSocketCloseFrame(code: violation.closeCode).payload)))
        }
        state = .closed(.failed(violation))
        return actions + [.fail(violation), .closeConnection]
    }

    private func encode(_ opcode: WebSocketOpcode, _ payload: Data) -> Data {
        WebSocketFrameEncoder.encode(opcode: opcode, payload: payload, key: keys.nextKey())
    }
}
