/// How a WebSocket connection ended.
enum WebSocketCloseOutcome: Sendable, Hashable {
    /// Both close frames were exchanged, then the connection closed; the peer's code and reason.
    case clean(WebSocketCloseFrame)
    /// The connection ended without a complete close handshake (reported as 1006, §7.1.5).
    case abnormal
    /// The server broke the protocol and the connection was failed with the violation's code.
    case failed(WebSocketProtocolViolation)

    /// The close code to report (§7.1.5): the peer's, 1006 when there was none, or the violation's.
    var code: WebSocketCloseCode {
        switch self {
        case .clean(let frame): frame.code
        case .abnormal: .abnormalClosure
        case .failed(let violation): violation.closeCode
        }
    }
}
