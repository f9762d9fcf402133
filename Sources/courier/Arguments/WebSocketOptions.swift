import Courier
import Foundation

/// Everything `courier ws://HOST/PATH [options]` (or `wss://`) was asked to do, checked and typed.
///
/// The command line is read with the request's options plus the WebSocket's own
/// (``ownOptions``), so that an option of the request that means nothing for a WebSocket (`-d`,
/// `-o`, `--http2`...) is named in a clear error rather than called unknown. Like
/// ``FetchOptions/make(from:environment:readFile:)``, ``make(from:readFile:)`` touches no network.
struct WebSocketOptions: Equatable, Sendable {
    /// The `ws://` or `wss://` URL.
    var url: URL
    /// `-H` headers (and `-u`'s Authorization), in order: sent with the opening handshake.
    var headers: [HeaderField] = []
    /// `--subprotocol`: the subprotocols offered (Sec-WebSocket-Protocol), in order of preference.
    var subprotocols: [String] = []
    /// `--binary`: lines of standard input go as binary messages, and binary messages are written
    /// to standard output as their bytes.
    var binary = false
    /// `--keep-open`: the end of standard input does not close the WebSocket.
    var keepOpen = false
    /// `--no-compression`: permessage-deflate is not offered.
    var compression = true
    /// `--ping-interval SECONDS`: keep-alive pings this often; nil for the library's default (20 s).
    var pingInterval: Double?
    /// `-v`: the handshake, the subprotocol and the close are described on standard error.
    var verbose = false
    /// `-s`: no error messages (unless `-S`).
    var silent = false
    /// `-S`: error messages even with `-s`.
    var showError = false
    /// `--transport`.
    var transport: TransportName?
    /// The TLS options (`--cacert`, `-k`, `--cert`...).
    var connection = ConnectionOptions()

    /// The options only a WebSocket has.
    static let ownOptions: [OptionSpec] = [
        OptionSpec(
            "binary", long: "binary",
            help: "send stdin's lines as binary messages; write binary messages as raw bytes"),
        OptionSpec(
            "subprotocol", long: "subprotocol", value: "NAME", repeatable: true,
            help: "offer this subprotocol (repeatable, in order of preference)"),
        OptionSpec(
            "keep-open", long: "keep-open",
            help: "at the end of stdin, keep printing messages until the server closes (or Ctrl-C)"),
        OptionSpec(
            "no-compression", long: "no-compression",
            help: "do not offer permessage-deflate compression"),
        OptionSpec(
            "ping-interval", long: "ping-interval", value: "SECONDS",
            help: "send a ping this often (default 20); a server silent 30 s after one ends the connection (exit 28)"),
    ]

    /// The options `courier ws://...` accepts, in the order its help lists them.
    static let options: [OptionSpec] =
        ownOptions
        + FetchOptions.options.filter { accepted.contains($0.id) }.map { option in
            switch option.id {
            case "verbose":
                OptionSpec("verbose", short: "v", long: "verbose", help: "describe the connection, subprotocol, compression and close on stderr")
            case "silent": OptionSpec("silent", short: "s", long: "silent", help: "no error messages")
            case "http1.1": OptionSpec("http1.1", long: "http1.1", help: "accepted: a WebSocket's handshake is always HTTP/1.1")
            default: option
            }
        }

    /// The request options that also apply to a WebSocket.
    private static let accepted: Set<String> = Set(
        [
            "header", "user", "verbose", "silent", "show-error", "transport", "help",
            "http1.1",
        ] + ConnectionOptions.options.map(\.id)
    )
    .subtracting(["http2", "http2-prior-knowledge", "http3", "http3-only"])

    /// Why some request options mean nothing for a WebSocket, for the usage error.
    private static let notApplicableReasons: [String: String] = {
        var reasons: [String: String] = [:]
        for id in ["data", "data-binary", "data-raw", "data-urlencode", "json", "form", "request", "upload-file", "get"] {
            reasons[id] = ": the messages to send are the lines of standard input"
        }
        for id in ["output", "remote-name", "continue", "store", "remote-name-all", "output-dir"] {
            reasons[id] = ": messages are written to standard output (redirect it)"
        }
        for id in ["http2", "http2-prior-knowledge", "http3", "http3-only"] { reasons[id] = ": its handshake is HTTP/1.1" }
        return reasons
    }()

    /// What the command line is parsed with: the request's options and the WebSocket's own.
    static let parserOptions: [OptionSpec] = FetchOptions.options + ownOptions

    /// Whether `text` is a `ws://` or `wss://` URL (any case).
    static func isWebSocketURL(_ text: String) -> Bool {
        let lowered = text.lowercased()
        return lowered.hasPrefix("ws://") || lowered.hasPrefix("wss://")
    }

    /// Whether the command line is a WebSocket's: one of its arguments (not an option's value) is a
    /// `ws://` or `wss://` URL. When the line cannot be parsed, any argument that is such a URL
    /// counts, so that the WebSocket command reports the mistake.
    static func isWebSocketCommand(_ arguments: [String]) -> Bool {
        guard let parsed = try? ArgumentParser.parse(arguments, options: parserOptions, command: nil) else {
            return arguments.contains(where: isWebSocketURL)
        }
        return parsed.positionals.contains(where: isWebSocketURL)
    }

    /// Parses the arguments of `courier ws://...`: options, then validation.
    static func parse(
        _ arguments: [String],
        readFile: @Sendable (String) throws -> String = FetchOptions.readFileFromDisk
    ) throws(UsageError) -> WebSocketOptions {
        try make(from: ArgumentParser.parse(arguments, options: parserOptions, command: "ws"), readFile: readFile)
    }

    /// Checks and types parsed arguments.
    ///
    /// - Throws: ``UsageError`` naming the first problem found (an option that does not apply
    ///   to a WebSocket, a METHOD or ITEM argument, a malformed URL: exit 3).
    static func make(
        from parsed: ParsedArguments,
        readFile: @Sendable (String) throws -> String = FetchOptions.readFileFromDisk
    ) throws(UsageError) -> WebSocketOptions {
        do {
            return try makeChecked(from: parsed, readFile: readFile)
        } catch {
            // The request's checks name `courier help fetch`; here the help to read is the WebSocket's.
            throw UsageError(error.message, command: "ws", exitCode: error.exitCode)
        }
    }

    private static func makeChecked(
        from parsed: ParsedArguments,
        readFile: @Sendable (String) throws -> String
    ) throws(UsageError) -> WebSocketOptions {
        for occurrence in parsed.options where !accepted.contains(occurrence.id) && !ownOptions.contains(where: { $0.id == occurrence.id }) {
            let name = parserOptions.first { $0.id == occurrence.id }?.displayName ?? occurrence.id
            throw UsageError("\(name) does not apply to a WebSocket (ws:// or wss://)" + (notApplicableReasons[occurrence.id] ?? ""))
        }
        guard let urlText = parsed.positionals.first else { throw UsageError("missing URL") }
        guard isWebSocketURL(urlText) else {
            throw UsageError("'\(urlText)' before the WebSocket URL: a WebSocket has no METHOD (courier ws://HOST/PATH)")
        }
        if parsed.positionals.count > 1 {
            throw UsageError("unexpected argument '\(parsed.positionals[1])' after the WebSocket URL (items and methods are for HTTP requests)")
        }
        var options = WebSocketOptions(url: try parseURL(urlText))
        options.headers = try FetchOptions.headers(from: parsed, readFile: readFile).filter { !$0.removes }
        try FetchOptions.addBasicAuthorization(user: parsed.value("user"), to: &options.headers)
        options.subprotocols = try parsed.values("subprotocol").map { (name) throws(UsageError) in
            guard Token.isToken(name) else { throw UsageError("--subprotocol: '\(name)' is not a valid subprotocol name (an HTTP token)") }
            return name
        }
        options.binary = parsed.has("binary")
        options.compression = !parsed.has("no-compression")
        options.keepOpen = parsed.has("keep-open")
        options.pingInterval = try FetchOptions.positiveSeconds(parsed.value("ping-interval"), option: "--ping-interval")
        options.verbose = parsed.has("verbose")
        options.silent = parsed.has("silent")
        options.showError = parsed.has("show-error")
        if let text = parsed.value("transport") {
            guard let transport = TransportName(rawValue: text.lowercased()) else {
                throw UsageError("--transport must be curl or urlsession, not '\(text)'")
            }
            options.transport = transport
        }
        // The HTTP-version flags are checked against an https URL; a WebSocket's handshake is HTTP/1.1 whatever is given.
        options.connection = try ConnectionOptions.make(from: parsed, url: options.url)
        options.connection.httpVersion = .automatic
        return options
    }

    /// A `ws://` or `wss://` URL with a host.
    ///
    /// - Throws: ``UsageError`` with exit status 3 for a URL that is malformed.
    static func parseURL(_ text: String) throws(UsageError) -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            let host = url.host, !host.isEmpty
        else {
            throw UsageError(
                "URL rejected: '\(text)' is not a valid URL (expected ws://host/path or wss://host/path)",
                exitCode: .malformedURL)
        }
        return url
    }

    /// Whether error messages are printed (`-s` hides them unless `-S`).
    var showsErrors: Bool { !silent || showError }
}
