/// A WebSocket close status code (RFC 6455 §7.4).
///
/// A plain number so that registered codes (1000–2999), library codes (3000–3999) and private
/// codes (4000–4999) all fit; the named constants are the ones RFC 6455 and its registry define.
///
/// ```swift
/// try await socket.close(code: .goingAway)
/// try await socket.close(code: WebSocketCloseCode(4000), reason: "logged out")   // an application's own code
/// ```
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code's number.
    public var rawValue: UInt16
    /// The code `rawValue`.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// The code `rawValue`.
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection has been fulfilled.
    public static let normalClosure = Self(1000)
    /// 1001: the endpoint is going away (server shutdown, page left, task cancelled).
    public static let goingAway = Self(1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = Self(1002)
    /// 1003: a data type the endpoint cannot accept.
    public static let unsupportedData = Self(1003)
    /// 1005: no code was present in the close frame; never sent on the wire.
    public static let noStatusReceived = Self(1005)
    /// 1006: the connection closed without a close frame; never sent on the wire.
    public static let abnormalClosure = Self(1006)
    /// 1007: a text message was not valid UTF-8 (or data was inconsistent with its type).
    public static let invalidFramePayloadData = Self(1007)
    /// 1008: a message violated the endpoint's policy.
    public static let policyViolation = Self(1008)
    /// 1009: a message was too big to process.
    public static let messageTooBig = Self(1009)
    /// 1010: the server did not negotiate an extension the client requires.
    public static let mandatoryExtension = Self(1010)
    /// 1011: the server hit an unexpected condition.
    public static let internalServerError = Self(1011)
    /// 1015: the TLS handshake failed; never sent on the wire.
    public static let tlsHandshakeFailure = Self(1015)

    /// Whether the code may appear in a close frame (§7.4.1, §7.4.2 and the IANA registry):
    /// 1000–1003, 1007–1011 (1012–1014 registered since), and 3000–4999. 1004 is reserved, 1005,
    /// 1006 and 1015 are only for reporting, everything else below 3000 is unassigned.
    var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The number, as text.
    public var description: String { String(rawValue) }
}
