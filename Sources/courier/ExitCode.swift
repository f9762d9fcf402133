import Courier

/// The exit statuses of `courier`, documented in `courier --help` and the README.
///
/// Where curl has an exit code for the same failure, `courier` uses curl's number, so that
/// scripts written for curl read `courier`'s statuses the same way (`--fail` gives 22, a host that
/// cannot be resolved 6, a timeout 28...). The rest keep clear of curl's numbers in use.
enum ExitCode: Int32, Sendable, CaseIterable {
    /// The request (or command) succeeded.
    case success = 0
    /// curl 1: the URL's scheme is not http, https, ws or wss (`htp://host`, `ftp://host`).
    case unsupportedProtocol = 1
    /// The command line was wrong: unknown option, missing URL, bad header, conflicting options,
    /// or a TLS or HTTP-version option the chosen transport cannot honour.
    case usage = 2
    /// curl 3: the URL is malformed (no host, bad port...).
    case malformedURL = 3
    /// curl 6: the host name could not be resolved.
    case cannotResolveHost = 6
    /// curl 7: no connection could be made.
    case cannotConnect = 7
    /// curl 8: the server's reply is not valid HTTP, or the WebSocket server broke the protocol.
    case invalidResponse = 8
    /// curl 16: the server would not speak the HTTP version asked for.
    case httpVersion = 16
    /// curl 18: the connection closed before the whole body arrived.
    case partialFile = 18
    /// curl 22: `--fail` and a status of 400 or more; a WebSocket handshake answered with a
    /// status other than 101 (curl's "Refused WebSocket upgrade").
    case httpError = 22
    /// curl 23: the output (a file, standard output) could not be written.
    case writeError = 23
    /// curl 26: a file to send could not be read.
    case readError = 26
    /// curl 28: the idle or whole-transfer timeout expired.
    case timeout = 28
    /// curl 33: `-C` asked for the rest of a file and the server sent all of it (it ignores
    /// ranges): "Cannot resume".
    case cannotResume = 33
    /// curl 35: the TLS handshake failed (no common version, client certificate refused...).
    case tlsHandshake = 35
    /// curl 36: a download could not be resumed (another process holds its partial, or its bytes
    /// could not be verified).
    case resumeFailed = 36
    /// curl 47: too many redirects.
    case tooManyRedirects = 47
    /// curl 52: the server closed the connection without a reply.
    case emptyReply = 52
    /// curl 56: the connection was lost while receiving.
    case receiveError = 56
    /// curl 58: the client certificate or its key cannot be used.
    case clientCertificate = 58
    /// curl 60: the server's certificate cannot be trusted (unknown CA, expired, other host name).
    case peerCertificate = 60
    /// curl 63: the response is larger than a limit.
    case tooLarge = 63
    /// curl 77: the CA certificate file or directory cannot be read.
    case caCertificate = 77
    /// curl 90: the server's public key does not match `--pinnedpubkey`.
    case pinMismatch = 90
    /// Any other failure (not a curl code).
    case failure = 100
    /// The WebSocket server closed with a code other than 1000 (normal) or 1001 (going away)
    /// (not a curl code: curl has no interactive WebSocket mode).
    case webSocketClosed = 101
    /// Ctrl-C (SIGINT) or SIGTERM ended the command (128 + SIGINT, as a shell reports it).
    case interrupted = 130

    /// The code for a request that ended with `error`.
    static func forError(_ error: CourierError) -> ExitCode {
        switch error.kind {
        case .cannotFindHost: return .cannotResolveHost
        case .cannotConnect: return .cannotConnect
        case .connectionLost: return error.responseCode == nil ? .receiveError : .partialFile
        case .emptyResponse: return .emptyReply
        case .httpVersionUnavailable: return .httpVersion
        case .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHostnameMismatch: return .peerCertificate
        case .pinMismatch: return .pinMismatch
        case .clientCertificateRejected, .tlsVersionUnsupported, .secureConnectionFailed: return .tlsHandshake
        case .timedOut: return .timeout
        case .tooManyRedirects: return .tooManyRedirects
        case .invalidResponse: return .invalidResponse
        case .responseTooLarge: return .tooLarge
        case .fileSystem: return .writeError
        case .resumeFailed: return .resumeFailed
        case .invalidURL: return .malformedURL
        case .invalidConfiguration: return .usage
        case .webSocketHandshakeFailed: return error.responseCode == nil ? .invalidResponse : .httpError
        case .webSocketProtocolViolation: return .invalidResponse
        case .webSocketClosed: return .webSocketClosed
        default: return .failure
        }
    }

    /// One line per code, for `--help` (the README has the same table).
    static var helpText: String {
        """
          0    success
          1    unsupported protocol: the URL's scheme is not http, https, ws or wss (htp://, ftp://)
          2    usage error (unknown option, missing URL, bad header, conflicting options, or a
               TLS or HTTP-version option the transport cannot honour)
          3    malformed URL
          6    could not resolve the host
          7    could not connect
          8    the reply is not valid HTTP, or a WebSocket server broke the protocol
          16   the server would not speak the HTTP version asked for
          18   the connection closed before the whole body arrived
          22   HTTP error status (400 or more) with -f/--fail; a refused WebSocket handshake
          23   the output could not be written (-o, -O, standard output)
          26   a file to send could not be read (-d @FILE, -F name=@FILE, -H @FILE)
          28   timeout (-m/--max-time, --connect-timeout, --timeout idle)
          33   -C: the server ignores ranges and sent the whole file (nothing overwritten)
          35   TLS handshake failed (no common TLS version, client certificate refused)
          36   a -C download could not be resumed or verified
          47   too many redirects (--max-redirs)
          52   the server closed the connection without a reply
          56   the connection was lost while receiving
          58   the client certificate or its key cannot be read or used
          60   the server's certificate is not trusted (unknown CA, expired, other host name)
          63   the response is larger than a limit
          77   the --cacert file or --capath directory cannot be read
          90   the server's public key does not match --pinnedpubkey
          100  any other failure
          101  the WebSocket server closed with a code other than 1000 or 1001 (printed)
          130  interrupted (Ctrl-C or SIGTERM); a -C download keeps its partial
        The codes from 1 to 90 are curl's for the same failures.
        """
    }
}
