import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier [METHOD] URL [options]`: one request, its body to standard output or a file.
///
/// Three paths, chosen by the options:
/// - a request body (`-d`, `--json`, `-F`): an upload; the response arrives in memory;
/// - `-o FILE`: a download streamed to disk (resumable with `-C`), with progress on stderr;
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
        if options.connection.insecure { console.message(ConnectionOptions.insecureWarning) }
        let configuration = makeConfiguration()
        do {
            try configuration.validate()
        } catch {
            return fail(with: error)
        }
        let session = makeSession(configuration: configuration)
        if let body = options.body {
            return await upload(body, session: session)
        }
        if let output = options.output {
            return await download(to: output, session: session)
        }
        return await printBody(session: session)
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
        return configuration
    }

    /// With `--pinnedpubkey`: redirects are followed only to https URLs of the pinned host, so that no
    /// part of the transfer escapes the pins; any other redirect is reported and its 3xx is the response.
    static func pinnedRedirects(host: String, console: Console) -> RedirectPolicy {
        RedirectPolicy { proposed, _ in
            guard staysPinned(proposed.url, host: host) else {
                console.message("courier: warning: --pinnedpubkey: not following the redirect to "
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

    /// A session with `configuration`, the store and `-v`.
    func makeSession(configuration: SessionConfiguration) -> Session {
        let storeDirectory = options.storeDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? DownloadStore.defaultDirectory
        return Session(configuration: configuration,
                       headers: [HTTPHeader.userAgent("courier/\(Courier.version)")],
                       eventMonitors: options.verbose ? [VerboseMonitor(console: console)] : [],
                       downloadStore: DownloadStore(directory: storeDirectory),
                       callbackQueue: DispatchQueue(label: "courier.callbacks"))
    }

    /// The method as Courier's type.
    var method: HTTPMethod { HTTPMethod(rawValue: options.method) }

    /// The `-H` headers, plus `defaults` for names the user did not set.
    func requestHeaders(defaults: [HTTPHeader] = []) -> HTTPHeaders {
        var headers = HTTPHeaders(options.headers.map { HTTPHeader(name: $0.name, value: $0.value) })
        for header in defaults where !headers.contains(header.name) { headers.add(header) }
        return headers
    }

    /// Cancels `request` on Ctrl-C or SIGTERM.
    func cancelOnInterrupt(_ request: some Request) {
        interrupts.onInterrupt { request.cancel() }
    }

    // MARK: Outcomes

    /// Prints the `-v` metrics line: the transfer metrics and the process's peak RSS.
    func reportMetrics(_ metrics: TransferMetrics?) {
        guard options.verbose else { return }
        console.message("* metrics: \(metrics?.description ?? "none (no exchange took place)") \(PeakMemory.summary)")
    }

    /// The exit status and message for a request that failed with `error`.
    func fail(with error: CourierError) -> ExitCode {
        if error.isCancelled, interrupts.wasInterrupted {
            console.message("courier: interrupted")
            return .interrupted
        }
        if options.failOnHTTPError, let code = error.responseCode, code >= 400 {
            console.message("courier: the server answered \(HTTPStatusText.line(code)) (--fail)")
            return .httpError
        }
        console.message("courier: \(error.description)")
        return ExitCode.forError(error)
    }

    /// With `--fail`, the status and message for an error status; nil when the status is fine.
    func failedStatus(_ response: HTTPURLResponse?) -> ExitCode? {
        guard let code = response?.statusCode, code >= 400 else { return nil }
        guard options.failOnHTTPError else { return nil }
        console.message("courier: the server answered \(HTTPStatusText.line(code)) (--fail)")
        return .httpError
    }
}

/// Serializes a response as the bytes received, whatever the status and even when empty.
struct RawBodySerializer: ResponseSerializer {
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> Data {
        if let error { throw error }
        return data ?? Data()
    }
}
