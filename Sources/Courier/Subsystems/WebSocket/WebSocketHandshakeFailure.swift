/// Why a WebSocket opening handshake could not be made or was not accepted (RFC 6455 §4.1).
///
/// The session maps it to a `CourierError`: ``unexpectedStatus(_:)`` to one carrying the status
/// (and the body, which the transport reads), the request-side cases to `invalidRequest`, the
/// response-side cases to `invalidResponse`.
enum WebSocketHandshakeFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The URL is not ws, wss, http or https, or has no host.
    case invalidURL(String)
    /// A subprotocol to offer is not an RFC 9110 token, or is offered twice.
    case invalidSubprotocol(String)
    /// An extra header's name is not a token, its value has CR, LF or NUL, or it would replace a
    /// header the handshake sets itself (Host, Upgrade, Connection, Sec-WebSocket-*).
    case invalidHeader(String)
    /// The server answered with another status than 101 (a redirect included, which a WebSocket
    /// handshake does not follow); the head is there for the caller to report.
    case unexpectedStatus(Int)
    /// The response head is not valid HTTP/1.1.
    case malformedResponse(String)
    /// The response head is longer than the limit, in bytes.
    case responseHeadTooLarge(limit: Int)
    /// `Upgrade` is missing or not `websocket`.
    case missingUpgrade
    /// `Connection` is missing or does not list `upgrade`.
    case missingConnectionUpgrade
    /// `Sec-WebSocket-Accept` is missing or does not match the key sent.
    case invalidAccept(String?)
    /// The server chose a subprotocol that was not offered (or several).
    case unexpectedSubprotocol(String)
    /// The server named an extension that was not offered, or answered the offer with parameters
    /// that are not valid.
    case unexpectedExtension(String)

    var description: String {
        switch self {
        case .invalidURL(let url): "\(url) is not a ws, wss, http or https URL with a host"
        case .invalidSubprotocol(let name): "the subprotocol \(WireSyntax.quoted(name)) is not a token or is offered twice"
        case .invalidHeader(let name): "the header \(WireSyntax.quoted(name)) cannot be sent with a WebSocket handshake"
        case .unexpectedStatus(let status): "the server answered the WebSocket handshake with status \(status) instead of 101"
        case .malformedResponse(let why): "the WebSocket handshake response is not valid HTTP: \(why)"
        case .responseHeadTooLarge(let limit): "the WebSocket handshake response head is longer than \(limit) bytes"
        case .missingUpgrade: "the WebSocket handshake response has no \"Upgrade: websocket\""
        case .missingConnectionUpgrade: "the WebSocket handshake response has no \"Connection: upgrade\""
        case .invalidAccept(let value):
            "the WebSocket handshake response's Sec-WebSocket-Accept \(value.map(WireSyntax.quoted) ?? "is missing") does not match the key sent"
        case .unexpectedSubprotocol(let name): "the server chose the subprotocol \(WireSyntax.quoted(name)), which was not offered"
        case .unexpectedExtension(let value): "the server answered with the extension \(WireSyntax.quoted(value)), which was not offered as such"
        }
    }
}
