import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's WebSocket values and `URLSessionWebSocketTask`'s, both ways, without I/O: messages,
/// close codes and reasons, the handshake request, and how a task's end becomes a
/// ``WebSocketLifecycle/Event``.
enum WebSocketTaskTranslation {
    /// Whether the tasks are FoundationNetworking's (swift-corelibs-foundation on libcurl) rather than Apple's.
    #if canImport(FoundationNetworking)
    static let isFoundationNetworking = true
    #else
    static let isFoundationNetworking = false
    #endif

    // MARK: Messages

    /// A task's message as Courier's.
    static func message(_ message: URLSessionWebSocketTask.Message) -> WebSocketMessage {
        // Not a switch: the enum is resilient on Apple platforms and not in FoundationNetworking,
        // so `@unknown default` would be required on one and warned about on the other.
        if case .string(let text) = message { return .text(text) }
        if case .data(let data) = message { return .binary(data) }
        return .binary(Data())
    }

    /// Courier's message as a task's.
    static func taskMessage(_ message: WebSocketMessage) -> URLSessionWebSocketTask.Message {
        switch message {
        case .text(let text): .string(text)
        case .binary(let data): .data(data)
        }
    }

    // MARK: Close codes and reasons

    /// The task's close code for `code`. Apple's `CloseCode` takes any number; FoundationNetworking's
    /// only the codes it names, so an application's own code (3000–4999) is sent there as 1000.
    static func taskCloseCode(_ code: WebSocketCloseCode) -> URLSessionWebSocketTask.CloseCode {
        URLSessionWebSocketTask.CloseCode(rawValue: Int(code.rawValue)) ?? .normalClosure
    }

    /// The reason to send: nil when empty.
    static func taskReason(_ reason: String) -> Data? {
        reason.isEmpty ? nil : Data(reason.utf8)
    }

    /// The close frame a task reports (its `closeCode`'s raw value and `closeReason`); nil while
    /// it has none (0, `.invalid`). Bytes of a reason that are not UTF-8 are replaced.
    static func closeFrame(code: Int, reason: Data?) -> WebSocketCloseFrame? {
        guard code != URLSessionWebSocketTask.CloseCode.invalid.rawValue, let raw = UInt16(exactly: code) else { return nil }
        return WebSocketCloseFrame(code: WebSocketCloseCode(raw), reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    // MARK: The handshake

    /// The request a task opens with: `handshake`'s ws or wss URL, its extra headers (the
    /// session's, the caller's, the adapter's), and the subprotocols in `Sec-WebSocket-Protocol`.
    /// The task adds the rest (Upgrade, the key, the version) itself.
    static func taskRequest(for handshake: WebSocketHandshakeRequest, timeout: TimeInterval) -> URLRequest {
        var request = URLRequest(url: Session.webSocketEquivalent(of: handshake.url))
        for header in handshake.headers { request.addValue(header.value, forHTTPHeaderField: header.name) }
        if !handshake.protocols.isEmpty {
            request.setValue(handshake.protocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        request.timeoutInterval = timeout
        return request
    }

    // MARK: The end

    /// What the socket knows when a task ends (or its receive loop failed for good).
    struct End {
        /// The task's error; nil when it completed normally.
        var error: (any Error)?
        /// The status and headers of the handshake's answer, when the task has one.
        var handshakeAnswer: (statusCode: Int, headers: HTTPHeaders)?
        /// The server's close frame, when one arrived.
        var serverClose: WebSocketCloseFrame?
        /// Whether the connection opened.
        var opened: Bool
        /// The close frame the application sent, if it did.
        var sentClose: WebSocketCloseFrame?
        /// ``WebSocketConfiguration/maximumMessageSize``, for the error when a message exceeded it.
        var maximumMessageSize: Int
        /// Whether the task was FoundationNetworking's.
        var foundationNetworking = WebSocketTaskTranslation.isFoundationNetworking
    }

    /// The lifecycle event for a task's end.
    static func event(for end: End, url: URL) -> WebSocketLifecycle.Event {
        if let frame = end.serverClose { return .protocolEnded(.clean(frame)) }
        let urlError = end.error as? URLError
        let cancelled = urlError?.code == .cancelled || end.error is CancellationError
        // The socket's own cancel ends it before the task reports: a task cancelled behind its
        // back was cancelled by the transport's shutdown.
        let shutDown = CourierError(.sessionInvalidated, "The session's transport shut down.", url: url)
        guard end.opened else {
            if let answer = end.handshakeAnswer, answer.statusCode != 101 {
                let response = WebSocketHandshakeResponse(statusCode: answer.statusCode, headers: answer.headers, body: Data())
                return .failed(CourierError(webSocketHandshake: .unexpectedStatus(answer.statusCode), response: response, url: url), nil)
            }
            if end.foundationNetworking, urlError?.code == .unsupportedURL {
                let detail = urlError.flatMap { $0.userInfo[NSLocalizedDescriptionKey] as? String } ?? "\(urlError.map { "\($0)" } ?? "")"
                return .failed(
                    CourierError(
                        .invalidConfiguration,
                        "Foundation's URLSessionWebSocketTask cannot open WebSockets on this "
                            + "platform (\(detail)); use the curl transport (SessionConfiguration.transport = .curl, "
                            + "the default on Linux).", underlyingError: end.error, url: url), nil)
            }
            if cancelled { return .failed(shutDown, nil) }
            guard let error = end.error else {
                return .failed(CourierError(.invalidResponse, "The WebSocket task ended before its handshake completed.", url: url), nil)
            }
            return .failed(CourierError(wrapping: error, url: url), nil)
        }
        if let sent = end.sentClose, end.error == nil || cancelled {
            // The application's close went out and the task ended without reporting the server's
            // answer: the close handshake is over as far as URLSession lets anyone see.
            return .protocolEnded(.clean(sent))
        }
        guard let error = end.error else { return .protocolEnded(.abnormal) }
        let abnormal = WebSocketCloseStatus(code: .abnormalClosure)
        if cancelled { return .failed(shutDown, abnormal) }
        if let posix = error as? POSIXError, posix.code == .EMSGSIZE {
            let limit = end.maximumMessageSize
            return .protocolEnded(.failed(WebSocketProtocolViolation(.messageTooLarge(size: UInt64(limit) + 1, limit: limit))))
        }
        return .failed(CourierError(wrapping: error, url: url), abnormal)
    }
}
