import Foundation

/// Which HTTP version a request speaks: set it for a whole session with
/// ``SessionConfiguration/httpVersion`` or for one request with ``Request/httpVersion(_:)``.
///
/// The version a response really came over is in ``TransferMetrics/httpVersion``.
public enum HTTPVersion: Sendable, Hashable, CustomStringConvertible {
    /// HTTP/2 over TLS when the server offers it (ALPN), HTTP/1.1 otherwise and on cleartext
    /// connections. The default.
    case automatic
    /// HTTP/1.1 only, also over TLS.
    case http1_1
    /// HTTP/2 over TLS, and nothing else: a server that answers over HTTP/1.1 fails the request with
    /// ``CourierError/Kind-swift.struct/httpVersionUnavailable`` (its answer is discarded; the
    /// request itself may have reached it over HTTP/1.1). Cleartext `http://` URLs fail the same way
    /// before anything is sent: use ``http2PriorKnowledge`` for cleartext HTTP/2.
    case http2
    /// HTTP/2 from the first byte, without negotiation ("h2c with prior knowledge"), for cleartext
    /// servers known to speak it. Over TLS it behaves as ``http2``.
    case http2PriorKnowledge
    /// HTTP/3 over QUIC (UDP) to the URL's host and port, and nothing else: no fallback to TCP.
    /// `https://` URLs only. It needs the curl transport with a libcurl built with HTTP/3
    /// (``Libcurl/supportsHTTP3``); elsewhere, and for `http://` URLs, the request fails with
    /// ``CourierError/Kind-swift.struct/httpVersionUnavailable`` before anything is sent. The
    /// ``TLSConfiguration`` applies as over TCP (QUIC is TLS 1.3). To move to HTTP/3 only where
    /// a server offers it, see ``SessionConfiguration/usesHTTP3WhenAdvertised``.
    case http3

    /// `"automatic"`, `"HTTP/1.1"`, `"HTTP/2"`, `"HTTP/2 (prior knowledge)"` or `"HTTP/3"`.
    public var description: String {
        switch self {
        case .automatic: "automatic"
        case .http1_1: "HTTP/1.1"
        case .http2: "HTTP/2"
        case .http2PriorKnowledge: "HTTP/2 (prior knowledge)"
        case .http3: "HTTP/3"
        }
    }

    /// Whether a response that came over `negotiated` (`"HTTP/2"`, `"HTTP/1.1"`…) for `url` satisfies this choice.
    func accepts(negotiated: String, for url: URL) -> Bool {
        switch self {
        case .automatic, .http1_1: true
        case .http2, .http2PriorKnowledge: negotiated.hasPrefix("HTTP/2")
        case .http3: negotiated.hasPrefix("HTTP/3")
        }
    }
}
