import Courier
import Foundation

/// The transports `--transport` can choose.
enum TransportName: String, Equatable, Sendable, CaseIterable {
    case curl
    case urlsession
}

/// Everything `courier [METHOD] URL... [ITEM...] [options]` was asked to do, checked and typed.
///
/// ``make(from:environment:readFile:readData:)`` touches no network and reads only the files it
/// is told to through `readFile` and `readData` (`-H @FILE`, `-d @FILE`, `--json @FILE`, `-K`,
/// `--netrc-file`), so every usage error can be tested directly. ``url`` and ``output`` are those
/// of the transfer at hand: ``targets`` lists every URL with its output, and
/// ``forTarget(_:)`` gives the options of one.
struct FetchOptions: Equatable, Sendable {
    /// The request method, upper-cased (`GET`; `POST` when a body is given and no method is; `HEAD`
    /// with `-I`; `PUT` with `-T`).
    var method: String = "GET"
    /// The URL of this transfer: absolute http(s) (`http://` is assumed when no scheme is given),
    /// with `name==value` items (and `-G` data) in its query.
    var url: URL
    /// `-o FILE`, `-O` or `-J`'s file of this transfer; nil for standard output (no `-o`, or `-o -`).
    var output: String?
    /// Every URL, in order, with its output.
    var targets: [TransferTarget] = []
    /// `-H` headers (and `Header:value` items, `-e`, `-u`, `--oauth2-bearer`, `-r`, `-z`), in order.
    var headers: [HeaderField] = []
    /// Header names `-H 'Name:'` removed (curl's way to drop a header it would send).
    var removedHeaders: [String] = []
    /// `-A`: the User-Agent; `""` sends none; nil for courier's own.
    var userAgent: String?
    /// The request body, if any.
    var body: RequestBody?
    /// `-C` / `-C -`: resumable download through the download store.
    var resumable = false
    /// `-C OFFSET`: the file is continued from this byte (appended to), curl's way.
    var resumeOffset: Int64?
    /// `--timeout`: idle timeout in seconds.
    var timeout: Double?
    /// `-m/--max-time`: the whole transfer's limit in seconds.
    var maxTime: Double?
    /// `--connect-timeout`: seconds.
    var connectTimeout: Double?
    /// `-v`.
    var verbose = false
    /// `-f/--fail`: a status of 400 or more exits with 22 and prints no body.
    var failOnHTTPError = false
    /// `--fail-with-body`: a status of 400 or more exits with 22 after its body is printed.
    var failWithBody = false
    /// `--fail-early`: with several URLs, the first failure ends the command.
    var failEarly = false
    /// `-L`: redirects are followed (else the 3xx is the answer).
    var followsRedirects = false
    /// `--location-trusted`: `-u`'s credentials go along to other hosts.
    var locationTrusted = false
    /// `--max-redirs`: the most redirects `-L` follows; nil for curl's 50.
    var maxRedirects: Int?
    /// `--proto`: the schemes allowed; nil for http and https.
    var protocols: Set<String>?
    /// `--proto-redir`: the schemes a redirect may go to; nil for those of ``protocols``.
    var redirectProtocols: Set<String>?
    /// `--compressed`: ask for compressed bodies and decode them.
    var compressed = false
    /// The download store directory (`--store`, else `COURIER_DOWNLOAD_STORE`); nil for the library default.
    var storeDirectory: String?
    /// `--cache DIR`: the HTTP cache's directory (RFC 9111 caching on for the command); nil for no cache.
    var cacheDirectory: String?
    /// `--transport`.
    var transport: TransportName?
    /// The TLS and HTTP-version options (`--cacert`, `-k`, `--http2`...).
    var connection = ConnectionOptions()
    /// `-i`: the response head goes to standard output before the body.
    var includeHead = false
    /// `-I`: a HEAD request whose head is printed.
    var headOnly = false
    /// `-D FILE`: where response heads are written (`-` for standard output).
    var dumpHeader: String?
    /// `-s`: no progress and no error messages (unless `-S`).
    var silent = false
    /// `-S`: error messages even with `-s`.
    var showError = false
    /// `--no-progress-meter`: no progress bar, errors still shown.
    var noProgress = false
    /// `--retry N`: retries of transient failures.
    var retries = 0
    /// `--retry-delay SECONDS`: the first wait before a retry (doubling after); nil for 1 s.
    var retryDelay: Double?
    /// `--retry-max-time SECONDS`: no retry starts after this long.
    var retryMaxTime: Double?
    /// `--retry-all-errors`.
    var retryAllErrors = false
    /// `--retry-connrefused`.
    var retryConnectionRefused = false
    /// `-w FORMAT`: printed to standard output once each transfer is done.
    var writeOut: WriteOut?
    /// `--events`: an event stream is printed event by event and reconnected even when standard
    /// output is not a terminal; nil decides by the terminal.
    var events: Bool?
    /// Whether an event-stream response is reconnected when its connection ends (`--no-reconnect`: no).
    var reconnects = true
    /// `-Z`: the transfers run at the same time, at most ``parallelMax``.
    var parallel = false
    /// `--parallel-max`.
    var parallelMax = 50
    /// `-x`: the proxy (`""`: none); nil for the environment's.
    var proxy: String?
    /// `--noproxy`.
    var noProxy: String?
    /// `--limit-rate`: bytes per second, both ways.
    var limitRate: Int64?
    /// `--max-filesize`: the largest body accepted.
    var maxFileSize: Int64?
    /// `-b`, `-c`, `-j`: the cookie engine's files.
    var cookies = CookieOptions()
    /// `-u USER` without a password: the user whose password is asked for before the request.
    var passwordPromptUser: String?
    /// `-J`: the file name comes from the response's `Content-Disposition`.
    var remoteHeaderName = false
    /// `-R`: the file gets the response's `Last-Modified` time.
    var remoteTime = false
    /// `--create-dirs`: missing directories of `-o` files are created.
    var createDirectories = false
    /// `-e URL;auto`: each redirect followed carries the URL it came from as its Referer.
    var refererOnRedirects = false
    /// `-z`: the time condition (also sent as `If-Modified-Since` or `If-Unmodified-Since`).
    var timeCondition: TimeCondition?

    /// Whether the arguments ask for help (checked before anything else is validated).
    static func wantsHelp(_ parsed: ParsedArguments) -> Bool {
        parsed.has("help")
    }

    /// Reads a text file for `-H @FILE`, `-K FILE` and `--netrc-file FILE` (`-` is standard input).
    static let readFileFromDisk: @Sendable (String) throws -> String = { path in
        String(decoding: try readDataFromDisk(path), as: UTF8.self)
    }

    /// Reads the bytes of a file for `-d @FILE` and `--json @FILE` (`-` is standard input), at most
    /// one byte past ``RequestData/inMemoryLimit`` (enough to tell that it is too large).
    static let readDataFromDisk: @Sendable (String) throws -> Data = { path in
        let handle = path == "-" ? FileHandle.standardInput : try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
        defer { if path != "-" { try? handle.close() } }
        return try handle.read(upToCount: RequestData.inMemoryLimit + 1) ?? Data()
    }

    /// Parses the arguments of `courier [fetch] ...`: options (with `-K` files read in place), then validation.
    static func parse(
        _ arguments: [String], environment: [String: String],
        readFile: @escaping @Sendable (String) throws -> String = readFileFromDisk,
        readData: @escaping @Sendable (String) throws -> Data = readDataFromDisk
    ) throws(UsageError) -> FetchOptions {
        let parsed = try ArgumentParser.parse(
            arguments, options: options, command: "fetch", expand: configExpander(readFile: readFile, warn: { _ in }))
        return try make(from: parsed, environment: environment, readFile: readFile, readData: readData)
    }

    /// What `-K FILE` stands for: the file's options as arguments.
    static func configExpander(
        readFile: @escaping @Sendable (String) throws -> String, warn: @escaping (String) -> Void
    ) -> (String) throws(UsageError) -> [String] {
        { (path: String) throws(UsageError) -> [String] in
            let text: String
            do {
                text = try readFile(path)
            } catch {
                throw UsageError(
                    "cannot read the config file \(path): \(FileChecks.readableFileProblem(path) ?? "\(error)")", exitCode: .readError)
            }
            return try ConfigFile.arguments(text, name: path == "-" ? "stdin" : path, options: options, warn: warn)
        }
    }

    /// Checks and types parsed arguments.
    ///
    /// - Parameters:
    ///   - environment: `COURIER_DOWNLOAD_STORE`, and `HOME` for `-n`.
    ///   - readFile: Reads `-H @FILE` and netrc files.
    ///   - readData: Reads the files of the data options.
    /// - Throws: ``UsageError`` naming the first problem found.
    static func make(
        from parsed: ParsedArguments, environment: [String: String],
        readFile: @Sendable (String) throws -> String = readFileFromDisk,
        readData: @Sendable (String) throws -> Data = readDataFromDisk
    ) throws(UsageError) -> FetchOptions {
        let (positionalMethod, urlTexts, itemTexts) = try splitPositionals(parsed.positionals, extraURLs: parsed.values("url"))
        let items = try itemTexts.map { (text) throws(UsageError) in try RequestItem.parse(text) }
        var urls = try urlTexts.map { (text) throws(UsageError) in try RequestItem.addingQuery(items, to: try parseURL(text)) }
        guard let firstURL = urls.first else { throw UsageError("missing URL") }
        var options = FetchOptions(url: firstURL)
        try options.readHeaders(parsed, items: items, readFile: readFile)
        options.body = try body(from: parsed, items: items, readData: readData)
        options.headOnly = parsed.has("head")
        if options.headOnly, let body = options.body {
            throw UsageError("-I/--head cannot be used with a request body (\(body.optionName))")
        }
        if parsed.has("get") {
            urls = try urls.map { (url) throws(UsageError) in try Self.withQuery(options.body, added: url) }
            options.body = nil
        }
        options.method = try method(
            positional: positionalMethod, option: parsed.value("request"),
            hasBody: options.body != nil, head: options.headOnly, upload: options.body?.isUpload == true,
            get: parsed.has("get"))
        try options.readAuthentication(parsed, url: firstURL, environment: environment, readFile: readFile)
        try options.readFlags(parsed)
        try options.readLimits(parsed)
        if let format = parsed.value("write-out"), format.hasPrefix("@") {
            do {
                // As curl reads it: the lines of the file, without their line ends.
                options.writeOut = WriteOut(try readFile(String(format.dropFirst())).filter { $0 != "\n" && $0 != "\r" && $0 != "\r\n" })
            } catch {
                throw UsageError("cannot read the -w file \(format.dropFirst()): \(error)", exitCode: .readError)
            }
        }
        if let text = parsed.value("transport") {
            guard let transport = TransportName(rawValue: text.lowercased()) else {
                throw UsageError("--transport must be curl or urlsession, not '\(text)'")
            }
            options.transport = transport
        }
        options.connection = try ConnectionOptions.make(from: parsed, url: firstURL)
        if case .upload(let path)? = options.body { urls = urls.map { Self.addingFileName(of: path, to: $0) } }
        if options.body?.isUpload == true, !options.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            // curl sends a -T body with no Content-Type; the session's fallback label is taken off.
            options.removedHeaders.append("Content-Type")
        }
        options.targets = try TransferTarget.targets(for: urls, parsed: parsed, remoteHeaderName: options.remoteHeaderName)
        options.output = options.targets.first?.output
        options.url = urls[0]
        try options.readResume(parsed)
        try options.readStorage(parsed, environment: environment)
        try options.checkTransport()
        return options
    }

    /// The options of one transfer: its URL and output.
    func forTarget(_ target: TransferTarget) -> FetchOptions {
        var copy = self
        copy.url = target.url
        copy.output = target.output
        return copy
    }

    /// Whether error messages are printed (`-s` hides them unless `-S`).
    var showsErrors: Bool { !silent || showError }

    /// Whether a status of 400 or more fails the transfer (`-f` or `--fail-with-body`).
    var failsOnHTTPError: Bool { failOnHTTPError || failWithBody }
}
