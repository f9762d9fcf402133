import CCurl
import CourierSupport
import Foundation

/// The TLS options every HTTPS transfer of one transport gets, worked out once from its
/// ``TLSConfiguration``.
///
/// **Trust roots and cold connections.** OpenSSL parses a CA *file* whole (about 15 ms of CPU for
/// a 140-certificate system bundle), while a hashed CA *directory* is read lazily, one certificate
/// per lookup. Where libcurl's TLS backend is OpenSSL, Courier builds one store per transport
/// (``CurlSharedTrust``: the system's hashed directory, or the bundle when there is no such
/// directory or `SSL_CERT_FILE` names it, plus the extra certificates) and every connection of
/// every loop verifies against it. Elsewhere libcurl gets the files: the bundle file alone where
/// libcurl 7.87.0+ caches a parsed CA file per event loop (extra certificates appended in a private
/// copy), the hashed directory alone (extras in a small file beside it) where it does not.
struct CurlTLSSettings: Sendable {
    /// CURLOPT_CAINFO; `nil` sets no file at all (not libcurl's default bundle).
    var caInfo: String?
    /// CURLOPT_CAPATH; `nil` sets no directory.
    var caPath: String?
    /// The store every connection verifies against, in place of `caInfo` and `caPath`.
    var sharedTrust: CurlSharedTrust?
    /// CURLOPT_SSLCERT, CURLOPT_SSLCERTTYPE, CURLOPT_SSLKEY and CURLOPT_KEYPASSWD.
    var clientCertificate: TLSConfiguration.ClientCertificate?
    /// CURLOPT_SSLVERSION.
    var minimumVersion: Int = Int(CCURL_SSLVERSION_TLSv1_2)
    /// CURLOPT_SSL_VERIFYPEER and CURLOPT_SSL_VERIFYHOST.
    var verifiesPeer = true
    /// The configuration, for the per-host pins.
    var configuration = TLSConfiguration()

    /// The settings for `configuration`, and the CA file written for it (removed at shutdown), if
    /// one was needed. `environment` supplies `SSL_CERT_FILE` and `SSL_CERT_DIR`; `sharing` off
    /// (``FastPaths``) hands libcurl the files even where a shared store could be built.
    static func make(
        for configuration: TLSConfiguration, library: CurlLibrary,
        environment: [String: String], sharing: Bool = FastPaths.isOn(.trust)
    ) throws(CourierError) -> (CurlTLSSettings, CurlTrustStore?) {
        var settings = CurlTLSSettings()
        settings.configuration = configuration
        settings.clientCertificate = configuration.clientCertificate
        settings.minimumVersion = Int(configuration.minimumVersion == .tls1_3 ? CCURL_SSLVERSION_TLSv1_3 : CCURL_SSLVERSION_TLSv1_2)
        settings.verifiesPeer = configuration.certificateVerification == .full
        if sharing, settings.verifiesPeer, let shared = try sharedStore(for: configuration.trustRoots, library: library, environment: environment) {
            settings.sharedTrust = shared
            return (settings, nil)
        }
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

    /// One store for `roots`, or `nil` where OpenSSL or libcurl cannot share one. Throws
    /// `.invalidConfiguration` for an extra certificate file that cannot be read or holds no PEM
    /// certificate, as the file-based way does.
    private static func sharedStore(
        for roots: TLSConfiguration.TrustRoots, library: CurlLibrary,
        environment: [String: String]
    ) throws(CourierError) -> CurlSharedTrust? {
        switch roots.source {
        case .system(let extra):
            for certificate in extra { _ = try CurlTrustStore.contents(ofCertificate: certificate) }
            let system = SystemTrust.locateForSharedStore(library: library, environment: environment)
            return CurlSharedTrust(files: (system.file.map { [$0] } ?? []) + extra.map(\.path), directory: system.directory)
        case .only(let files, let directory):
            for certificate in files { _ = try CurlTrustStore.contents(ofCertificate: certificate) }
            if files.isEmpty && directory == nil { return nil }
            return CurlSharedTrust(files: files.map(\.path), directory: directory?.path)
        }
    }

    /// Sets the TLS options of one HTTPS transfer to `url` on `easy`.
    func apply(to easy: CurlEasyHandle, for url: URL) throws(CourierError) {
        try easy.set(.caInfo, optionalString: caInfo)
        try easy.set(.caPath, optionalString: caPath)
        if let sharedTrust { try sharedTrust.apply(to: easy) }
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
            let (file, directory) = named(by: environment)
            if let file, let directory {
                let inside =
                    URL(fileURLWithPath: file).deletingLastPathComponent().standardizedFileURL.path
                    == URL(fileURLWithPath: directory).standardizedFileURL.path
                return SystemTrust(file: file, directory: inside ? nil : directory)
            }
            if file != nil || directory != nil { return SystemTrust(file: file, directory: directory) }
            let bundle = CurlTrustStore.systemBundlePath(library: library)
            if library.cachesCAFiles, let bundle { return SystemTrust(file: bundle, directory: nil) }
            if let hashed = hashedDirectory { return SystemTrust(file: nil, directory: hashed) }
            return SystemTrust(file: bundle, directory: nil)
        }

        /// Where the system's roots come from for a store shared by every connection: what
        /// `SSL_CERT_FILE` and `SSL_CERT_DIR` name (both when both are set, except the
        /// distributions' own pair, the system bundle and a hashed directory: one store in two
        /// forms, of which the directory costs nothing up front), else the hashed system directory,
        /// else the bundle (parsed once).
        static func locateForSharedStore(library: CurlLibrary, environment: [String: String]) -> SystemTrust {
            let (file, directory) = named(by: environment)
            if let file, let directory, isHashed(directory, atLeast: 1),
                let bundle = CurlTrustStore.systemBundlePath(library: library),
                URL(fileURLWithPath: file).resolvingSymlinksInPath() == URL(fileURLWithPath: bundle).resolvingSymlinksInPath()
            {
                return SystemTrust(file: nil, directory: directory)
            }
            if file != nil || directory != nil { return SystemTrust(file: file, directory: directory) }
            if let hashed = hashedDirectory { return SystemTrust(file: nil, directory: hashed) }
            return SystemTrust(file: CurlTrustStore.systemBundlePath(library: library), directory: nil)
        }

        /// `SSL_CERT_FILE` and `SSL_CERT_DIR`, an empty value counting as unset.
        private static func named(by environment: [String: String]) -> (file: String?, directory: String?) {
            (environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }, environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 })
        }

        /// The first of the usual system CA directories that OpenSSL can use (it holds
        /// `XXXXXXXX.N` hash links), looked up once per process.
        static let hashedDirectory: String? = {
            ["/etc/ssl/certs", "/etc/pki/tls/certs", "/usr/local/etc/openssl/certs"].first { isHashed($0) }
        }()

        /// Whether `path` holds at least `minimum` OpenSSL subject-hash links (`1a2b3c4d.0`).
        static func isHashed(_ path: String, atLeast minimum: Int = 8) -> Bool {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: path) else { return false }
            let hashed = names.lazy.filter { name in
                let parts = name.split(separator: ".")
                return parts.count == 2 && parts[0].count == 8 && parts[0].allSatisfy(\.isHexDigit)
                    && !parts[1].isEmpty && parts[1].allSatisfy(\.isNumber)
            }
            return hashed.prefix(minimum).count >= minimum
        }
    }
}
