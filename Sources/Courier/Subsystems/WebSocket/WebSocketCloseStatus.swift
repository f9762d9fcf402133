/// How a WebSocket connection was closed: the code and reason of the close frame that ended it.
///
/// ```swift
/// try await socket.close(code: .normalClosure)
/// print(socket.closeStatus?.code == .normalClosure)   // true once the server answered
/// ```
public struct WebSocketCloseStatus: Sendable, Hashable, CustomStringConvertible {
    /// The close code: the server's, when it closed first or answered ours; 1006
    /// (``WebSocketCloseCode/abnormalClosure``) when the connection ended without a close frame.
    public let code: WebSocketCloseCode
    /// The reason text that came with the code (often empty).
    public let reason: String
    /// Whether the server sent its close frame first.
    public let initiatedByServer: Bool

    /// A status with `code` and `reason`.
    public init(code: WebSocketCloseCode, reason: String = "", initiatedByServer: Bool = false) {
        self.code = code
        self.reason = reason
        self.initiatedByServer = initiatedByServer
    }

    /// "1000", or "4001 (bye)".
    public var description: String { reason.isEmpty ? "\(code)" : "\(code) (\(reason))" }

    /// Whether the code says all went well: 1000, 1001 or no code at all (1005).
    var isNormal: Bool { [.normalClosure, .goingAway, .noStatusReceived].contains(code) }
}
