import CCurl
import Foundation

/// A libcurl result code (`CURLcode`), kept as the ``CourierError/underlyingError`` of curl failures.
struct CurlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `CURLcode` value.
    let code: Int32

    /// libcurl's own sentence for the code, e.g. `"Couldn't connect to server"`.
    var text: String { String(cString: ccurl_easy_strerror(code)) }

    /// `"CURLcode 7: Couldn't connect to server"`.
    var description: String { "CURLcode \(code): \(text)" }

    /// The Courier error kind for this code.
    var kind: CourierError.Kind {
        switch code {
        case CCURLE_COULDNT_RESOLVE_HOST, CCURLE_COULDNT_RESOLVE_PROXY:
            .cannotFindHost
        case CCURLE_COULDNT_CONNECT, CCURLE_QUIC_CONNECT_ERROR:
            .cannotConnect
        case CCURLE_OPERATION_TIMEDOUT:
            .timedOut
        // CURLE_PARTIAL_FILE is also "transfer closed with N bytes remaining to read".
        case CCURLE_PARTIAL_FILE, CCURLE_RECV_ERROR, CCURLE_SEND_ERROR, CCURLE_GOT_NOTHING, CCURLE_HTTP2_STREAM,
            CCURLE_HTTP3:
            .connectionLost
        case CCURLE_SSL_CONNECT_ERROR, CCURLE_PEER_FAILED_VERIFICATION, CCURLE_SSL_CERTPROBLEM, CCURLE_SSL_CIPHER,
            CCURLE_USE_SSL_FAILED, CCURLE_SSL_ENGINE_NOTFOUND, CCURLE_SSL_ENGINE_SETFAILED, CCURLE_SSL_ENGINE_INITFAILED,
            CCURLE_SSL_CACERT_BADFILE, CCURLE_SSL_SHUTDOWN_FAILED, CCURLE_SSL_CRL_BADFILE, CCURLE_SSL_ISSUER_ERROR,
            CCURLE_SSL_PINNEDPUBKEYNOTMATCH, CCURLE_SSL_INVALIDCERTSTATUS, CCURLE_SSL_CLIENTCERT:
            .secureConnectionFailed
        case CCURLE_BAD_CONTENT_ENCODING, CCURLE_WEIRD_SERVER_REPLY, CCURLE_HTTP2:
            .invalidResponse
        case CCURLE_READ_ERROR:
            .fileSystem
        case CCURLE_URL_MALFORMAT, CCURLE_UNSUPPORTED_PROTOCOL:
            .invalidURL
        default:
            .transportFailed
        }
    }
}

extension CourierError {
    /// The error for a transfer libcurl ended with `code`; `detail` is the transfer's error buffer;
    /// `readingHead` is whether a status line had arrived and the head had not ended yet.
    init(curl code: Int32, detail: String, url: URL, readingHead: Bool = false) {
        let error = CurlError(code: code)
        var message = detail.isEmpty ? error.text : detail
        // A header line over libcurl's 100 KiB buffer is "Out of memory"; only while the head is
        // read is that the likely cause (a real shortage elsewhere keeps its own kind).
        if code == CCURLE_OUT_OF_MEMORY, readingHead {
            self.init(.responseTooLarge, Self.transportHeaderLineLimitMessage, underlyingError: error, url: url)
            return
        }
        // libcurl 8.6.0 and later report both head limits (a line over 100 KiB, more than 5,000
        // header lines or 300 KiB) as CURLE_TOO_LARGE.
        if code == CCURLE_TOO_LARGE, readingHead {
            self.init(
                .responseTooLarge,
                "The response head is larger than the transport accepts (a header line over 100 KiB, "
                    + "more than 5,000 lines or 300 KiB in total; libcurl: \(message)).",
                underlyingError: error, url: url)
            return
        }
        // libcurl reports a proxy's refusal of CONNECT as a receive error on a connection that never opened.
        if code == CCURLE_RECV_ERROR, let status = Self.refusedTunnelStatus(message) {
            self.init(
                .cannotConnect,
                "The proxy refused to open a tunnel to \(url.host ?? "the server") (it answered CONNECT with \(status)).",
                underlyingError: error, url: url)
            return
        }
        // libcurl reports malformed chunks as receive errors, and a chunked body's malformed
        // trailers as the error of its header store (CURLE_BAD_FUNCTION_ARGUMENT), whose code
        // says nothing: the sentence does.
        if code == CCURLE_RECV_ERROR || message.hasPrefix(Self.chunkedTrailerFailure), Self.isMalformedFraming(message) {
            self.init(.invalidResponse, "The response's framing is malformed: \(message).", underlyingError: error, url: url)
            return
        }
        // A reply without a status line is HTTP/0.9 to libcurl, which refuses it as an
        // "unsupported protocol": the URL was fine, the server's answer was not HTTP.
        if code == CCURLE_UNSUPPORTED_PROTOCOL, detail.contains("HTTP/0.9") {
            self.init(
                .invalidResponse, "The server's reply is not HTTP (no status line; libcurl: \(message)).",
                underlyingError: error, url: url)
            return
        }
        // CURLOPT_LOW_SPEED_LIMIT/TIME (the minimum transfer rate) end a transfer with this sentence.
        if code == CCURLE_OPERATION_TIMEDOUT, message.hasPrefix("Operation too slow") {
            message = "The transfer was slower than its minimum transfer rate: \(message)"
        }
        if Self.isTransportHeadLimit(message) {
            self.init(.responseTooLarge, Self.transportHeadLimitMessage(message), underlyingError: error, url: url)
            return
        }
        if let tls = TLSFailure(code: code, detail: message) {
            self.init(tls.kind, tls.sentence(host: url.host ?? "the server") + " (libcurl: \(message))", underlyingError: error, url: url)
            return
        }
        self.init(error.kind, message, underlyingError: error, url: url)
    }
}

extension CourierError {
    /// The status in libcurl's "CONNECT tunnel failed, response 403", or nil for another message.
    static func refusedTunnelStatus(_ message: String) -> Int? {
        let prefix = "CONNECT tunnel failed, response "
        guard message.hasPrefix(prefix) else { return nil }
        return Int(message.dropFirst(prefix.count).prefix(while: \.isNumber))
    }
}
