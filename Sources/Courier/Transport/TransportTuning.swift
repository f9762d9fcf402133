import Foundation

/// Transfer settings for Courier's own tools (the `courier` command's `-x`, `--noproxy`,
/// `--connect-timeout`, `--limit-rate` and `-v`), honoured by the curl transport; the URLSession
/// transport ignores them. Package API, not public: the command line is their only user.
package struct TransportTuning: Sendable {
    /// The proxy of every URL, in libcurl's syntax (`http://host:port`), `""` for none; nil: the
    /// `http_proxy`/`https_proxy`/`all_proxy` environment variables decide, as for any session.
    package var proxy: String?
    /// The hosts never proxied (libcurl's `CURLOPT_NOPROXY` list, `*` for all); nil: `no_proxy` decides.
    package var noProxy: String?
    /// The longest connecting (TCP and TLS) may take before `.timedOut`; nil: libcurl's default.
    package var connectTimeout: Duration?
    /// The most response bytes per second the transfer reads (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`).
    package var maximumReceiveRate: Int64?
    /// The most request body bytes per second the transfer sends (`CURLOPT_MAX_SEND_SPEED_LARGE`).
    package var maximumSendRate: Int64?
    /// Receives libcurl's own account of each transfer (`CURLOPT_DEBUGFUNCTION`: what it does, the
    /// request head as sent and the response head as received), on the transport's thread, in the
    /// order libcurl says it; nil (the default) turns libcurl's verbose mode off.
    package var debugHandler: (@Sendable (CurlDebugEvent) -> Void)?

    /// No tuning: everything as for any session.
    package init() {}
}

/// One piece of libcurl's account of a transfer (see ``TransportTuning/debugHandler``).
package struct CurlDebugEvent: Sendable {
    /// What the text is.
    package enum Kind: Sendable, Equatable {
        /// libcurl's description of a step (`Trying 127.0.0.1:443...`, `ALPN: server accepted h2`).
        case text
        /// A response header line as it arrived (the status line included), with its line end.
        case headerIn
        /// The request head as it went out, every line with its line end, and the blank line.
        case headerOut
    }

    /// What the text is.
    package let kind: Kind
    /// The bytes libcurl gave, as UTF-8 (invalid bytes replaced).
    package let text: String
    /// The URL of the transfer it belongs to.
    package let url: URL

    /// An event (the transport makes them; tests make their own).
    package init(kind: Kind, text: String, url: URL) {
        self.kind = kind
        self.text = text
        self.url = url
    }
}
