import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One transfer of `courier [METHOD] URL... [options]`: a URL's body to standard output or a file.
///
/// The paths, chosen by the options:
/// - a request body (`-d`, `--json`, `-F`, `-T`, `name=value` items): an upload; the response
///   arrives in memory;
/// - `-o FILE` or `-O`: a download streamed to disk (resumable with `-C -`), with progress on
///   stderr; with `-i`, `-C OFFSET`, or a partial file `-C -` takes over, the body is written into
///   the file as it arrives instead (see `Fetch+Continue.swift`);
/// - otherwise: a streamed request whose chunks are written to standard output as they arrive,
///   so memory stays bounded whatever the body's size; on a terminal, bodies up to
///   ``BodyPrinter/formattingLimit`` are collected (in place, linearly) to be formatted
///   (see ``StreamedBody``).
///
/// ``FetchBatch`` runs one per URL, all sharing its session (and so its connections) and its
/// ``FetchContext`` (the cookie jar, the refused redirects).
struct FetchCommand {
    let options: FetchOptions
    /// The session every transfer of the command uses.
    let session: Session
    let context: FetchContext
    let interrupts: Interrupts
    let console: Console
    /// The transfer's place among the command's URLs: its interrupt slot and `%{urlnum}`.
    var index = 0
    /// Why the command itself stopped the transfer, if it did.
    let stop = Locked<TransferStop?>(nil)

    /// Why the command stops a transfer at its head.
    enum TransferStop: Sendable {
        /// `--max-filesize`: the body is larger.
        case tooLarge(Int64)
        /// `-z`: the server ignored the time condition and its `Last-Modified` says it is not met
        /// (curl then reports 304 and writes no body).
        case conditionUnmet
    }

    /// Runs the transfer and returns its exit status.
    func run() async -> ExitCode {
        if let blocked = blockedProtocol(options.url) { return blocked }
        if let body = options.body {
            return await upload(body)
        }
        if let output = options.output {
            // A device or FIFO (`-o /dev/null`) is written through, as curl does: a download
            // would put a new file in its place.
            if options.resumeOffset != nil || (options.includeHead && !options.resumable) || OutputPath.isSpecial(output) {
                return await writeStream(to: output)
            }
            return await download(to: output)
        }
        return await printBody()
    }

    /// The method as Courier's type.
    var method: HTTPMethod { HTTPMethod(rawValue: options.method) }

    /// The `-H` headers (a name given twice goes out as two lines, as curl sends it; for a field
    /// that takes one value, such as `Authorization` from `-u` and `-H`, the last wins), plus
    /// `defaults`, `Accept: */*` (as curl sends), the cookies of `-b`, and `Range` for
    /// `-C OFFSET`, for names the user did not set; `-H 'Name:'` removes a name.
    func requestHeaders(defaults: [HTTPHeader] = []) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for header in options.headers {
            if HTTPHeaders.singleValueFieldNames.contains(where: { $0.caseInsensitiveCompare(header.name) == .orderedSame }) {
                headers.update(name: header.name, value: header.value)
            } else {
                headers.append(name: header.name, value: header.value)
            }
        }
        var added = defaults + [.accept("*/*")]
        if let cookie = context.cookieHeader(for: options.url) { added.append(HTTPHeader(name: "Cookie", value: cookie)) }
        if let offset = options.resumeOffset, offset > 0 { added.append(HTTPHeader(name: "Range", value: "bytes=\(offset)-")) }
        for header in added where !headers.contains(header.name) { headers.add(header) }
        for name in options.removedHeaders { headers.remove(name: name) }
        return headers
    }

    /// The statuses a response may have without failing: below 400 with `--fail`; with `--retry`,
    /// anything but the transient statuses that are retried; nil when every status is accepted.
    var acceptableStatusCodes: Set<Int>? {
        var acceptable: Set<Int>?
        if options.failOnHTTPError { acceptable = Set(0..<400) }
        if options.retries > 0 {
            acceptable = (acceptable ?? Set(0..<1000)).subtracting(CommandRetrier.retriedStatusCodes)
            if options.retryAllErrors, options.failsOnHTTPError { acceptable = acceptable?.intersection(0..<400) }
        }
        return acceptable
    }

    /// Applies `-f`/`--retry`'s validation to `request`, `--max-filesize` and `-z` at its head, and
    /// cancels it on Ctrl-C.
    func prepare<R: Request>(_ request: R) {
        if let acceptable = acceptableStatusCodes { request.validate(statusCode: acceptable) }
        if options.maxFileSize != nil || options.timeCondition != nil {
            let options = options
            let stop = stop
            request.decideHTTPResponse { response in
                if let limit = options.maxFileSize, response.expectedContentLength > limit {
                    stop.withLock { $0 = .tooLarge(response.expectedContentLength) }
                    return .cancel
                }
                if let condition = options.timeCondition, condition.isUnmet(by: response) {
                    stop.withLock { $0 = .conditionUnmet }
                    return .cancel
                }
                return .allow
            }
        }
        interrupts.onInterrupt(slot: index) { request.cancel() }
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
        switch stop.withLock({ $0 }) {
        case .tooLarge(let size)?:
            message("courier: (63) Maximum file size exceeded (\(size) bytes; --max-filesize \(options.maxFileSize ?? 0))")
            return .tooLarge
        case .conditionUnmet?:
            return .success
        case nil:
            break
        }
        if error.kind == .responseTooLarge, options.maxFileSize != nil {
            message("courier: (63) Maximum file size exceeded (--max-filesize \(options.maxFileSize ?? 0))")
            return .tooLarge
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
        if !options.failsOnHTTPError { line += " (after \(options.retries) retries)" }
        message(line)
        return .httpError
    }

    /// With `--fail` (or `--retry`), the status and message for a status it rejects; nil when the status is fine.
    func failedStatus(_ response: HTTPURLResponse?) -> ExitCode? {
        guard let code = response?.statusCode else { return nil }
        if let scheme = context.refusedRedirect(from: response?.url) {
            message("courier: (1) Protocol \"\(scheme)\" not supported or disabled (a redirect --proto or --proto-redir refuses)")
            return .unsupportedProtocol
        }
        if options.failWithBody, code >= 400 { return httpError(code) }
        guard acceptableStatusCodes?.contains(code) == false else { return nil }
        return httpError(code)
    }

    /// Prints a file-system problem and returns its exit status (23: the output cannot be
    /// written; 26 with `reading`: a file to send cannot be read).
    func fileFailure(_ problem: String, reading: Bool = false) -> ExitCode {
        let code: ExitCode = reading ? .readError : .writeError
        message("courier: (\(code.rawValue)) \(problem.capitalizedFirst)")
        return code
    }

    /// Whether a redirect to `url` stays under the pins of `host` (`--pinnedpubkey`): https, and the same host.
    static func staysPinned(_ url: URL?, host: String) -> Bool {
        guard let url, url.scheme?.lowercased() == "https", let target = url.host else { return false }
        return target.lowercased() == host.lowercased()
    }

    /// `--proto`: exit 1 for a URL whose scheme it does not allow.
    func blockedProtocol(_ url: URL) -> ExitCode? {
        guard let allowed = options.protocols, let scheme = url.scheme?.lowercased(), !allowed.contains(scheme) else { return nil }
        message("courier: (1) Protocol \"\(scheme)\" not supported or disabled (--proto)")
        return .unsupportedProtocol
    }

    /// Prints `-w`'s text for a finished transfer, takes its cookies, and returns `code`.
    func finish(
        _ code: ExitCode, response: HTTPURLResponse?, metrics: TransferMetrics?, bodyBytes: Int64,
        lastURL: URL? = nil, error: CourierError? = nil
    ) -> ExitCode {
        if let response { context.takeCookies(from: response) }
        if let response, let output = options.output, options.remoteTime { FileMode.applyLastModified(of: response, to: output) }
        guard let writeOut = options.writeOut else { return code }
        var values = WriteOut.Values(urlEffective: (lastURL ?? response?.url ?? options.url).absoluteString)
        values.url = options.url.absoluteString
        values.urlNumber = index
        values.method = options.method
        values.statusCode = stop.withLock({ $0 }).map { if case .conditionUnmet = $0 { 304 } else { nil } } ?? response?.statusCode
        values.sizeDownload = bodyBytes
        values.sizeUpload = metrics?.bytesSent ?? 0
        values.metrics = metrics
        values.response = response
        values.contentType = response?.value(forHTTPHeaderField: "Content-Type")
        values.redirects = metrics?.redirectCount ?? 0
        values.httpVersion = WriteOut.curlVersion(metrics?.httpVersion)
        values.remoteAddress = metrics?.remoteAddress
        values.exitCode = code.rawValue
        values.errorMessage = error.map(ErrorReport.sentence(for:))
        values.filename = options.output
        let rendered = writeOut.render(values)
        for name in rendered.unknown { message("courier: warning: -w: unknown variable %{\(name)}") }
        for piece in rendered.pieces {
            switch piece.stream {
            case .standardOutput: console.out(piece.text)
            case .standardError: console.messageText(piece.text)
            }
        }
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
