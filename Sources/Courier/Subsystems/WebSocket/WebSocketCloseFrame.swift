import Foundation

/// The code and reason of a close frame (RFC 6455 §5.5.1).
struct WebSocketCloseFrame: Sendable, Hashable {
    /// The status code; ``WebSocketCloseCode/noStatusReceived`` (1005) when the frame had no body.
    var code: WebSocketCloseCode
    /// The reason, at most 123 bytes of UTF-8; empty when none was given.
    var reason: String

    init(code: WebSocketCloseCode, reason: String = "") {
        self.code = code
        self.reason = reason
    }

    /// The largest reason in bytes: a control frame carries at most 125, two of which are the code.
    static let maximumReasonByteCount = 123

    /// Reads a received close frame's payload: empty, or a code valid on the wire followed by a
    /// UTF-8 reason (§5.5.1, §7.4).
    init(payload: Data) throws(WebSocketProtocolViolation) {
        guard !payload.isEmpty else {
            self.init(code: .noStatusReceived)
            return
        }
        guard payload.count >= 2 else { throw WebSocketProtocolViolation(.invalidClosePayload) }
        let start = payload.startIndex
        let code = WebSocketCloseCode(UInt16(payload[start]) << 8 | UInt16(payload[start + 1]))
        guard code.isValidOnWire else { throw WebSocketProtocolViolation(.invalidCloseCode(code.rawValue)) }
        let reasonBytes = payload[(start + 2)...]
        var validator = WebSocketUTF8Validator()
        guard validator.validate(reasonBytes), validator.isComplete else { throw WebSocketProtocolViolation(.invalidUTF8) }
        self.init(code: code, reason: String(decoding: reasonBytes, as: UTF8.self))
    }

    /// The payload to send: empty for 1005 (no code), else the code and the reason.
    var payload: Data {
        guard code != .noStatusReceived else { return Data() }
        var data = Data([UInt8(truncatingIfNeeded: code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)])
        data.append(contentsOf: reason.utf8)
        return data
    }
}
