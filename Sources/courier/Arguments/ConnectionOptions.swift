import Courier
import Foundation

/// How `courier` secures and speaks to the server: the TLS and HTTP-version options, spelled as
/// curl spells them (`--cacert`, `--capath`, `-E/--cert`, `--cert-type`, `--key`, `--pass`,
/// `--pinnedpubkey`, `-k/--insecure`, `--tlsv1.2`, `--tlsv1.3`, `--http1.1`, `--http2`,
/// `--http2-prior-knowledge`, `--http3`, `--http3-only`).
///
/// ``make(from:url:)`` is pure, like ``FetchOptions/make(from:environment:)``; ``checkFiles()``
/// is the one step that looks at the disk, run just before the request.
struct ConnectionOptions: Equatable, Sendable {
    /// The format of the `--cert` file (`--cert-type`).
    enum CertificateType: String, Equatable, Sendable {
        /// PEM certificate, with its key unless `--key` names another file. The default.
        case pem = "PEM"
        /// A PKCS#12 bundle of certificate and key.
        case p12 = "P12"
    }

    /// The client certificate `--cert` (with `--cert-type`, `--key`, `--pass`) asked for.
    struct ClientCertificate: Equatable, Sendable {
        /// The format of ``certificate``.
        var type: CertificateType
        /// The certificate file (PEM) or bundle (P12).
        var certificate: String
        /// `--key`: the PEM private key, when it is not in ``certificate``.
        var key: String?
        /// From `--cert FILE:PASSWORD` or `--pass`: unlocks the key or the P12 bundle.
        var password: String?
    }

    /// `--cacert FILE`: trust only the certificate authorities in FILE (with ``caDirectory``, if given).
    var caCertificate: String?
    /// `--capath DIR`: trust only the certificate authorities in this hashed directory (with ``caCertificate``).
    var caDirectory: String?
    /// `--cert` and friends; nil for no client certificate.
    var clientCertificate: ClientCertificate?
    /// `--pinnedpubkey`: the pins of the URL's host, each `sha256//BASE64`; empty for none.
    var pins: [String] = []
    /// `-k/--insecure`: the server's certificate is not checked.
    var insecure = false
    /// `--tlsv1.2` or `--tlsv1.3` (the last one given); nil for the library's default (TLS 1.2).
    var minimumTLSVersion: TLSConfiguration.Version?
    /// `--http1.1`, `--http2`, `--http2-prior-knowledge`, `--http3` or `--http3-only`;
    /// ``HTTPVersion/automatic`` otherwise.
    var httpVersion: HTTPVersion = .automatic

    /// The line `-k/--insecure` prints to standard error every time it is used.
    static let insecureWarning = "courier: warning: --insecure: the server's certificate is not checked"

    /// The HTTP-version flags, which exclude each other, and what each asks for.
    static let httpVersionFlags: [(id: String, version: HTTPVersion)] = [
        ("http1.1", .http1_1), ("http2", .http2), ("http2-prior-knowledge", .http2PriorKnowledge),
        ("http3", .http3), ("http3-only", .http3),
    ]

    /// The options, in the order `--help` lists them.
    static let options: [OptionSpec] = [
        OptionSpec(
            "cacert", long: "cacert", value: "FILE",
            help: "trust only the CAs in FILE (PEM): replaces the system store, unlike curl on Debian"),
        OptionSpec(
            "capath", long: "capath", value: "DIR",
            help: "trust only the CAs in DIR (prepared with 'openssl rehash'); with --cacert, both"),
        OptionSpec(
            "cert", short: "E", long: "cert", value: "FILE[:PASSWORD]",
            help: "client certificate (PEM, with its key unless --key); '\\:' stands for a ':' in FILE"),
        OptionSpec(
            "cert-type", long: "cert-type", value: "PEM|P12",
            help: "the --cert file's format: PEM (default) or P12 (PKCS#12, certificate and key)"),
        OptionSpec(
            "key", long: "key", value: "FILE",
            help: "the client certificate's private key (PEM)"),
        OptionSpec(
            "pass", long: "pass", value: "PASSWORD",
            help: "the password of the private key, or of the P12 file"),
        OptionSpec(
            "pinnedpubkey", long: "pinnedpubkey", value: "HASHES",
            help: "sha256//BASE64[;sha256//...]: the URL's host must have one of these public keys"),
        OptionSpec(
            "insecure", short: "k", long: "insecure",
            help: "do not check the server's certificate (development only; prints a warning)"),
        OptionSpec("tlsv1.2", long: "tlsv1.2", help: "use TLS 1.2 or later (the default)"),
        OptionSpec("tlsv1.3", long: "tlsv1.3", help: "use TLS 1.3 or later"),
        OptionSpec("http1.1", long: "http1.1", help: "use HTTP/1.1, also over TLS"),
        OptionSpec("http2", long: "http2", help: "use HTTP/2 over TLS and fail if the server will not (https:// only)"),
        OptionSpec(
            "http2-prior-knowledge", long: "http2-prior-knowledge",
            help: "use HTTP/2 from the first byte, without negotiation (cleartext h2c servers)"),
        OptionSpec(
            "http3", long: "http3",
            help: "use HTTP/3 over QUIC (https:// only; unlike curl, no fallback to TCP: as --http3-only)"),
        OptionSpec(
            "http3-only", long: "http3-only",
            help: "use HTTP/3 over QUIC and nothing else (https://; needs a libcurl built with HTTP/3)"),
    ]

    /// Checks and types the connection options of `parsed` for a request to `url`.
    ///
    /// - Throws: ``UsageError`` for a malformed value or options that do not go together.
    static func make(from parsed: ParsedArguments, url: URL) throws(UsageError) -> ConnectionOptions {
        var options = ConnectionOptions()
        options.caCertificate = try nonEmpty(parsed.value("cacert"), "--cacert needs a file name")
        options.caDirectory = try nonEmpty(parsed.value("capath"), "--capath needs a directory")
        options.clientCertificate = try clientCertificate(from: parsed)
        if let text = parsed.value("pinnedpubkey") { options.pins = try pins(text) }
        options.insecure = parsed.has("insecure")
        // As in curl, the last of --tlsv1.2 and --tlsv1.3 wins.
        switch parsed.options.last(where: { $0.id == "tlsv1.2" || $0.id == "tlsv1.3" })?.id {
        case "tlsv1.2": options.minimumTLSVersion = .tls1_2
        case "tlsv1.3": options.minimumTLSVersion = .tls1_3
        default: break
        }
        options.httpVersion = try httpVersion(from: parsed, url: url)
        return options
    }

    // MARK: Pieces

    /// `text`, or nil when absent; an empty value is a usage error with `message`.
    private static func nonEmpty(_ text: String?, _ message: String) throws(UsageError) -> String? {
        guard let text else { return nil }
        guard !text.isEmpty else { throw UsageError(message) }
        return text
    }

    /// The client certificate from `--cert`, `--cert-type`, `--key` and `--pass`, which need `--cert`.
    static func clientCertificate(from parsed: ParsedArguments) throws(UsageError) -> ClientCertificate? {
        let typeText = parsed.value("cert-type")
        let key = parsed.value("key")
        let pass = parsed.value("pass")
        guard let certText = parsed.value("cert") else {
            if key != nil { throw UsageError("--key needs --cert (the certificate that goes with the key)") }
            if pass != nil { throw UsageError("--pass needs --cert (it unlocks the client certificate's key)") }
            if typeText != nil { throw UsageError("--cert-type needs --cert (it says what the --cert file is)") }
            return nil
        }
        let argument = CertificateArgument.parse(certText)
        guard !argument.path.isEmpty else { throw UsageError("--cert needs a file name (--cert FILE[:PASSWORD])") }
        var type = CertificateType.pem
        if let typeText {
            guard let known = CertificateType(rawValue: typeText.uppercased()) else {
                throw UsageError("--cert-type must be PEM or P12, not '\(typeText)'")
            }
            type = known
        }
        if let pass, let given = argument.password {
            throw UsageError(
                given == pass
                    ? "the password is given twice (--cert FILE:PASSWORD and --pass); give it once"
                    : "two different passwords given (--cert FILE:PASSWORD and --pass)")
        }
        if let key {
            guard type == .pem else { throw UsageError("--key cannot be used with --cert-type P12 (the P12 file holds the key)") }
            guard !key.isEmpty else { throw UsageError("--key needs a file name") }
        }
        return ClientCertificate(type: type, certificate: argument.path, key: key, password: argument.password ?? pass)
    }

    /// The pins of `--pinnedpubkey sha256//A;sha256//B`, each checked to be the base64 of 32 bytes.
    static func pins(_ text: String) throws(UsageError) -> [String] {
        let pins = text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        for pin in pins {
            guard pin.hasPrefix("sha256//") else {
                throw UsageError(
                    "--pinnedpubkey: '\(pin)' is not a pin (expected sha256//BASE64, several separated by ';'; "
                        + "a public-key file is not supported)")
            }
            let hash = pin.dropFirst("sha256//".count)
            guard let bytes = Data(base64Encoded: String(hash)), bytes.count == 32 else {
                throw UsageError(
                    "--pinnedpubkey: '\(pin)' is not a pin: after sha256// comes the base64 SHA-256 "
                        + "of the public key (44 characters ending in '=')")
            }
        }
        return pins
    }

    /// The HTTP version of `--http1.1`, `--http2`, `--http2-prior-knowledge`, `--http3` or
    /// `--http3-only`, of which one may be given.
    static func httpVersion(from parsed: ParsedArguments, url: URL) throws(UsageError) -> HTTPVersion {
        let given = httpVersionFlags.filter { parsed.has($0.id) }
        if given.count > 1 {
            throw UsageError("--\(given[0].id) and --\(given[1].id) cannot be used together (choose one HTTP version)")
        }
        guard let choice = given.first else { return .automatic }
        if choice.version == .http2, url.scheme?.lowercased() != "https" {
            throw UsageError(
                "--http2 needs an https:// URL (HTTP/2 is negotiated in the TLS handshake); "
                    + "use --http2-prior-knowledge for a cleartext HTTP/2 server")
        }
        if choice.version == .http3, url.scheme?.lowercased() != "https" {
            throw UsageError("--\(choice.id) needs an https:// URL (HTTP/3 runs over QUIC, which is always TLS)")
        }
        return choice.version
    }

    // MARK: Use

    /// The TLS configuration for a request to `host`: pins, when given, are `host`'s.
    func tlsConfiguration(host: String) -> TLSConfiguration {
        var tls = TLSConfiguration()
        if caCertificate != nil || caDirectory != nil {
            tls.trustRoots = .only(
                [caCertificate].compactMap { $0 }.map { URL(fileURLWithPath: $0) },
                directory: caDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) })
        }
        if let client = clientCertificate {
            let certificate = URL(fileURLWithPath: client.certificate)
            switch client.type {
            case .pem:
                tls.clientCertificate = .pem(
                    certificate: certificate, privateKey: client.key.map { URL(fileURLWithPath: $0) },
                    password: client.password)
            case .p12:
                tls.clientCertificate = .pkcs12(certificate, password: client.password ?? "")
            }
        }
        if !pins.isEmpty { tls.pin(host, to: pins) }
        if let minimumTLSVersion { tls.minimumVersion = minimumTLSVersion }
        if insecure { tls.certificateVerification = .disabledForDevelopmentOnly }
        return tls
    }

    /// Checks that every file and directory the options name can be read, just before the request.
    ///
    /// - Throws: ``UsageError`` naming the option and the problem, with curl's exit status: 77 for
    ///   `--cacert` and `--capath`, 58 for `--cert` and `--key`.
    func checkFiles() throws(UsageError) {
        var files: [(option: String, path: String, code: ExitCode)] = []
        if let caCertificate { files.append(("--cacert", caCertificate, .caCertificate)) }
        if let client = clientCertificate {
            files.append(("--cert", client.certificate, .clientCertificate))
            if let key = client.key { files.append(("--key", key, .clientCertificate)) }
        }
        for (option, path, code) in files {
            if let problem = FileChecks.readableFileProblem(path) { throw UsageError("\(option): \(problem)", exitCode: code) }
        }
        if let caDirectory {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: caDirectory, isDirectory: &isDirectory) else {
                throw UsageError("--capath: \(caDirectory): no such directory", exitCode: .caCertificate)
            }
            guard isDirectory.boolValue else { throw UsageError("--capath: \(caDirectory) is not a directory", exitCode: .caCertificate) }
        }
    }
}

/// The argument of `-E/--cert FILE[:PASSWORD]`, split the way curl splits it (leaving out its
/// Windows drive-letter rule): the first `:` that is not escaped ends FILE and the rest, colons
/// included, is the password. In FILE, `\:` stands for a colon and `\\` for a backslash; any other
/// backslash is kept as it is.
struct CertificateArgument: Equatable, Sendable {
    /// The certificate file.
    let path: String
    /// The password, when a `:` was given (possibly empty).
    let password: String?

    /// Splits `text`.
    static func parse(_ text: String) -> CertificateArgument {
        var path = ""
        var index = text.startIndex
        while index < text.endIndex {
            let character = text[index]
            index = text.index(after: index)
            switch character {
            case "\\":
                guard index < text.endIndex else { path.append("\\"); continue }
                let next = text[index]
                if next == ":" || next == "\\" {
                    path.append(next)
                    index = text.index(after: index)
                } else {
                    path.append("\\")
                }
            case ":":
                return CertificateArgument(path: path, password: String(text[index...]))
            default:
                path.append(character)
            }
        }
        return CertificateArgument(path: path, password: nil)
    }
}
