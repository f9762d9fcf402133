import Courier

/// The exit statuses of `courier`, documented in `courier --help` and the README.
enum ExitCode: Int32, Sendable, CaseIterable {
    /// The request (or command) succeeded.
    case success = 0
    /// Any failure without a code of its own (invalid response, too many redirects, ...).
    case failure = 1
    /// The command line was wrong: unknown option, missing URL, bad header, conflicting options, an
    /// unreadable `--cacert`/`--cert`/`--key` file, a client certificate that cannot be loaded (wrong
    /// password), or a TLS or HTTP-version option the chosen transport cannot honour
    /// (``CourierError/Kind-swift.struct/invalidConfiguration``).
    case usage = 2
    /// The host could not be found, no connection could be made, it was lost, TLS failed (untrusted,
    /// expired or misnamed certificate, pin mismatch, client certificate refused, no common TLS
    /// version), or the server would not speak the HTTP version asked for.
    case connection = 3
    /// The idle or whole-transfer timeout expired.
    case timeout = 4
    /// The server answered with a status of 400 or more and `--fail` was given.
    case httpError = 5
    /// A file could not be read or written, or a download could not be resumed or verified.
    case fileSystem = 6
    /// Ctrl-C (SIGINT) or SIGTERM ended the command.
    case interrupted = 130

    /// The code for a request that ended with `error`.
    static func forError(_ error: CourierError) -> ExitCode {
        switch error.kind {
        case .cannotFindHost, .cannotConnect, .connectionLost, .httpVersionUnavailable:
            return .connection
        case _ where error.isSecureConnectionFailure:
            return .connection
        case .timedOut:
            return .timeout
        case .fileSystem, .resumeFailed:
            return .fileSystem
        case .invalidURL, .invalidConfiguration:
            return .usage
        default:
            return .failure
        }
    }

    /// One line per code, for `--help`.
    static var helpText: String {
        """
          0    success
          1    other failure (invalid response, too many redirects, ...)
          2    usage error (unknown option, missing URL, bad header, conflicting options, an
               unreadable --cacert/--cert/--key file, a client certificate that cannot be
               loaded, a TLS or HTTP-version option the transport cannot honour)
          3    connection failure (cannot find host, cannot connect, connection lost), TLS failure
               (untrusted, expired or misnamed certificate, pin mismatch, client certificate
               refused, no common TLS version), or the HTTP version asked for is unavailable
          4    timeout (--timeout, idle; or the whole-transfer limit)
          5    HTTP error status (400 or more) with --fail
          6    file-system error, or a download that could not be resumed or verified
          130  interrupted (Ctrl-C or SIGTERM); a -C download keeps its partial file
        """
    }
}
