import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier [METHOD] URL [options]`: one request, its body to standard output or a file.
///
/// Three paths, chosen by the options:
/// - a request body (`-d`, `--json`, `-F`, `name=value` items): an upload; the response arrives in memory;
/// - `-o FILE` or `-O`: a download streamed to disk (resumable with `-C`), with progress on stderr;
/// - otherwise: a streamed request whose chunks are written to standard output as they arrive,
///   so memory stays bounded whatever the body's size; on a terminal, bodies up to
///   ``BodyPrinter/formattingLimit`` are collected (in place, linearly) to be formatted
///   (see ``StreamedBody``).
struct FetchCommand {
    let options: FetchOptions
    let interrupts: Interrupts
    let console: Console

    /// Runs the request and returns the exit status.
    func run() async -> ExitCode {
        if options.connection.insecure { message(ConnectionOptions.insecureWarning) }
        let configuration = makeConfiguration()
        do {
            try configuration.validate()
        } catch {
            return fail(with: error)
        }
        if let body = options.body {
            return await upload(body, configuration: configuration)
        }
        if let output = options.output {
            return await download(to: output, session: makeSession(configuration: configuration))
        }
        return await printBody(session: makeSession(configuration: configuration))
    }

    /// The session configuration the options ask for: transport, idle timeout, redirects, TLS and
    /// HTTP version.
    func makeConfiguration() -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        switch options.transport {
        case .curl: configuration.transport = .curl
        case .urlsession: configuration.transport = .urlSession(.ephemeral)
        case nil: break
        }
        if let timeout = options.timeout { configuration.requestTimeout = timeout }
        if let maxRedirects = options.maxRedirects { configuration.maximumRedirects = maxRedirects }
        configuration.cookies = .none
        configuration.tls = options.connection.tlsConfiguration(host: options.url.host ?? "")
        configuration.httpVersion = options.connection.httpVersion
        if !options.connection.pins.isEmpty {
            configuration.redirectPolicy = Self.pinnedRedirects(host: options.url.host ?? "", console: console)
        }
        if options.cacheDirectory != nil { configuration.httpCache = .enabled }
        return configuration
    }

    /// With `--pinnedpubkey`: redirects are followed only to https URLs of the pinned host, so that no
    /// part of the transfer escapes the pins; any other redirect is reported and its 3xx is the response.
    static func pinnedRedirects(host: String, console: Console) -> RedirectPolicy {
        RedirectPolicy { proposed, _ in
            guard staysPinned(proposed.url, host: host) else {
                console.message(
                    "courier: warning: --pinnedpubkey: not following the redirect to "
                        + "\(proposed.url?.absoluteString ?? "?") (only https://\(host) is pinned)")
                return nil
            }
            return proposed
        }
    }

    /// Whether a redirect to `url` stays under the pins of `host`: https, and the same host.
    static func staysPinned(_ url: URL?, host: String) -> Bool {
        guard let url, url.scheme?.lowercased() == "https", let target = url.host else { return false }
        return target.lowercased() == host.lowercased()
    }

    /// A session with `configuration`, the store, `--cache`, `-v`/`-i` and `--retry`; `bodyLength`
    /// is the request body's size for `-v`, when known.
    func makeSession(configuration: SessionConfiguration, bodyLength: Int64? = nil) -> Session {
        let storeDirectory =
            options.storeDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? DownloadStore.defaultDirectory
        var monitors: [any EventMonitor] = []
        if options.verbose || options.includeHead {
            let fallback = options.connection.httpVersion == .http2PriorKnowledge ? "HTTP/2" : "HTTP/1.1"
            monitors.append(
                VerboseMonitor(
                    console: console, verbose: options.verbose, includeHead: options.includeHead,
                    fallbackVersion: fallback, bodyLength: bodyLength))
        }
        let retry =
            options.retries > 0
            ? RetryPolicy(retryLimit: options.retries, exponentialBackoffScale: options.retryDelay ?? 1, jitter: false) : nil
        return Session(
            configuration: configuration,
            headers: [HTTPHeader.userAgent("courier/\(Courier.version)")],
            interceptor: retry,
            eventMonitors: monitors,
            downloadStore: DownloadStore(directory: storeDirectory),
            responseCache: responseCache,
            callbackQueue: DispatchQueue(label: "courier.callbacks"))
    }

    /// The response cache: with `--cache DIR`, one on that directory; else the default (memory only,
    /// unused by the command's requests).
    var responseCache: ResponseCache {
        guard let directory = options.cacheDirectory else { return ResponseCache() }
        return ResponseCache(diskDirectory: URL(fileURLWithPath: directory, isDirectory: true))
    }

    /// The method as Courier's type.
    var method: HTTPMethod { HTTPMethod(rawValue: options.method) }

    /// The `-H` headers, plus `defaults` and `Accept: */*` (as curl sends) for names the user did not set.
    func requestHeaders(defaults: [HTTPHeader] = []) -> HTTPHeaders {
        var headers = HTTPHeaders(options.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
        for header in defaults + [.accept("*/*")] where !headers.contains(header.name) { headers.add(header) }
        return headers
    }

    /// The statuses a response may have without failing: below 400 with `--fail`; with `--retry`,
    /// anything but the transient statuses that are retried; nil when every status is accepted.
    var acceptableStatusCodes: Set<Int>? {
        var acceptable: Set<Int>?
        if options.failOnHTTPError { acceptable = Set(0..<400) }
        if options.retries > 0 { acceptable = (acceptable ?? Set(0..<1000)).subtracting(RetryPolicy.defaultRetryableHTTPStatusCodes) }
        return acceptable
    }

    /// Cancels `request` on Ctrl-C or SIGTERM.
    func cancelOnInterrupt(_ request: some Request) {
        interrupts.onInterrupt { request.cancel() }
    }

    // MARK: Outcomes

    /// Prints a line to standard error unless `-s` (without `-S`) silenced errors.
    func message(_ line: String) {
        if options.showsErrors { console.message(line) }
    }

    /// Prints the `-v` metrics line: the transfer metrics and the process's peak RSS; with
    /// `--cache`, a line before it saying what the cache did (`* cache: miss (network)`,
    /// `* cache: hit`, `* cache: revalidated (304)`, `* cache: hit, stale (reason)`).
    func reportMetrics(_ metrics: TransferMetrics?) {
        guard options.verbose else { return }
        if options.cacheDirectory != nil, let metrics { console.message("* cache: \(Self.cacheOutcome(metrics.source))") }
        console.message("* metrics: \(metrics?.description ?? "none (no exchange took place)") \(PeakMemory.summary)")
    }

    /// What `-v` says the cache did for a response from `source`.
    static func cacheOutcome(_ source: ResponseSource) -> String {
        switch source {
        case .network: "miss (network)"
        case .cache: "hit"
        case .revalidated: "revalidated (304)"
        case .staleCache(let reason): "hit, stale (\(reason))"
        }
    }

    /// The exit status and message for a request that failed with `error`.
    func fail(with error: CourierError) -> ExitCode {
        if error.isCancelled, interrupts.wasInterrupted {
            message("courier: interrupted")
            return .interrupted
        }
        if error.kind == .validationFailed, let code = error.responseCode, acceptableStatusCodes?.contains(code) == false {
            return httpError(code)
        }
        let report = ErrorReport(error)
        if options.showsErrors || options.verbose { report.lines(verbose: options.verbose).forEach(console.message) }
        return report.exitCode
    }

    /// `courier: (22) The requested URL returned error: 404 Not Found`.
    func httpError(_ code: Int) -> ExitCode {
        var line = "courier: (22) The requested URL returned error: \(HTTPStatusText.line(code))"
        if !options.failOnHTTPError { line += " (after \(options.retries) retries)" }
        message(line)
        return .httpError
    }

    /// With `--fail` (or `--retry`), the status and message for a status it rejects; nil when the status is fine.
    func failedStatus(_ response: HTTPURLResponse?) -> ExitCode? {
        guard let code = response?.statusCode, acceptableStatusCodes?.contains(code) == false else { return nil }
        return httpError(code)
    }

    /// Prints a file-system problem and returns its exit status (23: the output cannot be
    /// written; 26 with `reading`: a file to send cannot be read).
    func fileFailure(_ problem: String, reading: Bool = false) -> ExitCode {
        let code: ExitCode = reading ? .readError : .writeError
        message("courier: (\(code.rawValue)) \(problem.capitalizedFirst)")
        return code
    }

    /// Prints `-w`'s text for a finished command and returns `code`.
    func finish(
        _ code: ExitCode, response: HTTPURLResponse?, metrics: TransferMetrics?, bodyBytes: Int64,
        lastURL: URL? = nil, error: CourierError? = nil
    ) -> ExitCode {
        guard let writeOut = options.writeOut else { return code }
        var values = WriteOut.Values(urlEffective: (lastURL ?? response?.url ?? options.url).absoluteString)
        values.statusCode = response?.statusCode
        values.sizeDownload = bodyBytes
        values.sizeUpload = metrics?.bytesSent ?? 0
        values.timeTotal = metrics?.total.seconds ?? 0
        values.timeStartTransfer = metrics?.timeToFirstByte?.seconds
        values.contentType = response?.value(forHTTPHeaderField: "Content-Type")
        values.redirects = metrics?.redirectCount ?? 0
        values.httpVersion = WriteOut.curlVersion(metrics?.httpVersion)
        values.remoteAddress = metrics?.remoteAddress
        values.exitCode = code.rawValue
        values.errorMessage = error.map(ErrorReport.sentence(for:))
        let rendered = writeOut.render(values)
        for name in rendered.unknown { message("courier: warning: -w: unknown variable %{\(name)}") }
        console.out(rendered.text)
        return code
    }
}

/// Serializes a response as the bytes received, whatever the status and even when empty.
struct RawBodySerializer: ResponseSerializer {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> Data {
        if let error { throw error }
        return data ?? Data()
    }
}
