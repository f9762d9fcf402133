import Foundation

/// The answer of a server that refused a WebSocket opening handshake, as far as it was read.
public struct WebSocketHandshakeResponse: Sendable {
    /// The status code (101 when the 101 answer itself was wrong).
    public let statusCode: Int
    /// The response headers.
    public let headers: HTTPHeaders
    /// The start of the response body (at most 64 KiB): often the server's explanation.
    public let body: Data
}

/// What ``CourierError/webSocketHandshakeResponse`` reads out of an error.
struct WebSocketHandshakeRejection: Error, Sendable, CustomStringConvertible {
    let response: WebSocketHandshakeResponse

    /// One line, as an error's underlying error is printed (the head itself is in ``response``).
    var description: String {
        let fields = response.headers.count
        return "the server's answer: status \(response.statusCode), \(fields) header field\(fields == 1 ? "" : "s"), "
            + "\(response.body.count) bytes of body"
    }
}

/// What ``CourierError/webSocketCloseStatus`` reads out of an error.
struct WebSocketCloseError: Error, Sendable {
    let status: WebSocketCloseStatus
}

extension CourierError {
    /// For `.webSocketClosed` and `.webSocketProtocolViolation`: the code and reason the connection
    /// was closed with (the server's, or the one Courier failed it with).
    ///
    /// ```swift
    /// } catch let error as CourierError where error.kind == .webSocketClosed {
    ///     print(error.webSocketCloseStatus?.code == WebSocketCloseCode(4001))
    /// }
    /// ```
    public var webSocketCloseStatus: WebSocketCloseStatus? { (underlyingError as? WebSocketCloseError)?.status }

    /// For `.webSocketHandshakeFailed`: the server's answer (status, headers, the start of the body).
    public var webSocketHandshakeResponse: WebSocketHandshakeResponse? {
        (underlyingError as? WebSocketHandshakeRejection)?.response
    }

    /// The error for a failed opening handshake.
    init(webSocketHandshake failure: WebSocketHandshakeFailure, response: WebSocketHandshakeResponse?, url: URL) {
        switch failure {
        case .invalidURL:
            self.init(.invalidURL, "The WebSocket URL is not valid: \(failure).", url: url)
        case .invalidSubprotocol, .invalidHeader:
            self.init(.invalidRequest, "The WebSocket handshake cannot be sent: \(failure).", url: url)
        case .malformedResponse:
            self.init(.invalidResponse, "The WebSocket handshake failed: \(failure).", url: url)
        case .responseHeadTooLarge:
            self.init(.responseTooLarge, "The WebSocket handshake failed: \(failure).", url: url)
        default:
            var message = "The WebSocket handshake failed: \(failure)"
            if let response, (300..<400).contains(response.statusCode) {
                let location = response.headers["Location"].map { " to \($0)" } ?? ""
                message += "; it redirects\(location), which a WebSocket handshake does not follow"
            }
            self.init(
                .webSocketHandshakeFailed, message + ".", responseCode: response?.statusCode,
                underlyingError: response.map(WebSocketHandshakeRejection.init), url: url)
        }
    }

    /// The error for a connection closed by the server with an abnormal code.
    init(webSocketClosedWith status: WebSocketCloseStatus, url: URL) {
        self.init(
            .webSocketClosed, "The server closed the WebSocket with code \(status).",
            underlyingError: WebSocketCloseError(status: status), url: url)
    }

    /// The error for a server that broke the protocol.
    init(webSocketViolation violation: WebSocketProtocolViolation, url: URL) {
        let status = WebSocketCloseStatus(code: violation.closeCode, reason: "")
        self.init(
            .webSocketProtocolViolation,
            "The server broke the WebSocket protocol: \(violation); Courier closed the "
                + "connection with code \(violation.closeCode.rawValue).", underlyingError: WebSocketCloseError(status: status), url: url)
    }
}
