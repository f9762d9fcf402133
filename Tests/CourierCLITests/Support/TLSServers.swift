import CourierTestSupport
import Foundation

/// The HTTPS, h2c and mutual-TLS servers `.ci/start-servers.sh` starts, and its certificate files,
/// as the CLI's end-to-end tests need them: the same environment variables as the library's
/// `InteropServer` (Tests/CourierTests/Interop/InteropSupport.swift), which this target cannot see.
/// A missing URL variable prints a `SKIPPED …` line and gives nil, and the test returns early.
enum TLSServers {
    /// nginx over TLS with HTTP/2 by ALPN; its certificate is from ``testCA``.
    static let https = url("COURIER_NGINX_HTTPS_URL")
    /// nginx over TLS, HTTP/1.1 only.
    static let httpsHTTP1 = url("COURIER_NGINX_HTTPS_H1_URL")
    /// nginx, cleartext HTTP/2 with prior knowledge only.
    static let h2c = url("COURIER_NGINX_H2C_URL")
    /// nginx with a self-signed certificate.
    static let selfSigned = url("COURIER_NGINX_SELFSIGNED_URL")
    /// nginx speaking TLS 1.2 only.
    static let tls12 = url("COURIER_NGINX_TLS12_URL")
    /// The Python server that refuses a missing or unknown client certificate in the handshake; answers "mtls ok".
    static let mutualTLS = url("COURIER_PY_MTLS_URL")

    /// The CA that signed every server certificate but the self-signed one (PEM).
    static let testCA = path("COURIER_TEST_CA_FILE")
    /// A hashed directory (`openssl rehash`) holding only ``testCA``.
    static let testCADirectory = path("COURIER_TEST_CA_DIR")
    /// A CA that signed none of the servers' certificates.
    static let otherCA = path("COURIER_TEST_OTHER_CA_FILE")
    /// The client certificate and key the mutual-TLS server accepts, apart, together, and as PKCS#12.
    static let clientCertificate = path("COURIER_TEST_CLIENT_CERT")
    static let clientKey = path("COURIER_TEST_CLIENT_KEY")
    static let clientCombined = path("COURIER_TEST_CLIENT_COMBINED")
    static let clientP12 = path("COURIER_TEST_CLIENT_P12")
    static let clientP12Password = ProcessInfo.processInfo.environment["COURIER_TEST_CLIENT_P12_PASSWORD"]
    /// The servers' public-key pin, and one that matches none, as curl spells them (`sha256//…`).
    static let serverPin = ProcessInfo.processInfo.environment["COURIER_TEST_SERVER_PIN"]
    static let wrongPin = ProcessInfo.processInfo.environment["COURIER_TEST_WRONG_PIN"]

    private static func url(_ variable: String) -> URL? {
        InteropEnvironment.url(variable, group: "courier TLS end-to-end tests (nginx, the mutual-TLS server)")
    }

    private static func path(_ variable: String) -> String? {
        ProcessInfo.processInfo.environment[variable]
    }
}
