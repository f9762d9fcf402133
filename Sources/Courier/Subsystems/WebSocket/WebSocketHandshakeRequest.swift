import CourierWebSocketWire
import Foundation

/// The client's opening handshake (RFC 6455 §4.1): the HTTP/1.1 Upgrade request head to write,
/// and the check of the server's answer against it.
///
/// ```swift
/// let request = try WebSocketHandshakeRequest(url: url, protocols: ["chat"])
/// write(request.head)
/// // ... read the response head with WebSocketResponseHeadReader, then:
/// let accepted = try request.verify(head)   // accepted.subprotocol == "chat" or nil
/// ```
struct WebSocketHandshakeRequest: Sendable {
    /// The protocol version this client speaks (§4.1, item 9).
    static let version = "13"
    /// Headers the handshake sets itself, which extra headers may not replace (lowercase).
    static let reservedHeaderNames: Set<String> = [
        "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-accept",
        "sec-websocket-protocol", "sec-websocket-extensions", "content-length", "transfer-encoding",
    ]

    /// The URL asked for.
    let url: URL
    /// `Sec-WebSocket-Key`: 16 random bytes in base64 (§4.1, item 7).
    let key: String
    /// The subprotocols offered, in order of preference.
    let protocols: [String]
    /// The extensions offered in `Sec-WebSocket-Extensions`, if any (only permessage-deflate).
    let extensionOffer: String?
    /// Extra headers (authorization, cookies, origin), already checked.
    let headers: HTTPHeaders
    /// The request head, ready to write: request line, headers and the blank line.
    let head: Data

    /// Builds the request for `url` (ws, wss, http or https), offering `protocols`, and
    /// permessage-deflate when `offersCompression` (offer it only when ``WebSocketInflater/isAvailable``).
    /// - Parameter nonce: 16 bytes for the key; fresh random bytes unless a test passes its own.
    init(
        url: URL, protocols: [String] = [], headers: HTTPHeaders = [], offersCompression: Bool = false,
        nonce: [UInt8]? = nil
    ) throws(WebSocketHandshakeFailure) {
        let extensionOffer = offersCompression ? WebSocketDeflateParameters.offer : nil
        guard let scheme = url.scheme?.lowercased(), ["ws", "wss", "http", "https"].contains(scheme),
            let rawHost = url.host, !rawHost.isEmpty
        else {
            throw WebSocketHandshakeFailure.invalidURL(url.absoluteString)
        }
        var seen: Set<String> = []
        for name in protocols {
            guard WireSyntax.isToken(name), seen.insert(name).inserted else { throw WebSocketHandshakeFailure.invalidSubprotocol(name) }
        }
        for header in headers {
            guard WireSyntax.isToken(header.name), WireSyntax.isFieldValue(header.value),
                !Self.reservedHeaderNames.contains(header.name.lowercased())
            else {
                throw WebSocketHandshakeFailure.invalidHeader(header.name)
            }
        }
        let nonce = nonce ?? (0..<16).map { _ in UInt8.random(in: .min ... .max) }
        self.url = url
        self.key = Data(nonce).base64EncodedString()
        self.protocols = protocols
        self.extensionOffer = extensionOffer
        self.headers = headers

        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var target = components?.percentEncodedPath ?? ""
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        // An IPv6 literal goes in brackets (RFC 9110 §7.2); the port only when it is not the default.
        var host = rawHost.hasPrefix("[") ? rawHost : rawHost.contains(":") ? "[\(rawHost)]" : rawHost
        let secure = scheme == "wss" || scheme == "https"
        if let port = url.port, port != (secure ? 443 : 80) { host += ":\(port)" }

        var text = "GET \(target) HTTP/1.1\r\nHost: \(host)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: \(Self.version)\r\n"
        if !protocols.isEmpty { text += "Sec-WebSocket-Protocol: \(protocols.joined(separator: ", "))\r\n" }
        if let extensionOffer { text += "Sec-WebSocket-Extensions: \(extensionOffer)\r\n" }
        for header in headers { text += "\(header.name): \(header.value)\r\n" }
        text += "\r\n"
        head = Data(text.utf8)
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with (§4.2.2, item 5.4):
    /// base64(SHA-1(key + the protocol's GUID)).
    static func accept(forKey key: String) -> String {
        WebSocketWire.acceptValue(forKey: key)
    }

    /// What the server agreed to.
    struct Accepted: Sendable, Hashable {
        /// The subprotocol the server chose, one of those offered, or nil.
        var subprotocol: String?
        /// The permessage-deflate parameters, when it was offered and the server agreed.
        var compression: WebSocketDeflateParameters?
    }

    /// Checks the server's response head (§4.1, the client's checks 1–6).
    func verify(_ response: ResponseHead) throws(WebSocketHandshakeFailure) -> Accepted {
        guard response.statusCode == 101 else { throw WebSocketHandshakeFailure.unexpectedStatus(response.statusCode) }
        guard let upgrade = response.headers["Upgrade"],
            upgrade.trimmingCharacters(in: .whitespaces).lowercased() == "websocket"
        else {
            throw WebSocketHandshakeFailure.missingUpgrade
        }
        let connection = response.headers["Connection"] ?? ""
        guard connection.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "upgrade" }) else {
            throw WebSocketHandshakeFailure.missingConnectionUpgrade
        }
        let accept = response.headers["Sec-WebSocket-Accept"]
        guard accept?.trimmingCharacters(in: .whitespaces) == Self.accept(forKey: key) else {
            throw WebSocketHandshakeFailure.invalidAccept(accept)
        }
        var accepted = Accepted()
        if let chosen = response.headers["Sec-WebSocket-Protocol"]?.trimmingCharacters(in: .whitespaces) {
            // Repeated fields arrive joined with ", ", which no offered token contains.
            guard protocols.contains(chosen) else { throw WebSocketHandshakeFailure.unexpectedSubprotocol(chosen) }
            accepted.subprotocol = chosen
        }
        if let extensions = response.headers["Sec-WebSocket-Extensions"] {
            guard extensionOffer != nil else { throw WebSocketHandshakeFailure.unexpectedExtension(extensions) }
            accepted.compression = try WebSocketDeflateParameters(response: extensions)
        }
        return accepted
    }
}
