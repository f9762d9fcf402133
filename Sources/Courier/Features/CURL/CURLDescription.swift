import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// A `curl` command line that sends this request as Courier sent it: method, URL, every
    /// header, cookies from the session's storage, and the body byte for byte.
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
    public func cURLDescription() async -> String {
        withIsolatedEngine { Self.describe($0) }
    }

    private static func describe(_ engine: RequestEngine) -> String {
        if let sent = engine.record.request {
            return CURLCommand(request: sent, engine: engine).render()
        }
        do {
            let built = try engine.record.initialRequest ?? engine.source.makeRequest(engine.session)
            return "# Not sent (yet): this is the request as built, before request adapters.\n"
                + CURLCommand(request: built, engine: engine).render()
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

    init(request: URLRequest, engine: RequestEngine) {
        self.request = request
        body = Self.body(of: request, engine: engine)
        let configuration = engine.session.configuration
        var fields = request.allHTTPHeaderFields ?? [:]
        // Mirror what the engine adds when sending (see `makeTransportRequest`).
        if request.value(forHTTPHeaderField: "Cookie") == nil, let url = request.url,
           let cookies = configuration.cookies.storage?.cookies(for: url), !cookies.isEmpty {
            fields.merge(HTTPCookie.requestHeaderFields(with: cookies)) { current, _ in current }
        }
        let ranged = request.value(forHTTPHeaderField: "Range") != nil
        if ranged, request.value(forHTTPHeaderField: "Accept-Encoding") == nil { fields["Accept-Encoding"] = "identity" }
        decompresses = configuration.automaticDecompression && !ranged
        protocolOptions = Self.protocolOptions(version: engine.httpVersion ?? configuration.httpVersion,
                                               tls: configuration.transportConfiguration.tls, url: request.url)
        // curl computes Content-Length itself; a copied one could disagree with the body it sends.
        fields = fields.filter { $0.key.caseInsensitiveCompare("Content-Length") != .orderedSame }
        var sorted = fields.map { (name: $0.key, value: $0.value) }
        sorted.sort { $0.name.lowercased() < $1.name.lowercased() }
        headers = sorted
    }

    /// The curl options that say which HTTP version and which TLS settings the request uses.
    private static func protocolOptions(version: HTTPVersion, tls: TLSConfiguration, url: URL?) -> [String] {
        var options: [String] = []
        switch version {
        case .automatic: break
        case .http1_1: options.append("--http1.1")
        case .http2: options.append("--http2")
        case .http2PriorKnowledge: options.append("--http2-prior-knowledge")
        }
        guard url?.scheme?.lowercased() == "https" else { return options }
        if tls.certificateVerification == .disabledForDevelopmentOnly { options.append("--insecure") }
        let files = tls.trustRoots.certificateFiles
        // curl takes one CA file; Courier's several are shown one option each.
        options += files.map { "--cacert " + Shell.quote($0.path) }
        if case .only(_, let directory?) = tls.trustRoots.source { options.append("--capath " + Shell.quote(directory.path)) }
        if let client = tls.clientCertificate {
            let password = client.password.map { ":" + $0 } ?? ""
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
