import Foundation

/// How a session's HTTPS connections are secured: which certificate authorities it trusts, the
/// client certificate it presents, the public keys it pins, and the oldest TLS version it accepts.
///
/// Set it once on ``SessionConfiguration/tls``. Every field is honoured by the curl transport
/// (the default on Linux). A field a transport cannot honour is never ignored: the session's
/// requests then fail with ``CourierError/Kind-swift.struct/invalidConfiguration`` naming the field
/// (see ``SessionConfiguration/validate()``).
///
/// ```swift
/// var configuration = SessionConfiguration()
/// configuration.tls.trustRoots = .system(adding: [URL(fileURLWithPath: "/etc/myapp/ca.pem")])
/// configuration.tls.clientCertificate = .pem(certificate: certificateURL, privateKey: keyURL)
/// configuration.tls.pin("api.example.com", to: ["sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="])
/// configuration.tls.minimumVersion = .tls1_3
/// ```
public struct TLSConfiguration: Sendable, Hashable {
    /// The certificate authorities a server's certificate must chain to.
    public struct TrustRoots: Sendable, Hashable {
        enum Source: Sendable, Hashable {
            case system(adding: [URL])
            case only([URL], directory: URL?)
        }

        let source: Source

        /// The system's trust store, as OpenSSL and curl find it: `SSL_CERT_FILE` and `SSL_CERT_DIR`
        /// when set, otherwise the distribution's bundle and hashed directory. The default.
        public static let system = TrustRoots(source: .system(adding: []))

        /// The system's trust store and the certificate authorities in `certificates` (PEM files).
        public static func system(adding certificates: [URL]) -> TrustRoots {
            TrustRoots(source: .system(adding: certificates))
        }

        /// Only the certificate authorities in `certificates` (PEM files) and, when given, in
        /// `directory` (a directory prepared with `openssl rehash`, as curl's `--capath` takes);
        /// the system's are not trusted.
        public static func only(_ certificates: [URL], directory: URL? = nil) -> TrustRoots {
            TrustRoots(source: .only(certificates, directory: directory))
        }

        /// The extra PEM files, beyond the system store when it is trusted.
        var certificateFiles: [URL] {
            switch source {
            case .system(let extra): extra
            case .only(let files, _): files
            }
        }

        /// Whether the system's trust store is part of it.
        var includesSystem: Bool {
            if case .system = source { true } else { false }
        }

        /// These roots with `certificates` trusted too.
        func adding(_ certificates: [URL]) -> TrustRoots {
            guard !certificates.isEmpty else { return self }
            switch source {
            case .system(let extra): return .system(adding: extra + certificates)
            case .only(let files, let directory): return .only(files + certificates, directory: directory)
            }
        }
    }

    /// A certificate and private key the client presents when a server asks for one (mutual TLS).
    public struct ClientCertificate: Sendable, Hashable {
        enum Format: Sendable, Hashable {
            case pem
            case pkcs12
        }

        let format: Format
        let certificate: URL
        let privateKey: URL?
        let password: String?

        /// A PEM certificate (with its chain, if any) and its PEM private key; `privateKey` may be
        /// `nil` when the certificate file holds the key too. `password` unlocks an encrypted key.
        public static func pem(certificate: URL, privateKey: URL? = nil, password: String? = nil) -> ClientCertificate {
            ClientCertificate(format: .pem, certificate: certificate, privateKey: privateKey, password: password)
        }

        /// A PKCS#12 (`.p12`, `.pfx`) bundle of certificate and key, and the password that opens it.
        public static func pkcs12(_ bundle: URL, password: String) -> ClientCertificate {
            ClientCertificate(format: .pkcs12, certificate: bundle, privateKey: nil, password: password)
        }
    }

    /// A TLS protocol version.
    public enum Version: Int, Sendable, Hashable, Comparable, CustomStringConvertible {
        /// TLS 1.2.
        case tls1_2 = 12
        /// TLS 1.3.
        case tls1_3 = 13

        /// Orders versions oldest first.
        public static func < (lhs: Version, rhs: Version) -> Bool { lhs.rawValue < rhs.rawValue }

        /// `"TLS 1.2"` or `"TLS 1.3"`.
        public var description: String { self == .tls1_2 ? "TLS 1.2" : "TLS 1.3" }
    }

    /// Whether a server's certificate is checked at all.
    public enum CertificateVerification: Sendable, Hashable {
        /// The certificate must chain to ``TLSConfiguration/trustRoots``, be within its dates and
        /// name the host. The default.
        case full
        /// **Insecure.** No check of the chain, the dates or the host name: anyone between the client
        /// and the server can read and change the traffic. For development against a server with a
        /// throwaway certificate, never for production. Pins are still checked. The cURL description
        /// of every request says `--insecure`.
        case disabledForDevelopmentOnly
    }

    /// The certificate authorities trusted; ``TrustRoots/system`` by default.
    public var trustRoots: TrustRoots = .system
    /// The certificate presented to servers that ask for one; `nil` by default.
    public var clientCertificate: ClientCertificate?
    /// Public-key pins by host name (exact match, case-insensitive): a connection to a pinned host
    /// succeeds only when its certificate's public key (SHA-256 of the SubjectPublicKeyInfo,
    /// base64) is one of the host's pins, and fails with
    /// ``CourierError/Kind-swift.struct/pinMismatch`` otherwise. Pins are written `sha256/BASE64`
    /// (OkHttp's spelling) or `sha256//BASE64` (curl's). Hosts without pins are checked as usual.
    public var pinnedPublicKeys: [String: [String]] = [:]
    /// The oldest TLS version accepted: TLS 1.2 by default.
    public var minimumVersion: Version = .tls1_2
    /// Whether certificates are checked: ``CertificateVerification/full`` unless you opt out.
    public var certificateVerification: CertificateVerification = .full

    /// The default: the system's trust store, no client certificate, no pins, TLS 1.2 or later,
    /// full verification.
    public static var `default`: TLSConfiguration { TLSConfiguration() }

    /// Creates the default configuration.
    public init() {}

    /// Pins `host` to the public keys in `hashes` (`sha256/BASE64` or `sha256//BASE64`), replacing
    /// any pins it had.
    public mutating func pin(_ host: String, to hashes: [String]) {
        pinnedPublicKeys[host.lowercased()] = hashes
    }

    /// The pins for `host` in curl's `CURLOPT_PINNEDPUBLICKEY` form (`sha256//A;sha256//B`), or `nil`.
    func curlPins(for host: String) -> String? {
        guard !pinnedPublicKeys.isEmpty else { return nil }
        let lowered = host.lowercased()
        guard
            let pins = pinnedPublicKeys[lowered]
                ?? pinnedPublicKeys.first(where: { $0.key.lowercased() == lowered })?.value
        else { return nil }
        return pins.compactMap(Self.normalizedPin).map { "sha256//" + $0 }.joined(separator: ";")
    }

    /// The base64 hash of a pin written `sha256/B64` or `sha256//B64`, or `nil` when it is not a
    /// SHA-256 pin of 32 bytes.
    static func normalizedPin(_ pin: String) -> String? {
        var text = Substring(pin.trimmingCharacters(in: .whitespaces))
        guard text.hasPrefix("sha256/") else { return nil }
        text = text.dropFirst("sha256/".count)
        if text.hasPrefix("/") { text = text.dropFirst() }
        guard let bytes = Data(base64Encoded: String(text)), bytes.count == 32 else { return nil }
        return String(text)
    }

    /// Checks what can be checked without a connection: every file is readable and every pin is
    /// well formed. Throws ``CourierError/Kind-swift.struct/invalidConfiguration``.
    func validate() throws(CourierError) {
        for file in trustRoots.certificateFiles {
            guard FileManager.default.isReadableFile(atPath: file.path) else {
                throw CourierError(.invalidConfiguration, "TLSConfiguration.trustRoots: cannot read the certificate file \(file.path).")
            }
        }
        if case .only(let files, let directory) = trustRoots.source {
            if files.isEmpty, directory == nil {
                throw CourierError(.invalidConfiguration, "TLSConfiguration.trustRoots is .only([]): no certificate could ever be trusted.")
            }
            var isDirectory: ObjCBool = false
            if let directory, !(FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) && isDirectory.boolValue) {
                throw CourierError(.invalidConfiguration, "TLSConfiguration.trustRoots: \(directory.path) is not a directory.")
            }
        }
        if let client = clientCertificate {
            for file in [client.certificate] + [client.privateKey].compactMap({ $0 }) {
                guard FileManager.default.isReadableFile(atPath: file.path) else {
                    throw CourierError(.invalidConfiguration, "TLSConfiguration.clientCertificate: cannot read \(file.path).")
                }
            }
        }
        for (host, pins) in pinnedPublicKeys {
            guard !pins.isEmpty else {
                throw CourierError(.invalidConfiguration, "TLSConfiguration.pinnedPublicKeys: \(host) has an empty list of pins.")
            }
            for pin in pins where Self.normalizedPin(pin) == nil {
                throw CourierError(
                    .invalidConfiguration,
                    "TLSConfiguration.pinnedPublicKeys: \(WireSyntax.quoted(pin)) for \(host) "
                        + "is not a pin: write sha256/ followed by the base64 SHA-256 of the public key (44 characters).")
            }
        }
    }
}
