import CourierWebSocketWire
import Foundation

/// The server side of the opening handshake (RFC 6455 §4.2): checks the client's request as a
/// strict server would and builds the `101` answer.
enum WebSocketHandshake {
    /// What an acceptable handshake request carries.
    struct Offer {
        var key: String
        var protocols: [String]
    }

    /// Checks `request` (§4.2.1); the error carries the status to answer with.
    static func validate(_ request: RecordedRequest) -> Result<Offer, RequestParseError> {
        let headers = request.headers
        guard request.method == "GET" else {
            return .failure(.init(status: 400, message: "a WebSocket handshake must be a GET, not \(request.method) (RFC 6455 §4.1)"))
        }
        guard request.version == "HTTP/1.1" else {
            return .failure(.init(status: 400, message: "a WebSocket handshake must be HTTP/1.1, not \(request.version) (RFC 6455 §4.1)"))
        }
        guard headers.contains("Host") else {
            return .failure(.init(status: 400, message: "WebSocket handshake without Host (RFC 6455 §4.1)"))
        }
        guard listValues(headers, "Upgrade").contains(where: { $0.lowercased() == "websocket" }) else {
            return .failure(.init(status: 400, message: "WebSocket handshake without Upgrade: websocket (RFC 6455 §4.1)"))
        }
        guard listValues(headers, "Connection").contains(where: { $0.lowercased() == "upgrade" }) else {
            return .failure(.init(status: 400, message: "WebSocket handshake without Connection: Upgrade (RFC 6455 §4.1)"))
        }
        guard headers.values(for: "Sec-WebSocket-Version") == ["13"] else {
            return .failure(.init(status: 426, message: "WebSocket handshake without Sec-WebSocket-Version: 13 (RFC 6455 §4.4)"))
        }
        let keys = headers.values(for: "Sec-WebSocket-Key")
        guard keys.count == 1, let key = keys.first, Data(base64Encoded: key)?.count == 16 else {
            return .failure(.init(status: 400, message: "Sec-WebSocket-Key is not one base64-encoded 16-byte value (RFC 6455 §4.1)"))
        }
        return .success(Offer(key: key, protocols: listValues(headers, "Sec-WebSocket-Protocol")))
    }

    /// The `101 Switching Protocols` answer for `offer`, carrying `response`'s behaviour (gate,
    /// delays, effects) and the script's extra headers.
    static func acceptance(_ offer: Offer, script: WebSocketScript, subprotocol: String?, behaviorOf response: MockResponse) -> MockResponse {
        var headers: HeaderFields = [
            "Upgrade": "websocket",
            "Connection": "Upgrade",
            "Sec-WebSocket-Accept": script.acceptValueOverride ?? WebSocketWire.acceptValue(forKey: offer.key),
        ]
        if let subprotocol { headers.add("Sec-WebSocket-Protocol", subprotocol) }
        for (name, value) in response.headers { headers.add(name, value) }
        for (name, value) in script.extraHeaders { headers.add(name, value) }
        var answer = MockResponse(status: 101, headers: headers)
        answer.reason = response.reason
        answer.behavior = response.behavior
        answer.behavior.webSocket = nil
        // No Content-Length and no Connection: close on a 101.
        answer.behavior.framing = .contentLength
        answer.behavior.closesConnection = false
        return answer
    }

    /// The comma-separated elements of every `name` field, trimmed, empty ones dropped.
    static func listValues(_ headers: HeaderFields, _ name: String) -> [String] {
        headers.values(for: name).flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }
}
