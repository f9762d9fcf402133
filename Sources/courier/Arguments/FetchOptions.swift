import Courier
import Foundation

/// The transports `--transport` can choose.
enum TransportName: String, Equatable, Sendable, CaseIterable {
    case curl
    case urlsession
}

/// Everything `courier [METHOD] URL [options]` was asked to do, checked and typed.
///
/// ``parse(_:environment:)`` is pure (it reads no files and touches no network), so every usage
/// error can be tested directly.
struct FetchOptions: Equatable, Sendable {
    /// The request method, upper-cased (`GET`, or `POST` when a body is given and no method is).
    var method: String = "GET"
    /// The absolute http(s) URL (`http://` is assumed when no scheme is given).
    var url: URL
    /// `-H` headers, in order.
    var headers: [HeaderField] = []
    /// The request body, if any.
    var body: RequestBody?
    /// `-o FILE`; nil for standard output (no `-o`, or `-o -`).
    var output: String?
    /// `-C`: resumable download through the download store.
    var resumable = false
    /// `--timeout`: idle timeout in seconds.
    var timeout: Double?
    /// `-v`.
    var verbose = false
    /// `--fail`: a status of 400 or more exits with 5 and prints no body.
    var failOnHTTPError = false
    /// `--max-redirects`: 0 follows none.
    var maxRedirects: Int?
    /// The download store directory (`--store`, else `COURIER_DOWNLOAD_STORE`); nil for the library default.
    var storeDirectory: String?
    /// `--transport`.
    var transport: TransportName?
    /// The TLS and HTTP-version options (`--cacert`, `-k`, `--http2`...).
    var connection = ConnectionOptions()

    /// The options `courier [METHOD] URL` accepts.
    static let options: [OptionSpec] = [
        OptionSpec("header", short: "H", long: "header", value: "'NAME: VALUE'", repeatable: true,
                   help: "add a request header (repeatable)"),
        OptionSpec("data", short: "d", long: "data", value: "DATA|@FILE",
                   help: "send DATA as the body, or stream FILE (implies POST)"),
        OptionSpec("json", long: "json", value: "JSON",
                   help: "send JSON (checked) with Content-Type and Accept: application/json"),
        OptionSpec("form", short: "F", long: "form", value: "NAME=VALUE|NAME=@FILE", repeatable: true,
                   help: "add a multipart form field; @FILE streams a file part (;type=MIME to set its type)"),
        OptionSpec("output", short: "o", long: "output", value: "FILE",
                   help: "write the body to FILE (streamed; '-' for stdout), with a progress bar on a terminal"),
        OptionSpec("continue", short: "C", long: "continue",
                   help: "with -o: keep partial bytes in the download store and continue from them next time"),
        OptionSpec("timeout", long: "timeout", value: "SECONDS",
                   help: "fail when the connection is idle this long (fractions allowed)"),
        OptionSpec("verbose", short: "v", long: "verbose",
                   help: "print request and response heads and transfer metrics to stderr"),
        OptionSpec("fail", short: "f", long: "fail",
                   help: "exit with 5 and print no body when the status is 400 or more"),
        OptionSpec("max-redirects", long: "max-redirects", value: "N",
                   help: "follow at most N redirects (0: none; default 16)"),
        OptionSpec("store", long: "store", value: "DIR",
                   help: "with -C: the download store directory (or set COURIER_DOWNLOAD_STORE)"),
        OptionSpec("transport", long: "transport", value: "curl|urlsession",
                   help: "choose the transport (default: libcurl on Linux)"),
    ] + ConnectionOptions.options + [
        OptionSpec("request", short: "X", long: "request", value: "METHOD",
                   help: "the request method (same as the METHOD argument)"),
        OptionSpec("help", short: "h", long: "help", help: "show this help"),
    ]

    /// Whether the arguments ask for help (checked before anything else is validated).
    static func wantsHelp(_ parsed: ParsedArguments) -> Bool {
        parsed.has("help")
    }

    /// Checks and types parsed arguments.
    ///
    /// - Parameter environment: Only `COURIER_DOWNLOAD_STORE` is read.
    /// - Throws: ``UsageError`` naming the first problem found.
    static func make(from parsed: ParsedArguments, environment: [String: String]) throws(UsageError) -> FetchOptions {
        let (positionalMethod, urlText) = try splitPositionals(parsed.positionals)
        guard let url = parseURL(urlText) else {
            throw UsageError("invalid URL '\(urlText)' (expected http://host/path or https://host/path)")
        }
        var options = FetchOptions(url: url)
        options.headers = try parsed.values("header").map { (text) throws(UsageError) in try HeaderField.parse(text) }
        options.body = try body(from: parsed)
        options.method = try method(positional: positionalMethod, option: parsed.value("request"), hasBody: options.body != nil)
        options.output = try parsed.value("output").map { (path) throws(UsageError) -> String in
            guard !path.isEmpty else { throw UsageError("-o needs a file name") }
            return path
        }
        if options.output == "-" { options.output = nil }
        options.resumable = parsed.has("continue")
        options.verbose = parsed.has("verbose")
        options.failOnHTTPError = parsed.has("fail")
        if let text = parsed.value("timeout") {
            guard let seconds = Double(text), seconds.isFinite, seconds > 0 else {
                throw UsageError("--timeout needs a positive number of seconds, not '\(text)'")
            }
            options.timeout = seconds
        }
        if let text = parsed.value("max-redirects") {
            guard let count = Int(text), count >= 0 else {
                throw UsageError("--max-redirects needs a whole number of 0 or more, not '\(text)'")
            }
            options.maxRedirects = count
        }
        if let text = parsed.value("transport") {
            guard let transport = TransportName(rawValue: text.lowercased()) else {
                throw UsageError("--transport must be curl or urlsession, not '\(text)'")
            }
            options.transport = transport
        }
        options.connection = try ConnectionOptions.make(from: parsed, url: url)
        if options.resumable {
            guard options.output != nil else { throw UsageError("-C/--continue needs -o FILE (a download to resume; not standard output)") }
            guard options.body == nil else { throw UsageError("-C/--continue cannot be used with a request body (\(options.body?.optionName ?? "-d"))") }
        }
        if let store = parsed.value("store") {
            guard options.resumable else { throw UsageError("--store only applies to resumable downloads (-C -o FILE)") }
            guard !store.isEmpty else { throw UsageError("--store needs a directory") }
            options.storeDirectory = store
        } else if let store = environment["COURIER_DOWNLOAD_STORE"], !store.isEmpty {
            options.storeDirectory = store
        }
        return options
    }

    /// Parses the arguments of `courier [fetch] ...`: options, then validation.
    static func parse(_ arguments: [String], environment: [String: String]) throws(UsageError) -> FetchOptions {
        try make(from: ArgumentParser.parse(arguments, options: options, command: "fetch"), environment: environment)
    }

    // MARK: Pieces

    /// `[METHOD] URL`: one or two positional arguments.
    static func splitPositionals(_ positionals: [String]) throws(UsageError) -> (method: String?, url: String) {
        switch positionals.count {
        case 0:
            throw UsageError("missing URL")
        case 1:
            return (nil, positionals[0])
        case 2:
            guard looksLikeMethod(positionals[0]) else {
                throw UsageError("unexpected argument '\(positionals[1])' (expected [METHOD] URL; one URL per call)")
            }
            return (positionals[0], positionals[1])
        default:
            throw UsageError("unexpected argument '\(positionals[2])' (expected [METHOD] URL)")
        }
    }

    /// Whether `text` can be a method: a token of letters (and `-`/`_`), such as `GET` or `PROPFIND`.
    static func looksLikeMethod(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) || scalar == "-" || scalar == "_"
        }
    }

    /// The method from the positional argument and `-X`, which must agree; `POST` when there is a
    /// body and no method was given, else `GET`.
    static func method(positional: String?, option: String?, hasBody: Bool) throws(UsageError) -> String {
        if let option, !Token.isToken(option) {
            throw UsageError("-X: '\(option)' is not a valid method")
        }
        let given = [positional, option].compactMap { $0?.uppercased() }
        if given.count == 2, given[0] != given[1] {
            throw UsageError("two different methods given: '\(given[0])' and '\(given[1])'")
        }
        return given.first ?? (hasBody ? "POST" : "GET")
    }

    /// The body from `-d`, `--json` and `-F`, of which at most one kind may be given.
    static func body(from parsed: ParsedArguments) throws(UsageError) -> RequestBody? {
        let data = parsed.value("data")
        let json = parsed.value("json")
        let form = parsed.values("form")
        let given = [data.map { _ in "-d" }, json.map { _ in "--json" }, form.isEmpty ? nil : "-F"].compactMap { $0 }
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
        return nil
    }

    /// An absolute http(s) URL with a host; `http://` is put in front of a URL without a scheme.
    static func parseURL(_ text: String) -> URL? {
        let candidate = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: candidate), let scheme = url.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty else { return nil }
        return url
    }
}
