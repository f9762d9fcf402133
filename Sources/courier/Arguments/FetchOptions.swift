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

    // MARK: Reading the parsed arguments

    private mutating func readHeaders(_ parsed: ParsedArguments, items: [RequestItem], readFile: (String) throws -> String) throws(UsageError) {
        let given = try Self.headers(from: parsed, readFile: readFile) + items.compactMap(\.header)
        // curl's `-H 'Name:'` removes the header (its own included); `-H 'Name;'` sends it empty.
        removedHeaders = given.filter(\.removes).map(\.name)
        headers = given.filter { !$0.removes }
        if let agent = parsed.value("user-agent") { userAgent = agent }
        if let referer = parsed.value("referer") {
            let auto = referer.hasSuffix(";auto")
            let value = auto ? String(referer.dropLast(";auto".count)) : referer
            refererOnRedirects = auto
            if !value.isEmpty { headers.append(try HeaderField.parse("Referer: \(value)")) }
        }
        if let range = parsed.value("range") {
            guard !range.isEmpty, range.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "," }) else {
                throw UsageError("-r/--range: '\(range)' is not a byte range (e.g. 0-499, 500-, -500)")
            }
            headers.append(HeaderField(name: "Range", value: "bytes=\(range)"))
        }
        if let text = parsed.value("time-cond") {
            let condition = try TimeCondition(text)
            timeCondition = condition
            headers.append(condition.header)
        }
    }

    private mutating func readAuthentication(
        _ parsed: ParsedArguments, url: URL, environment: [String: String], readFile: (String) throws -> String
    ) throws(UsageError) {
        if let token = parsed.value("oauth2-bearer") {
            headers.append(try HeaderField.parse("Authorization: Bearer \(token)"))
        }
        if let user = parsed.value("user") {
            if user.contains(":") {
                try Self.addBasicAuthorization(user: user, to: &headers)
            } else if !headers.contains(where: { $0.name.lowercased() == "authorization" }) {
                passwordPromptUser = user
            }
            return
        }
        let netrcFile = parsed.value("netrc-file")
        guard parsed.has("netrc") || parsed.has("netrc-optional") || netrcFile != nil else { return }
        let path = netrcFile ?? ((environment["HOME"] ?? NSHomeDirectory()) + "/.netrc")
        let text: String
        do {
            text = try readFile(path)
        } catch {
            // curl goes on without credentials when the file cannot be read.
            return
        }
        let login = url.user
        guard let entry = Netrc(text).entry(for: url.host ?? "", user: login), let user = entry.login ?? login else { return }
        try Self.addBasicAuthorization(user: "\(user):\(entry.password ?? "")", to: &headers)
    }

    private mutating func readFlags(_ parsed: ParsedArguments) throws(UsageError) {
        verbose = parsed.has("verbose")
        failOnHTTPError = parsed.has("fail")
        failWithBody = parsed.has("fail-with-body")
        if failOnHTTPError, failWithBody { throw UsageError("-f/--fail and --fail-with-body cannot be used together (choose one)") }
        failEarly = parsed.has("fail-early")
        reconnects = !parsed.has("no-reconnect")
        events = parsed.has("events") ? true : nil
        includeHead = parsed.has("include") || headOnly
        dumpHeader = try Self.nonEmpty(parsed.value("dump-header"), "-D/--dump-header needs a file name ('-' for stdout)")
        silent = parsed.has("silent")
        showError = parsed.has("show-error")
        noProgress = parsed.has("no-progress-meter")
        compressed = parsed.has("compressed")
        locationTrusted = parsed.has("location-trusted")
        followsRedirects = parsed.has("location") || locationTrusted
        parallel = parsed.has("parallel")
        remoteHeaderName = parsed.has("remote-header-name")
        remoteTime = parsed.has("remote-time")
        createDirectories = parsed.has("create-dirs")
        retryAllErrors = parsed.has("retry-all-errors")
        retryConnectionRefused = parsed.has("retry-connrefused")
        if let format = parsed.value("write-out") { writeOut = WriteOut(format) }
        cookies = try CookieOptions(parsed)
        if let text = parsed.value("proto") { protocols = try ProtocolList.parse(text, option: "--proto") }
        if let text = parsed.value("proto-redir") { redirectProtocols = try ProtocolList.parse(text, option: "--proto-redir") }
        proxy = parsed.value("proxy")
        noProxy = parsed.value("noproxy")
    }

    private mutating func readLimits(_ parsed: ParsedArguments) throws(UsageError) {
        timeout = try Self.positiveSeconds(parsed.value("timeout"), option: "--timeout")
        maxTime = try Self.positiveSeconds(parsed.value("max-time"), option: "-m/--max-time")
        connectTimeout = try Self.positiveSeconds(parsed.value("connect-timeout"), option: "--connect-timeout")
        retryDelay = try Self.positiveSeconds(parsed.value("retry-delay"), option: "--retry-delay", allowsZero: true)
        retryMaxTime = try Self.positiveSeconds(parsed.value("retry-max-time"), option: "--retry-max-time", allowsZero: true)
        maxRedirects = try Self.count(parsed.value("max-redirects"), option: "--max-redirs")
        retries = try Self.count(parsed.value("retry"), option: "--retry") ?? 0
        if let text = parsed.value("parallel-max") {
            guard let count = Int(text), (1...300).contains(count) else {
                throw UsageError("--parallel-max needs a number from 1 to 300, not '\(text)'")
            }
            parallelMax = count
        }
        limitRate = try Self.byteCount(parsed.value("limit-rate"), option: "--limit-rate")
        maxFileSize = try Self.byteCount(parsed.value("max-filesize"), option: "--max-filesize")
    }

    private mutating func readResume(_ parsed: ParsedArguments) throws(UsageError) {
        guard parsed.has("continue") else { return }
        if let value = parsed.value("continue"), value != "-" {
            guard let offset = Int64(value) else { throw UsageError("-C: '\(value)' is not a byte offset") }
            resumeOffset = offset
        } else {
            resumable = true
        }
        if resumable {
            guard output != nil else { throw UsageError("-C/--continue-at needs -o FILE (a download to resume; not standard output)") }
            if remoteHeaderName { throw UsageError("-C - and -J/--remote-header-name cannot be used together (the file's name is not known before)") }
        }
        if let body { throw UsageError("-C/--continue-at cannot be used with a request body (\(body.optionName))") }
        if targets.count > 1, resumable {
            throw UsageError("-C - takes one URL (each download is resumed from the store by its URL: run one command per file)")
        }
    }

    private mutating func readStorage(_ parsed: ParsedArguments, environment: [String: String]) throws(UsageError) {
        if let store = parsed.value("store") {
            guard resumable else { throw UsageError("--store only applies to resumable downloads (-C - -o FILE)") }
            guard !store.isEmpty else { throw UsageError("--store needs a directory") }
            storeDirectory = store
        } else if let store = environment["COURIER_DOWNLOAD_STORE"], !store.isEmpty {
            storeDirectory = store
        }
        if let cache = parsed.value("cache") {
            guard !cache.isEmpty else { throw UsageError("--cache needs a directory") }
            cacheDirectory = cache
        }
    }

    /// What only the curl transport can do.
    private func checkTransport() throws(UsageError) {
        guard transport == .urlsession else { return }
        let curlOnly = [
            ("-x/--proxy", proxy != nil), ("--noproxy", noProxy != nil), ("--connect-timeout", connectTimeout != nil),
            ("--limit-rate", limitRate != nil),
        ]
        if let (name, _) = curlOnly.first(where: \.1) {
            throw UsageError("\(name) needs the curl transport (--transport urlsession cannot honour it)")
        }
    }
}

/// `-b`, `-c` and `-j`: the cookie engine's inputs and output.
struct CookieOptions: Equatable, Sendable {
    /// Cookie files to read (`-b FILE`; `-b ''` turns the engine on with none).
    var files: [String] = []
    /// Literal `-b 'NAME=VALUE; ...'` strings, sent after the engine's cookies.
    var literal: [String] = []
    /// `-c FILE`: where every cookie is written at the end (`-` for standard output).
    var jar: String?
    /// `-j`: session cookies of the files are left out.
    var junkSessionCookies = false

    /// Whether cookies are kept and sent across redirects and URLs (a file was read or a jar is written).
    var engineOn: Bool { !files.isEmpty || jar != nil }

    init() {}

    init(_ parsed: ParsedArguments) throws(UsageError) {
        for value in parsed.values("cookie") {
            if value.contains("=") { literal.append(value) } else { files.append(value) }
        }
        jar = parsed.value("cookie-jar")
        if jar?.isEmpty == true { throw UsageError("-c/--cookie-jar needs a file name ('-' for stdout)") }
        junkSessionCookies = parsed.has("junk-session-cookies")
    }
}
