import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which secrets a cURL description hides: values of the named headers (matched ignoring case)
/// and, with ``hidesOtherSecrets``, a password in the URL and a client certificate's password.
///
/// ```swift
/// print(await request.cURLDescription())                        // credentials hidden
/// print(await request.cURLDescription(redacting: .none))        // everything, to re-run it
/// print(await request.cURLDescription(redacting: CURLRedaction(headers: ["X-Api-Key"])))
/// ```
public struct CURLRedaction: Sendable, Hashable {
    /// The header names whose values are shown as `<redacted>`.
    public var headers: Set<String>
    /// Whether a password in the URL (`user:password@host`) and a client certificate's password
    /// are hidden too.
    public var hidesOtherSecrets: Bool

    /// Hides the values of `headers` (and, with `hidesOtherSecrets`, the other passwords).
    public init(headers: Set<String>, hidesOtherSecrets: Bool = true) {
        self.headers = headers
        self.hidesOtherSecrets = hidesOtherSecrets
    }

    /// The default: `Authorization`, `Cookie` and `Proxy-Authorization` values, and passwords.
    public static let credentials = CURLRedaction(headers: ["Authorization", "Cookie", "Proxy-Authorization"])
    /// Nothing hidden: the command sends exactly what Courier sent.
    public static let none = CURLRedaction(headers: [], hidesOtherSecrets: false)

    /// What a hidden value is shown as.
    static let placeholder = "<redacted>"

    func hides(header name: String) -> Bool {
        headers.contains { $0.caseInsensitiveCompare(name) == .orderedSame }
    }
}

extension Request {
    /// A `curl` command line that sends this request as Courier sent it: method, URL, every
    /// header, cookies from the session's storage, and the body byte for byte.
    ///
    /// The values of `Authorization`, `Cookie` and `Proxy-Authorization` (and passwords in the URL
    /// or of a client certificate) are shown as `<redacted>`, so the description is safe to log;
    /// pass `redacting: .none` for a command that re-sends them.
    ///
    /// ```swift
    /// let request = api.request("orders", method: .post, parameters: order, encoder: .json)
    /// _ = await request.serializingData().response
    /// print(await request.cURLDescription())
    /// // curl -X POST 'https://api.example.com/v2/orders' \
    /// //   -H 'Content-Type: application/json' \
    /// //   …
    /// //   --data-binary '{"item":42}'
    /// ```
    ///
    /// The command describes the last request sent (after adapters and redirects). Before
    /// anything was sent it describes the request as built, before adapters, under a `#` comment
    /// line saying so; if the request cannot even be built, it is only a comment explaining why.
    /// Words are single-quoted for POSIX `sh`. Bodies that are not text (or start with `@`) are
    /// piped in through `printf '%b'`; file uploads are read with `--data-binary @path`.
    public func cURLDescription(redacting redaction: CURLRedaction = .credentials) async -> String {
        withIsolatedEngine { Self.describe($0, redaction: redaction) }
    }

    /// Calls `handler` on `queue` (the session's callback queue by default) with the `curl`
    /// command of the request as first sent (after adapters), once: when the first exchange
    /// starts, or at once if it already did. A request that never reaches the network (it fails
    /// to build or adapt, or is cancelled first) never calls it. Secrets are redacted as in
    /// ``cURLDescription(redacting:)``.
    ///
    /// ```swift
    /// session.request("orders", method: .post, parameters: order, encoder: .json)
    ///     .cURLDescription { command in print(command) }
    ///     .responseDecodable(of: Receipt.self) { response in }
    /// ```
    @discardableResult
    public nonisolated func cURLDescription(
        redacting redaction: CURLRedaction = .credentials, queue: DispatchQueue? = nil,
        calling handler: @escaping @Sendable (String) -> Void
    ) -> Self {
        let queue = queue ?? session.callbackQueue
        engineAccess.perform { engine in
            engine.whenFirstSent { engine in
                let command = Self.describe(engine, redaction: redaction)
                queue.async { handler(command) }
            }
        }
        return self
    }

    private static func describe(_ engine: RequestEngine, redaction: CURLRedaction) -> String {
        if let sent = engine.record.request {
            return CURLCommand(request: sent, engine: engine, redaction: redaction).render()
        }
        do {
            let built = try engine.record.initialRequest ?? engine.source.makeRequest(engine.session)
            return "# Not sent (yet): this is the request as built, before request adapters.\n"
                + CURLCommand(request: built, engine: engine, redaction: redaction).render()
        } catch {
            let reason = "\(CourierError(wrapping: error))".replacingOccurrences(of: "\n", with: " ")
            return "# The request could not be built, so there is no curl command for it: \(reason)"
        }
    }
}

/// The pieces of a curl command line for one `URLRequest`.
struct CURLCommand {
    private enum Body {
        case none
        case data(Data)
        case file(URL)
        case unavailable(String)

        /// Whether curl will send a body.
        var isSent: Bool {
            switch self {
            case .data, .file: true
            case .none, .unavailable: false
            }
        }
    }

    private let request: URLRequest
    private let headers: [(name: String, value: String)]
    private let body: Body
    private let decompresses: Bool
    /// `--http1.1`, `--tlsv1.3`, `--insecure` and the like, from the session's and request's settings.
    private let protocolOptions: [String]

    init(request: URLRequest, engine: RequestEngine, redaction: CURLRedaction = .none) {
        var request = request
        if redaction.hidesOtherSecrets, let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.password != nil
        {
            components.password = CURLRedaction.placeholder
            request.url = components.url ?? url
        }
        self.request = request
        body = Self.body(of: request, engine: engine)
        let configuration = engine.session.configuration
        var fields = request.allHTTPHeaderFields ?? [:]
        // Mirror what the engine adds when sending (see `makeTransportRequest`).
        if request.value(forHTTPHeaderField: "Cookie") == nil, let url = request.url,
            let cookies = configuration.cookies.storage?.cookies(for: url), !cookies.isEmpty
        {
            fields.merge(HTTPCookie.requestHeaderFields(with: cookies)) { current, _ in current }
        }
        let ranged = request.value(forHTTPHeaderField: "Range") != nil
        if ranged, request.value(forHTTPHeaderField: "Accept-Encoding") == nil { fields["Accept-Encoding"] = "identity" }
        decompresses = configuration.automaticDecompression && !ranged
        protocolOptions = Self.protocolOptions(
            version: engine.httpVersion ?? configuration.httpVersion,
            tls: configuration.transportConfiguration.tls, url: request.url,
            hidesPassword: redaction.hidesOtherSecrets)
        // curl computes Content-Length itself; a copied one could disagree with the body it sends.
        fields = fields.filter { $0.key.caseInsensitiveCompare("Content-Length") != .orderedSame }
        var sorted = fields.map { (name: $0.key, value: redaction.hides(header: $0.key) ? CURLRedaction.placeholder : $0.value) }
        sorted.sort { $0.name.lowercased() < $1.name.lowercased() }
        headers = sorted
    }

    /// The curl options that say which HTTP version and which TLS settings the request uses.
    private static func protocolOptions(version: HTTPVersion, tls: TLSConfiguration, url: URL?, hidesPassword: Bool) -> [String] {
        var options: [String] = []
        switch version {
        case .automatic: break
        case .http1_1: options.append("--http1.1")
        case .http2: options.append("--http2")
        case .http2PriorKnowledge: options.append("--http2-prior-knowledge")
        case .http3: options.append("--http3-only")
        }
        guard url?.scheme?.lowercased() == "https" else { return options }
        if tls.certificateVerification == .disabledForDevelopmentOnly { options.append("--insecure") }
        let files = tls.trustRoots.certificateFiles
        // curl takes one CA file; Courier's several are shown one option each.
        options += files.map { "--cacert " + Shell.quote($0.path) }
        if case .only(_, let directory?) = tls.trustRoots.source { options.append("--capath " + Shell.quote(directory.path)) }
        if let client = tls.clientCertificate {
            let password = client.password.map { ":" + (hidesPassword ? CURLRedaction.placeholder : $0) } ?? ""
            options.append("--cert " + Shell.quote(client.certificate.path + (client.format == .pkcs12 ? password : "")))
            if client.format == .pkcs12 { options.append("--cert-type P12") }
            if let key = client.privateKey { options.append("--key " + Shell.quote(key.path)) }
            if client.format == .pem, client.password != nil { options.append("--pass '…'") }
        }
        if let host = url?.host, let pins = tls.curlPins(for: host) { options.append("--pinnedpubkey " + Shell.quote(pins)) }
        if tls.minimumVersion == .tls1_3 { options.append("--tlsv1.3") }
        return options
    }

    private static func body(of request: URLRequest, engine: RequestEngine) -> Body {
        // An upload body goes with the built method; a redirect that switched to GET drops it.
        if let upload = engine.source.upload, request.method == (engine.record.initialRequest ?? request).method {
            switch upload {
            case .data(let data):
                return data.isEmpty ? .none : .data(data)
            case .file(let url):
                return .file(url)
            case .multipart(let form):
                let length = (try? form.contentLength) ?? -1
                guard length >= 0, length <= MultipartFormData.encodingMemoryThreshold, let data = try? form.encode() else {
                    return .unavailable("a multipart form of \(length) bytes, too large to inline or unreadable")
                }
                return .data(data)
            case .stream:
                return .unavailable("an InputStream, which is read only once, when the request is sent")
            }
        }
        if let data = request.httpBody, !data.isEmpty { return .data(data) }
        return .none
    }

    /// The command, one option per line, lines joined with ` \` continuations.
    func render() -> String {
        let method = request.method
        let url = request.url?.absoluteString ?? ""
        var first = "curl"
        if method == .head {
            first += " --head"
        } else if method != .get || body.isSent {
            first += " -X " + Shell.word(method.rawValue)
        }
        // Brackets and braces in a URL are curl globbing syntax unless switched off.
        if url.contains(where: { "[]{}".contains($0) }) { first += " --globoff" }
        first += " " + Shell.quote(url)

        var options = [first]
        for header in headers {
            // "Name:" would remove curl's own header of that name; "Name;" sends it empty.
            let field = header.value.isEmpty ? header.name + ";" : header.name + ": " + header.value
            options.append("-H " + Shell.quote(field))
        }
        // curl adds `Expect: 100-continue` to larger bodies; Courier only sends it when asked.
        if body.isSent, request.value(forHTTPHeaderField: "Expect") == nil { options.append("-H 'Expect:'") }
        if decompresses { options.append("--compressed") }
        options += protocolOptions

        var before = ""
        switch body {
        case .none:
            break
        case .unavailable(let what):
            // A comment cannot sit inside a continued command, so it goes on its own line above.
            before = "# The body is not shown: \(what).\n"
        case .file(let fileURL):
            options.append("--data-binary " + Shell.quote("@" + fileURL.path))
        case .data(let data):
            if let text = String(validating: data, as: UTF8.self), !text.contains("\0"), !text.hasPrefix("@") {
                options.append("--data-binary " + Shell.quote(text))
            } else {
                before = "printf '%b' " + Shell.printfArgument(for: data) + " | "
                options.append("--data-binary @-")
            }
        }
        return before + options.joined(separator: " \\\n  ")
    }
}
