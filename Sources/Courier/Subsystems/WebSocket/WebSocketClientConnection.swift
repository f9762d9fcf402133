import Foundation

/// The client side of one WebSocket connection from the first byte written to the last read,
/// without I/O: the opening handshake (``WebSocketHandshakeRequest``, ``WebSocketResponseHeadReader``),
/// then ``WebSocketStateMachine`` with what the handshake agreed (permessage-deflate), fed the bytes
/// that came after the response head.
///
/// ```swift
/// var connection = WebSocketClientConnection(request: try WebSocketHandshakeRequest(url: url))
/// write(connection.request.head)
/// for action in connection.handle(.bytesReceived(read())) { ... }   // .opened, then .protocol(...)
/// ```
struct WebSocketClientConnection: Sendable {
    /// What the transport must do, in order.
    enum Action: Sendable {
        /// The server accepted the handshake; messages can be sent now.
        case opened(WebSocketHandshakeRequest.Accepted)
        /// The handshake failed. With ``WebSocketHandshakeFailure/unexpectedStatus(_:)`` the head
        /// is there, and `remainder` is the start of its body (for the error the caller reports);
        /// the connection must be closed.
        case handshakeFailed(WebSocketHandshakeFailure, head: ResponseHead?, remainder: Data)
        /// What the protocol asks for once open.
        case `protocol`(WebSocketStateMachine.Action)
    }

    /// The request to write first.
    let request: WebSocketHandshakeRequest
    let maximumMessageSize: Int
    private let keys: WebSocketMaskingKeySource
    // Stored apart rather than as one enum's payloads: mutated in place, their buffers stay
    // uniquely referenced, where a copy taken out of an enum would copy a partial frame per read.
    /// Reads the response head until the handshake is decided.
    private var reader: WebSocketResponseHeadReader?
    /// The protocol, once the server accepted.
    private var machine: WebSocketStateMachine?

    init(
        request: WebSocketHandshakeRequest, maximumMessageSize: Int = WebSocketFrameParser.defaultMaximumMessageSize,
        maximumHeadSize: Int = WebSocketResponseHeadReader.defaultMaximumSize, keys: WebSocketMaskingKeySource = .random
    ) {
        self.request = request
        self.maximumMessageSize = maximumMessageSize
        self.keys = keys
        reader = WebSocketResponseHeadReader(url: request.url, maximumSize: maximumHeadSize)
    }

    /// The protocol's state; ``WebSocketStateMachine/State/connecting`` during the handshake, and
    /// closed with ``WebSocketCloseOutcome/abnormal`` once it failed.
    var state: WebSocketStateMachine.State {
        if let machine { return machine.state }
        return reader == nil ? .closed(.abnormal) : .connecting
    }

    /// Applies `event`; ``WebSocketStateMachine/Event/handshakeCompleted`` is this type's to
    /// decide and is ignored when given.
    mutating func handle(_ event: WebSocketStateMachine.Event) -> [Action] {
        if case .handshakeCompleted = event { return [] }
        if machine != nil {
            return machine?.handle(event).map(Action.protocol) ?? []
        }
        guard reader != nil else {
            // The handshake failed: nothing more happens.
            switch event {
            case .send, .sendPing, .sendPong: return [.protocol(.refused(.notOpen))]
            default: return []
            }
        }
        switch event {
        case .bytesReceived(let bytes):
            let read = Result { () throws(WebSocketHandshakeFailure) -> WebSocketResponseHeadReader.Result? in
                guard var current = reader else { return nil }
                reader = nil
                defer { reader = current }
                return try current.read(bytes)
            }
            switch read {
            case .failure(let failure):
                reader = nil
                return [.handshakeFailed(failure, head: nil, remainder: Data())]
            case .success(nil):
                return []
            case .success(let result?):
                reader = nil
                let accepted: WebSocketHandshakeRequest.Accepted
                do throws(WebSocketHandshakeFailure) {
                    accepted = try request.verify(result.head)
                } catch {
                    return [.handshakeFailed(error, head: result.head, remainder: result.remainder)]
                }
                var opened = WebSocketStateMachine(maximumMessageSize: maximumMessageSize, keys: keys, compression: accepted.compression)
                _ = opened.handle(.handshakeCompleted)
                machine = opened
                let actions = result.remainder.isEmpty ? [] : machine?.handle(.bytesReceived(result.remainder)) ?? []
                return [.opened(accepted)] + actions.map(Action.protocol)
            }
        case .connectionClosed:
            reader = nil
            return [.handshakeFailed(.malformedResponse("the connection closed before the response head ended"), head: nil, remainder: Data())]
        case .close:
            reader = nil
            return [.protocol(.closeConnection), .protocol(.closed(.abnormal))]
        case .send, .sendPing, .sendPong:
            return [.protocol(.refused(.notOpen))]
        case .handshakeCompleted:
            return []
        }
    }
}
