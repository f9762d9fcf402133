import Courier
import Foundation

/// The transports `--transport` can choose.
enum TransportName: String, Equatable, Sendable, CaseIterable {
    case curl
    case urlsession
}

/// Everything `courier [METHOD] URL [ITEM...] [options]` was asked to do, checked and typed.
///
/// ``make(from:environment:readFile:)`` touches no network and reads only the files it is told
/// to through `readFile` (`-H @FILE`), so every usage error can be tested directly.
struct FetchOptions: Equatable, Sendable {
    /// The request method, upper-cased (`GET`; `POST` when a body is given and no method is; `HEAD` with `-I`).
    var method: String = "GET"
    /// The absolute http(s) URL (`http://` is assumed when no scheme is given), with `name==value` items in its query.
    var url: URL
    /// `-H` headers (and `Header:value` items), in order.
    var headers: [HeaderField] = []
    /// The request body, if any.
    var body: RequestBody?
    /// `-o FILE` or `-O`; nil for standard output (no `-o`, or `-o -`).
    var output: String?
    /// `-C` / `-C -`: resumable download through the download store.
    var resumable = false
    /// `--timeout`: idle timeout in seconds.
    var timeout: Double?
    /// `-v`.
    var verbose = false
    /// `-f/--fail`: a status of 400 or more exits with 22 and prints no body.
    var failOnHTTPError = false
    /// `--max-redirs`: 0 follows none.
    var maxRedirects: Int?
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
    /// `-s`: no progress and no error messages (unless `-S`).
    var silent = false
    /// `-S`: error messages even with `-s`.
    var showError = false
    /// `--retry N`: retries of transient failures.
    var retries = 0
    /// `--retry-delay SECONDS`: the first wait before a retry (doubling after); nil for 1 s.
    var retryDelay: Double?
    /// `-w FORMAT`: printed to standard output once the transfer is done.
    var writeOut: WriteOut?
    /// Whether an event-stream response is reconnected when its connection ends (`--no-reconnect`: no).
    var reconnects = true

    /// Whether `-C`'s next argument is its value: `-` (curl's "from the output file's size") or an offset.
    static let isContinueValue: @Sendable (String) -> Bool = { $0 == "-" || (!$0.isEmpty && $0.allSatisfy(\.isNumber)) }

    /// The options `courier [METHOD] URL` accepts.
    static let options: [OptionSpec] =
        [
            OptionSpec(
                "header", short: "H", long: "header", value: "'NAME: VALUE'|@FILE", repeatable: true,
                help: "add a request header (repeatable); @FILE reads one header per line"),
            OptionSpec(
                "data", short: "d", long: "data", value: "DATA|@FILE",
                help: "send DATA as the body, or stream FILE (implies POST)"),
            OptionSpec(
                "json", long: "json", value: "JSON",
                help: "send JSON (checked) with Content-Type and Accept: application/json"),
            OptionSpec(
                "form", short: "F", long: "form", value: "NAME=VALUE|NAME=@FILE", repeatable: true,
                help: "add a multipart form field; @FILE streams a file part (;type=MIME to set its type)"),
            OptionSpec(
                "user", short: "u", long: "user", value: "USER:PASSWORD",
                help: "basic authentication (Authorization: Basic ...)"),
            OptionSpec(
                "include", short: "i", long: "include",
                help: "print the response head (status line and headers) before the body"),
            OptionSpec(
                "head", short: "I", long: "head",
                help: "send a HEAD request and print the response head"),
            OptionSpec(
                "output", short: "o", long: "output", value: "FILE",
                help: "write the body to FILE (streamed; '-' for stdout), with a progress bar on a terminal"),
            OptionSpec(
                "remote-name", short: "O", long: "remote-name",
                help: "write the body to a file named like the URL's last path segment"),
            OptionSpec(
                "continue", short: "C", long: "continue-at", aliases: ["continue"], optionalValue: isContinueValue,
                help: "with -o: resumable (-C or -C -); partial bytes stay in the download store"),
            OptionSpec(
                "location", short: "L", long: "location",
                help: "follow redirects (always on; accepted for curl compatibility)"),
            OptionSpec(
                "max-redirects", long: "max-redirs", aliases: ["max-redirects"], value: "N",
                help: "follow at most N redirects (0: none; default 16)"),
            OptionSpec(
                "retry", long: "retry", value: "N",
                help: "retry up to N times after a timeout, a lost connection or 408/429/500/502/503/504"),
            OptionSpec(
                "retry-delay", long: "retry-delay", value: "SECONDS",
                help: "wait this long before the first retry (doubling after; default 1)"),
            OptionSpec(
                "timeout", long: "timeout", value: "SECONDS",
                help: "fail when the connection is idle this long (fractions allowed)"),
            OptionSpec(
                "fail", short: "f", long: "fail",
                help: "exit with 22 and print no body when the status is 400 or more"),
            OptionSpec(
                "silent", short: "s", long: "silent",
                help: "no progress bar and no error messages"),
            OptionSpec(
                "show-error", short: "S", long: "show-error",
                help: "with -s: still print error messages"),
            OptionSpec(
                "write-out", short: "w", long: "write-out", value: "FORMAT",
                help: "print FORMAT after the transfer: %{http_code}, %{time_total}... (see below)"),
            OptionSpec(
                "no-reconnect", long: "no-reconnect",
                help: "print an event stream (text/event-stream) once: no reconnection when it ends"),
            OptionSpec(
                "compressed", long: "compressed",
                help: "accepted for curl compatibility: gzip and deflate are always asked for and decoded"),
            OptionSpec(
                "verbose", short: "v", long: "verbose",
                help: "print the request and response heads as sent and received, and metrics, to stderr"),
            OptionSpec(
                "store", long: "store", value: "DIR",
                help: "with -C: the download store directory (or set COURIER_DOWNLOAD_STORE)"),
            OptionSpec(
                "cache", long: "cache", value: "DIR",
                help: "HTTP cache (RFC 9111) in DIR: fresh responses are served from it, stale ones revalidated"),
            OptionSpec(
                "transport", long: "transport", value: "curl|urlsession",
                help: "choose the transport (default: libcurl on Linux)"),
        ] + ConnectionOptions.options + [
            OptionSpec(
                "request", short: "X", long: "request", value: "METHOD",
                help: "the request method (same as the METHOD argument)"),
            OptionSpec("help", short: "h", long: "help", help: "show this help"),
        ]

    /// Whether the arguments ask for help (checked before anything else is validated).
    static func wantsHelp(_ parsed: ParsedArguments) -> Bool {
        parsed.has("help")
    }

    /// Reads a file for `-H @FILE`.
    static let readFileFromDisk: @Sendable (String) throws -> String = { path in
        try String(contentsOfFile: path, encoding: .utf8)
    }

    /// Checks and types parsed arguments.
    ///
    /// - Parameters:
    ///   - environment: Only `COURIER_DOWNLOAD_STORE` is read.
    ///   - readFile: Reads the files of `-H @FILE`.
    /// - Throws: ``UsageError`` naming the first problem found.
    static func make(
        from parsed: ParsedArguments, environment: [String: String],
        readFile: @Sendable (String) throws -> String = readFileFromDisk
    ) throws(UsageError) -> FetchOptions {
        let (positionalMethod, urlText, itemTexts) = try splitPositionals(parsed.positionals)
        let items = try itemTexts.map { (text) throws(UsageError) in try RequestItem.parse(text) }
        var url = try parseURL(urlText)
        url = try RequestItem.addingQuery(items, to: url)
        var options = FetchOptions(url: url)
        options.headers = try headers(from: parsed, readFile: readFile) + items.compactMap(\.header)
        options.body = try body(from: parsed, items: items)
        options.headOnly = parsed.has("head")
        if options.headOnly, let body = options.body {
            throw UsageError("-I/--head cannot be used with a request body (\(body.optionName))")
        }
        options.method = try method(
            positional: positionalMethod, option: parsed.value("request"),
            hasBody: options.body != nil, head: options.headOnly)
        try Self.addBasicAuthorization(user: parsed.value("user"), to: &options.headers)
        options.output = try output(from: parsed, url: url)
        options.resumable = parsed.has("continue")
        if let offset = parsed.value("continue"), offset != "-" {
            throw UsageError("-C \(offset): only '-C -' (or -C) is supported: courier continues from its download store, not from an offset")
        }
        options.verbose = parsed.has("verbose")
        options.failOnHTTPError = parsed.has("fail")
        options.reconnects = !parsed.has("no-reconnect")
        options.includeHead = parsed.has("include") || options.headOnly
        options.silent = parsed.has("silent")
        options.showError = parsed.has("show-error")
        options.timeout = try positiveSeconds(parsed.value("timeout"), option: "--timeout")
        options.retryDelay = try positiveSeconds(parsed.value("retry-delay"), option: "--retry-delay", allowsZero: true)
        options.maxRedirects = try count(parsed.value("max-redirects"), option: "--max-redirs")
        options.retries = try count(parsed.value("retry"), option: "--retry") ?? 0
        if let format = parsed.value("write-out") { options.writeOut = WriteOut(format) }
        if let text = parsed.value("transport") {
            guard let transport = TransportName(rawValue: text.lowercased()) else {
                throw UsageError("--transport must be curl or urlsession, not '\(text)'")
            }
            options.transport = transport
        }
        options.connection = try ConnectionOptions.make(from: parsed, url: url)
        if options.resumable {
            guard options.output != nil else { throw UsageError("-C/--continue-at needs -o FILE (a download to resume; not standard output)") }
            guard options.body == nil else {
                throw UsageError("-C/--continue-at cannot be used with a request body (\(options.body?.optionName ?? "-d"))")
            }
        }
        if let store = parsed.value("store") {
            guard options.resumable else { throw UsageError("--store only applies to resumable downloads (-C -o FILE)") }
            guard !store.isEmpty else { throw UsageError("--store needs a directory") }
            options.storeDirectory = store
        } else if let store = environment["COURIER_DOWNLOAD_STORE"], !store.isEmpty {
            options.storeDirectory = store
        }
        if let cache = parsed.value("cache") {
            guard !cache.isEmpty else { throw UsageError("--cache needs a directory") }
            options.cacheDirectory = cache
        }
        return options
    }

    /// Parses the arguments of `courier [fetch] ...`: options, then validation.
    static func parse(
        _ arguments: [String], environment: [String: String],
        readFile: @Sendable (String) throws -> String = readFileFromDisk
    ) throws(UsageError) -> FetchOptions {
        try make(from: ArgumentParser.parse(arguments, options: options, command: "fetch"), environment: environment, readFile: readFile)
    }

    /// Whether error messages are printed (`-s` hides them unless `-S`).
    var showsErrors: Bool { !silent || showError }

    // MARK: Pieces

    /// `[METHOD] URL [ITEM...]`: the method when the first of two or more arguments looks like one,
    /// the URL, and the HTTPie-style items after it.
    static func splitPositionals(_ positionals: [String]) throws(UsageError) -> (method: String?, url: String, items: [String]) {
        guard let first = positionals.first else { throw UsageError("missing URL") }
        if positionals.count >= 2, looksLikeMethod(first) {
            return (first, positionals[1], Array(positionals.dropFirst(2)))
        }
        return (nil, first, Array(positionals.dropFirst()))
    }

    /// Whether `text` can be a method: a token of letters (and `-`/`_`), such as `GET` or `PROPFIND`.
    static func looksLikeMethod(_ text: String) -> Bool {
        !text.isEmpty
            && text.unicodeScalars.allSatisfy { scalar in
                ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || scalar == "-" || scalar == "_"
            }
    }

    /// The method from the positional argument and `-X`, which must agree; `HEAD` with `-I`,
    /// `POST` when there is a body and no method was given, else `GET`.
    static func method(positional: String?, option: String?, hasBody: Bool, head: Bool = false) throws(UsageError) -> String {
        if let option, !Token.isToken(option) {
            throw UsageError("-X: '\(option)' is not a valid method")
        }
        let given = [positional, option].compactMap { $0?.uppercased() }
        if given.count == 2, given[0] != given[1] {
            throw UsageError("two different methods given: '\(given[0])' and '\(given[1])'")
        }
        if head {
            if let other = given.first, other != "HEAD" { throw UsageError("-I/--head sends HEAD, but the method given is '\(other)'") }
            return "HEAD"
        }
        return given.first ?? (hasBody ? "POST" : "GET")
    }

    /// `-u USER:PASSWORD` as an `Authorization: Basic` header, unless `headers` has one already.
    static func addBasicAuthorization(user: String?, to headers: inout [HeaderField]) throws(UsageError) {
        guard let user else { return }
        guard let colon = user.firstIndex(of: ":") else {
            throw UsageError("-u needs USER:PASSWORD (courier does not ask for a password)")
        }
        guard !headers.contains(where: { $0.name.lowercased() == "authorization" }) else { return }
        let header = HTTPHeader.authorization(username: String(user[..<colon]), password: String(user[user.index(after: colon)...]))
        headers.append(HeaderField(name: header.name, value: header.value))
    }

    /// The `-H` headers, `-H @FILE` read line by line (blank lines and `#` comments skipped).
    static func headers(from parsed: ParsedArguments, readFile: (String) throws -> String) throws(UsageError) -> [HeaderField] {
        var headers: [HeaderField] = []
        for value in parsed.values("header") {
            guard value.hasPrefix("@") else {
                headers.append(try HeaderField.parse(value))
                continue
            }
            let path = String(value.dropFirst())
            guard !path.isEmpty else { throw UsageError("-H @FILE needs a file name after '@'") }
            let text: String
            do {
                text = try readFile(path)
            } catch {
                throw UsageError(
                    "Failed to read the header file \(path): \(FileChecks.readableFileProblem(path) ?? "\(error)")",
                    exitCode: .readError)
            }
            for line in text.split(whereSeparator: \.isNewline) {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                headers.append(try HeaderField.parse(trimmed))
            }
        }
        return headers
    }

    /// The body from `-d`, `--json`, `-F` and `name=value` items, of which at most one kind may be given.
    static func body(from parsed: ParsedArguments, items: [RequestItem] = []) throws(UsageError) -> RequestBody? {
        let data = parsed.value("data")
        let json = parsed.value("json")
        let form = parsed.values("form")
        let fields = items.filter(\.isJSONField)
        let given = [
            data.map { _ in "-d" }, json.map { _ in "--json" }, form.isEmpty ? nil : "-F",
            fields.isEmpty ? nil : "NAME=VALUE items",
        ].compactMap { $0 }
        if given.count > 1 {
            throw UsageError("\(given[0]) and \(given[1]) cannot be used together (a request has one body)")
        }
        if let data {
            guard data.hasPrefix("@") else { return .data(data) }
            let path = String(data.dropFirst())
            guard !path.isEmpty else { throw UsageError("-d @FILE needs a file name after '@'") }
            return .file(path: path)
        }
        if let json {
            do {
                _ = try JSON(parsing: json)
            } catch {
                throw UsageError("--json: not valid JSON: \(error.message)")
            }
            return .json(json)
        }
        if !form.isEmpty {
            return .form(try form.map { (text) throws(UsageError) in try FormField.parse(text) })
        }
        if !fields.isEmpty {
            return .json(RequestItem.jsonObject(fields))
        }
        return nil
    }

    /// `-o FILE`, or with `-O` the URL's last path segment (``remoteName(of:)``); nil for standard output.
    static func output(from parsed: ParsedArguments, url: URL) throws(UsageError) -> String? {
        if parsed.has("remote-name") {
            guard parsed.value("output") == nil else { throw UsageError("-o and -O cannot be used together (choose one file name)") }
            guard let name = remoteName(of: url) else {
                throw UsageError(
                    "Remote file name has no length: -O needs a URL ending in a file name (use -o FILE)",
                    exitCode: .writeError)
            }
            return name
        }
        guard let path = parsed.value("output") else { return nil }
        guard !path.isEmpty else { throw UsageError("-o needs a file name") }
        return path == "-" ? nil : path
    }

    /// `-O`'s file name: the last segment of the URL's path as written (percent-escapes kept, as
    /// curl keeps them, so `%2F` never becomes a separator), made safe by the library's rule for
    /// download names (no separators, control characters or leading dots, at most 255 bytes); nil
    /// when nothing usable is left (`http://host/`, `/..`), which curl reports as a name with no length.
    static func remoteName(of url: URL) -> String? {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        let segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        return SuggestedFileName.sanitize(segment)
    }

    /// A number of seconds: positive (or zero when allowed), finite.
    static func positiveSeconds(_ text: String?, option: String, allowsZero: Bool = false) throws(UsageError) -> Double? {
        guard let text else { return nil }
        guard let seconds = Double(text), seconds.isFinite, seconds > 0 || (allowsZero && seconds == 0) else {
            throw UsageError("\(option) needs a \(allowsZero ? "" : "positive ")number of seconds, not '\(text)'")
        }
        return seconds
    }

    /// A whole number of 0 or more.
    static func count(_ text: String?, option: String) throws(UsageError) -> Int? {
        guard let text else { return nil }
        guard let count = Int(text), count >= 0 else {
            throw UsageError("\(option) needs a whole number of 0 or more, not '\(text)'")
        }
        return count
    }

    /// An absolute http(s) URL with a host; `http://` is put in front of a URL without a scheme.
    ///
    /// - Throws: ``UsageError`` with exit status 1 for a scheme other than http and https
    ///   (`htp://host`, `htps:/host`, `ftp://host`), 3 for a URL that is malformed.
    static func parseURL(_ text: String) throws(UsageError) -> URL {
        if let scheme = explicitScheme(text), !["http", "https"].contains(scheme.lowercased()) {
            throw UsageError(
                "Protocol \"\(scheme)\" not supported (courier speaks http://, https://, ws:// and wss://)", exitCode: .unsupportedProtocol)
        }
        let candidate = explicitScheme(text) == nil ? "http://" + text : text
        guard let url = URL(string: candidate), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw UsageError(
                "URL rejected: '\(text)' is not a valid URL (expected http://host/path or https://host/path)",
                exitCode: .malformedURL)
        }
        return url
    }

    /// The scheme `text` starts with: letters, digits, `+`, `-` or `.` after a letter, then `:/`
    /// (`htp://x`, `htps:/x`); nil when there is none (`localhost:8080/x` has a port, not a scheme).
    static func explicitScheme(_ text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let scheme = text[..<colon]
        guard let first = scheme.first, first.isASCII, first.isLetter,
            scheme.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }),
            text[text.index(after: colon)...].hasPrefix("/")
        else { return nil }
        return String(scheme)
    }
}
