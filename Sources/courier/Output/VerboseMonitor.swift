import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints heads as curl does. With `-i` or `-I`, each response head goes to standard output before
/// the body (`HTTP/1.1 200 OK` and the fields, CRLF-terminated, then a blank line); with `-D`, to
/// its file. With `-v`, on standard error: the protocol of each exchange (`* HTTP/2, TLSv1.3,
/// TLS_AES_256_GCM_SHA384`) and each redirect followed, and, when the transport does not describe
/// the wire itself (``wireFromTransport``, the curl transport's libcurl lines, see
/// ``CurlDebugPrinter``), each request head (`> GET /path HTTP/1.1`, `> Host: ...`, every field in
/// order) and response head (`< HTTP/1.1 200 OK`...).
///
/// Heads are printed through ``ResponseHeadText``, from what the response offers (see its note on
/// field order). Without the transport's lines, the request line carries the HTTP version the
/// exchange really used, known once the response head arrives (HTTP/2 is negotiated in the TLS
/// handshake): the request head is printed then, just before the response head, or when the
/// exchange ends without one if a connection was made (no head is printed for a connection that
/// never opened). Events arrive on the request's executor; printing a few lines there is quick enough.
struct VerboseMonitor: EventMonitor {
    let console: Console
    /// `-v`: heads and protocol lines on standard error.
    let verbose: Bool
    /// `-i`/`-I`: response heads on standard output, or where ``routes`` sends a request's.
    let includeHead: Bool
    /// Where `-i` sends the heads of a request whose body goes to a file (`-i -o FILE`).
    let routes: HeadRoutes?
    /// `-D FILE`: response heads to a file too.
    let dump: HeadDump?
    /// Whether the transport prints the connection and both heads itself (libcurl's lines), so
    /// that `-v` adds only Courier's own lines.
    let wireFromTransport: Bool
    /// The version of the request line when the exchange says nothing (it failed before a response).
    let fallbackVersion: String
    /// The request body's length, when the command knows it (for the `Content-Length` line).
    let bodyLength: Int64?
    /// The request heads waiting for their exchange's HTTP version, by request (transfers may run at once).
    private let pendingRequests = Locked<[UUID: PendingHead]>([:])

    /// A request head without its version.
    private struct PendingHead: Sendable {
        var method: String
        var target: String
        var lines: [String]
    }

    init(
        console: Console, verbose: Bool, includeHead: Bool = false, routes: HeadRoutes? = nil, dump: HeadDump? = nil,
        wireFromTransport: Bool = false, fallbackVersion: String = "HTTP/1.1", bodyLength: Int64? = nil
    ) {
        self.console = console
        self.verbose = verbose
        self.includeHead = includeHead
        self.routes = routes
        self.dump = dump
        self.wireFromTransport = wireFromTransport
        self.fallbackVersion = fallbackVersion
        self.bodyLength = bodyLength
    }

    /// Whether `-v` prints the heads from Courier's events.
    private var printsRequestHeads: Bool { verbose && !wireFromTransport }

    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        guard printsRequestHeads, let url = urlRequest.url else { return }
        var lines: [String] = []
        if !headers.contains("Host") { lines.append("Host: \(Self.hostField(url))") }
        lines += headers.map { "\($0.name): \($0.value)" }
        let length = urlRequest.httpBody.map { Int64($0.count) } ?? bodyLength
        if let length, !headers.contains("Content-Length"), !headers.contains("Transfer-Encoding") {
            lines.append("Content-Length: \(length)")
        }
        let head = PendingHead(method: urlRequest.httpMethod ?? "GET", target: Self.target(url), lines: lines)
        pendingRequests.withLock { $0[request.id] = head }
    }

    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        printHeads(response, of: request, version: Self.liveHTTPVersion(of: request))
    }

    func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        printHeads(response, of: request, version: Self.liveHTTPVersion(of: request))
        if verbose { console.message("* following the redirect to \(urlRequest.url?.absoluteString ?? "?")") }
    }

    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        guard verbose else { return }
        // A connection that was never made sent no request.
        if metrics.remoteAddress != nil || metrics.httpVersion != nil {
            flushRequest(of: request, version: metrics.httpVersion)
        } else {
            pendingRequests.withLock { _ = $0.removeValue(forKey: request.id) }
        }
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

    private func printHeads(_ response: HTTPURLResponse, of request: any Request, version: String?) {
        let version = version ?? fallbackVersion
        let head = ResponseHeadText(response, version: version, fields: Self.latestHeadFields(of: request))
        if printsRequestHeads {
            flushRequest(of: request, version: version)
            (head.lines.map { "< \($0)" } + ["<"]).forEach(console.message)
        }
        if includeHead {
            if let route = routes?.route(for: request.id) { route(head.wireText) } else { console.out(head.wireText) }
        }
        dump?.write(head)
    }

    private func flushRequest(of request: any Request, version: String?) {
        guard let head = pendingRequests.withLock({ $0.removeValue(forKey: request.id) }) else { return }
        // An HTTP/1.0 answer came to an HTTP/1.1 request (libcurl and URLSession send 1.1).
        let sent = (version ?? fallbackVersion).hasPrefix("HTTP/1") ? "HTTP/1.1" : (version ?? fallbackVersion)
        let lines = ["\(head.method) \(head.target) \(sent)"] + head.lines
        (lines.map { "> \($0)" } + [">"]).forEach(console.message)
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

    /// The field lines of the head monitors were just told about, in wire order (called on the
    /// request's executor, as monitors are).
    static func latestHeadFields(of request: any Request) -> HTTPHeaders? {
        func read<R: Request>(_ request: R) -> HTTPHeaders? {
            request.assumeIsolated { $0.latestHeadFields }
        }
        return read(request)
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

/// Where `-i` writes the heads of the requests whose body does not go to standard output.
final class HeadRoutes: Sendable {
    private let routes = Locked<[UUID: @Sendable (String) -> Void]>([:])

    /// Sends the heads of request `id` to `write`.
    func send(_ id: UUID, to write: @escaping @Sendable (String) -> Void) {
        routes.withLock { $0[id] = write }
    }

    /// Forgets request `id`.
    func remove(_ id: UUID) {
        routes.withLock { _ = $0.removeValue(forKey: id) }
    }

    /// Where request `id`'s heads go, if not to standard output.
    func route(for id: UUID) -> (@Sendable (String) -> Void)? {
        routes.withLock { $0[id] }
    }
}

extension Request {
    /// ``Request/metrics``, read from code isolated to the request.
    fileprivate var metricsSoFar: TransferMetrics? { metrics }
}
