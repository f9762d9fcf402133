import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints heads as curl does. With `-v`, to standard error: each request head as it went to the
/// transport (`> GET /path HTTP/1.1`, `> Host: ...`, then every header, in order), each response
/// head (`< HTTP/1.1 200 OK` and its headers), and the protocol of each exchange (`* HTTP/2,
/// TLSv1.3, TLS_AES_256_GCM_SHA384`). With `-i` or `-I`, each response head goes to standard
/// output before the body (`HTTP/1.1 200 OK` and the headers, CRLF-terminated, then a blank line).
///
/// The request line carries the HTTP version the exchange really used, which is known once the
/// response head arrives (HTTP/2 is negotiated in the TLS handshake): the request head is
/// therefore printed then, just before the response head, or when the exchange ends without one.
/// Response headers are sorted by name (Foundation keeps them in a dictionary, so the order on
/// the wire is lost). Events arrive on the request's executor; printing a few lines there is
/// quick enough.
struct VerboseMonitor: EventMonitor {
    let console: Console
    /// `-v`: heads and protocol lines on standard error.
    let verbose: Bool
    /// `-i`/`-I`: response heads on standard output.
    let includeHead: Bool
    /// The version of the request line when the exchange says nothing (it failed before a response).
    let fallbackVersion: String
    /// The request body's length, when the command knows it (for the `Content-Length` line).
    let bodyLength: Int64?
    /// The request head waiting for the exchange's HTTP version.
    private let pendingRequest = Locked<PendingHead?>(nil)

    /// A request head without its version.
    private struct PendingHead: Sendable {
        var method: String
        var target: String
        var lines: [String]
    }

    init(console: Console, verbose: Bool, includeHead: Bool = false, fallbackVersion: String = "HTTP/1.1", bodyLength: Int64? = nil) {
        self.console = console
        self.verbose = verbose
        self.includeHead = includeHead
        self.fallbackVersion = fallbackVersion
        self.bodyLength = bodyLength
    }

    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        guard verbose, let url = urlRequest.url else { return }
        var lines: [String] = []
        if !headers.contains("Host") { lines.append("Host: \(Self.hostField(url))") }
        lines += headers.map { "\($0.name): \($0.value)" }
        let length = urlRequest.httpBody.map { Int64($0.count) } ?? bodyLength
        if let length, !headers.contains("Content-Length"), !headers.contains("Transfer-Encoding") {
            lines.append("Content-Length: \(length)")
        }
        pendingRequest.withLock { $0 = PendingHead(method: urlRequest.httpMethod ?? "GET", target: Self.target(url), lines: lines) }
    }

    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        printHeads(response, version: Self.liveHTTPVersion(of: request))
    }

    func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        printHeads(response, version: Self.liveHTTPVersion(of: request))
        if verbose { console.message("* following the redirect to \(urlRequest.url?.absoluteString ?? "?")") }
    }

    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        guard verbose else { return }
        flushRequest(version: metrics.httpVersion)
        if let line = Self.protocolLine(metrics) { console.message(line) }
    }

    func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) {
        guard verbose else { return }
        console.message("* retrying in \(Units.elapsed(delay.seconds)) after: \(ErrorReport.sentence(for: error))")
    }

    /// `* HTTP/2, TLSv1.3, TLS_AES_256_GCM_SHA384`: the protocol an exchange used, with its TLS
    /// version and cipher when the transport knows them (just `* HTTP/1.1` in the clear); nil when
    /// no response came.
    static func protocolLine(_ metrics: TransferMetrics) -> String? {
        guard let httpVersion = metrics.httpVersion else { return nil }
        return "* " + ([httpVersion] + [metrics.tlsVersion, metrics.tlsCipherSuite].compactMap { $0 }).joined(separator: ", ")
    }

    // MARK: Printing

    private func printHeads(_ response: HTTPURLResponse, version: String?) {
        let version = version ?? fallbackVersion
        if verbose {
            flushRequest(version: version)
            (Self.responseHead(response, version: version).map { "< \($0)" } + ["<"]).forEach(console.message)
        }
        if includeHead {
            console.out(Self.responseHead(response, version: version).map { $0 + "\r\n" }.joined() + "\r\n")
        }
    }

    private func flushRequest(version: String?) {
        guard
            let head = pendingRequest.withLock({ pending -> PendingHead? in
                defer { pending = nil }
                return pending
            })
        else { return }
        // An HTTP/1.0 answer came to an HTTP/1.1 request (libcurl and URLSession send 1.1).
        let sent = (version ?? fallbackVersion).hasPrefix("HTTP/1") ? "HTTP/1.1" : (version ?? fallbackVersion)
        let lines = ["\(head.method) \(head.target) \(sent)"] + head.lines
        (lines.map { "> \($0)" } + [">"]).forEach(console.message)
    }

    /// The status line and the header lines of `response`, without line ends.
    static func responseHead(_ response: HTTPURLResponse, version: String) -> [String] {
        // HTTP/2 and later have no reason phrase on the wire.
        let status =
            version.hasPrefix("HTTP/1")
            ? "\(version) \(HTTPStatusText.line(response.statusCode))"
            : "\(version) \(response.statusCode)"
        let fields = response.allHeaderFields.map { (key: "\($0.key)", value: "\($0.value)") }
            .sorted { $0.key.lowercased() < $1.key.lowercased() }
        return [status] + fields.map { "\($0.key): \($0.value)" }
    }

    /// The request target of the request line: the path (at least `/`) and the query.
    static func target(_ url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        let path = components?.percentEncodedPath ?? url.path
        let query = components?.percentEncodedQuery.map { "?\($0)" } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }

    /// The `Host` field of `url`: the host (IPv6 in brackets), with the port unless it is the scheme's default.
    static func hostField(_ url: URL) -> String {
        let host = url.host ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let defaultPort = url.scheme?.lowercased() == "https" ? 443 : 80
        guard let port = url.port, port != defaultPort else { return bracketed }
        return "\(bracketed):\(port)"
    }

    /// The HTTP version of the exchange in flight, from the request's live metrics. Monitors are
    /// called on the request's executor, where the request can be read synchronously.
    static func liveHTTPVersion(of request: any Request) -> String? {
        func read<R: Request>(_ request: R) -> String? {
            request.assumeIsolated { $0.metricsSoFar?.httpVersion }
        }
        return read(request)
    }
}

extension Request {
    /// ``Request/metrics``, read from code isolated to the request.
    fileprivate var metricsSoFar: TransferMetrics? { metrics }
}
