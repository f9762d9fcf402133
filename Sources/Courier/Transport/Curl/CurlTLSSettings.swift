import CCurl
import Foundation

/// The TLS options every HTTPS transfer of one transport gets, worked out once from its
/// ``TLSConfiguration``.
///
/// **Trust roots and cold connections.** OpenSSL parses a CA *file* whole for every new connection
/// (about 15 ms of CPU for a 140-certificate system bundle), while a hashed CA *directory* is read
/// lazily, one certificate per lookup. libcurl 7.87.0 and later cache a parsed CA file per event
/// loop, but only when no CA directory is set, and Debian's libcurl sets one by default, so every
/// connection paid for the bundle. Courier therefore trusts the system through the bundle file
/// alone where libcurl caches it (extra certificates appended in a private copy), and through the
/// hashed directory alone (extras in a small file beside it) where it does not.
struct CurlTLSSettings: Sendable {
    /// CURLOPT_CAINFO; `nil` sets no file at all (not libcurl's default bundle).
    var caInfo: String?
    /// CURLOPT_CAPATH; `nil` sets no directory.
    var caPath: String?
    /// CURLOPT_SSLCERT, CURLOPT_SSLCERTTYPE, CURLOPT_SSLKEY and CURLOPT_KEYPASSWD.
    var clientCertificate: TLSConfiguration.ClientCertificate?
    /// CURLOPT_SSLVERSION.
    var minimumVersion: Int = Int(CCURL_SSLVERSION_TLSv1_2)
    /// CURLOPT_SSL_VERIFYPEER and CURLOPT_SSL_VERIFYHOST.
    var verifiesPeer = true
    /// The configuration, for the per-host pins.
    var configuration = TLSConfiguration()

    /// The settings for `configuration`, and the CA file written for it (removed at shutdown), if
    /// one was needed. `environment` supplies `SSL_CERT_FILE` and `SSL_CERT_DIR`.
    static func make(for configuration: TLSConfiguration, library: CurlLibrary,
                     environment: [String: String]) throws(CourierError) -> (CurlTLSSettings, CurlTrustStore?) {
        var settings = CurlTLSSettings()
        settings.configuration = configuration
        settings.clientCertificate = configuration.clientCertificate
        settings.minimumVersion = Int(configuration.minimumVersion == .tls1_3 ? CCURL_SSLVERSION_TLSv1_3 : CCURL_SSLVERSION_TLSv1_2)
        settings.verifiesPeer = configuration.certificateVerification == .full
        var store: CurlTrustStore?
        switch configuration.trustRoots.source {
        case .system(let extra):
            let system = SystemTrust.locate(library: library, environment: environment)
            settings.caPath = system.directory
            if extra.isEmpty {
                settings.caInfo = system.file
            } else {
                store = try CurlTrustStore(certificates: extra, prependingBundle: system.file)
                settings.caInfo = store?.path
            }
        case .only(let files, let directory):
            if !files.isEmpty {
                store = try CurlTrustStore(certificates: files, prependingBundle: nil)
                settings.caInfo = store?.path
            }
            settings.caPath = directory?.path
        }
        return (settings, store)
    }

    /// Sets the TLS options of one HTTPS transfer to `url` on `easy`.
    func apply(to easy: CurlEasyHandle, for url: URL) throws(CourierError) {
        try easy.set(.caInfo, optionalString: caInfo)
        try easy.set(.caPath, optionalString: caPath)
        try easy.set(.sslVersion, minimumVersion)
        try easy.set(.sslVerifyPeer, verifiesPeer ? 1 : 0)
        try easy.set(.sslVerifyHost, verifiesPeer ? 2 : 0)
        try easy.set(.pinnedPublicKey, optionalString: configuration.curlPins(for: url.host ?? ""))
        if let client = clientCertificate {
            try easy.set(.sslCert, string: client.certificate.path)
            try easy.set(.sslCertType, string: client.format == .pkcs12 ? "P12" : "PEM")
            try easy.set(.sslKey, optionalString: client.privateKey?.path)
            try easy.set(.keyPassword, optionalString: client.password)
        } else {
            try easy.set(.sslCert, optionalString: nil)
            try easy.set(.sslKey, optionalString: nil)
            try easy.set(.keyPassword, optionalString: nil)
        }
    }

    /// Where this system keeps its trusted certificate authorities.
    struct SystemTrust: Equatable {
        /// A bundle file.
        var file: String?
        /// A hashed directory.
        var directory: String?

        /// `SSL_CERT_FILE` and `SSL_CERT_DIR` as OpenSSL and curl read them (both, when both are
        /// set, unless the file lies in the directory: the distributions' own pair, one store in two
        /// forms, where the file alone keeps libcurl's cache usable). Without them: the system bundle
        /// alone where libcurl caches parsed CA files (7.87.0+), else the hashed system directory
        /// alone, else the bundle.
        static func locate(library: CurlLibrary, environment: [String: String]) -> SystemTrust {
            let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
            let directory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
            if let file, let directory {
                let inside = URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
                    == URL(fileURLWithPath: directory).standardizedFileURL.path
                return SystemTrust(file: file, directory: inside ? nil : directory)
            }
            if file != nil || directory != nil { return SystemTrust(file: file, directory: directory) }
            let bundle = CurlTrustStore.systemBundlePath(library: library)
            if library.cachesCAFiles, let bundle { return SystemTrust(file: bundle, directory: nil) }
            if let hashed = hashedDirectory { return SystemTrust(file: nil, directory: hashed) }
            return SystemTrust(file: bundle, directory: nil)
        }

        /// The first of the usual system CA directories that OpenSSL can use (it holds
        /// `XXXXXXXX.N` hash links), looked up once per process.
        static let hashedDirectory: String? = {
            ["/etc/ssl/certs", "/etc/pki/tls/certs", "/usr/local/etc/openssl/certs"].first(where: isHashed)
        }()

        /// Whether `path` holds at least a few OpenSSL subject-hash links (`1a2b3c4d.0`).
        static func isHashed(_ path: String) -> Bool {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
            let hashed = names.lazy.filter { name in
                let parts = name.split(separator: ".")
                return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit)
                    && !parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)
            }
            return hashed.prefix(8).count >= 8
        }
    }
}
