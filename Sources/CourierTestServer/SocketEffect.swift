/// Something done to the connection's socket instead of (the rest of) a normal response.
public enum SocketEffect: Sendable, Hashable, CustomStringConvertible {
    /// Orderly close: the client reads end of stream (FIN).
    case close
    /// Abortive close: the client sees a connection reset (RST, via `SO_LINGER` 0).
    case reset
    /// Keep the socket open and send nothing more until the client closes or the server shuts
    /// down; the client sees a read timeout.
    case stall
    /// Shut down the server's sending side (FIN) but keep reading until the client closes.
    case shutdownOutput

    /// The effect's name.
    public var description: String {
        switch self {
        case .close: return "close"
        case .reset: return "reset"
        case .stall: return "stall"
        case .shutdownOutput: return "shutdownOutput"
        }
    }
}

/// Where in an exchange a ``SocketEffect`` is applied.
///
/// The exchange runs: gate, headers delay, ``afterRequest``, head, ``responseStart``, body delay,
/// body (``responseBody(afterBytes:)``), ``responseEnd``.
public enum EffectPoint: Sendable, Hashable, CustomStringConvertible {
    /// After the request has been read, before any byte of the response.
    case afterRequest
    /// After the response head, before any body byte.
    case responseStart
    /// After this many body bytes (after content coding, not counting chunk framing); the rest
    /// of the body is never sent. Never reached if the body is shorter.
    case responseBody(afterBytes: Int64)
    /// After the complete response.
    case responseEnd

    /// The point's name.
    public var description: String {
        switch self {
        case .afterRequest: return "afterRequest"
        case .responseStart: return "responseStart"
        case .responseBody(let bytes): return "responseBody(afterBytes: \(bytes))"
        case .responseEnd: return "responseEnd"
        }
    }
}

/// The timing, framing and fault settings of a response, kept apart from its status, headers
/// and body so a ``Resource`` can carry them too.
struct ResponseBehavior: Sendable, Equatable {
    enum Framing: Sendable, Equatable {
        case contentLength
        case chunked(size: Int)
        case closeDelimited
    }

    struct Throttle: Sendable, Equatable {
        var bytes: Int
        var period: Duration
    }

    struct BodyPause: Sendable, Equatable {
        var afterBytes: Int64
        var gate: Gate
    }

    /// Wait `delay` before sending the body byte at `offset` (an event written after a pause).
    struct Pace: Sendable, Equatable {
        var offset: Int64
        var delay: Duration
    }

    struct ScheduledEffect: Sendable, Equatable {
        var effect: SocketEffect
        var point: EffectPoint
    }

    var framing: Framing = .contentLength
    /// Trailer field lines (`Name: value`) sent after a chunked body's last chunk.
    var trailers: [String] = []
    var omitsContentLength = false
    var coding: ContentCoding = .identity
    var headersDelay: Duration?
    var bodyDelay: Duration?
    var throttle: Throttle?
    var gate: Gate?
    /// Hold the body after this many bytes until the gate opens (the connection stays open).
    var bodyPause: BodyPause?
    var effects: [ScheduledEffect] = []
    /// Pauses at body offsets, in increasing order.
    var paces: [Pace] = []
    var closesConnection = false
    var sendsContinue = true
    /// Set by ``MockResponse/webSocket(_:)``: accept the handshake and run this script.
    var webSocket: WebSocketScript?

    /// The first effect scheduled at `point` (body points match any byte count).
    func effect(at point: EffectPoint) -> SocketEffect? {
        effects.first { $0.point == point }?.effect
    }

    /// The earliest body effect: its byte count and effect.
    var bodyEffect: (afterBytes: Int64, effect: SocketEffect)? {
        var best: (afterBytes: Int64, effect: SocketEffect)?
        for scheduled in effects {
            if case .responseBody(let bytes) = scheduled.point, bytes < (best?.afterBytes ?? .max) {
                best = (max(0, bytes), scheduled.effect)
            }
        }
        return best
    }
}
