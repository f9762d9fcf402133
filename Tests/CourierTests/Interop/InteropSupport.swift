import CourierTestSupport
import Foundation
import Testing

/// Real servers started by `.ci/run` (`.ci/start-servers.sh`); tests skip with a printed reason when absent.
/// All on 127.0.0.1; the certificates are made afresh by `.ci/make-certs.py` on every start.
enum InteropServer {
    static let httpbin = url("COURIER_HTTPBIN_URL")
    static let nginx = url("COURIER_NGINX_URL")
    /// nginx over TLS with HTTP/2 by ALPN (HTTP/1.1 for a client that offers only that). Test CA, IP 127.0.0.1 and DNS localhost.
    static let nginxHTTPS = url("COURIER_NGINX_HTTPS_URL")
    /// nginx over TLS, HTTP/1.1 only (no h2 in its ALPN).
    static let nginxHTTPSHTTP1 = url("COURIER_NGINX_HTTPS_H1_URL")
    /// nginx, cleartext HTTP/2 with prior knowledge only (h2c; an HTTP/1.1 request gets no HTTP answer).
    static let nginxH2C = url("COURIER_NGINX_H2C_URL")
    /// nginx requiring a client certificate from the client CA: the handshake succeeds without one, the answer is 400.
    static let nginxMutualTLS = url("COURIER_NGINX_MTLS_URL")
    /// nginx with a certificate from the test CA whose notAfter is in the past.
    static let nginxExpired = url("COURIER_NGINX_EXPIRED_URL")
    /// nginx with a certificate from the test CA for DNS:wrong.example only.
    static let nginxWrongHost = url("COURIER_NGINX_WRONGHOST_URL")
    /// nginx with a self-signed certificate for 127.0.0.1 (not from the test CA).
    static let nginxSelfSigned = url("COURIER_NGINX_SELFSIGNED_URL")
    /// nginx speaking TLS 1.2 only (with HTTP/2).
    static let nginxTLS12 = url("COURIER_NGINX_TLS12_URL")
    /// nginx over TLS with HTTP/2 that closes a connection after 10 requests (GOAWAY; 128 concurrent streams).
    static let nginxGoAway = url("COURIER_NGINX_GOAWAY_URL")
    /// nginx over TLS with HTTP/2 allowing 8 concurrent streams per connection.
    static let nginxStreamLimit = url("COURIER_NGINX_STREAMLIMIT_URL")
    /// Python server requiring a client certificate from the client CA, refusing a missing or rogue one in the TLS handshake;
    /// answers 200 "mtls ok".
    static let pythonMutualTLS = url("COURIER_PY_MTLS_URL")
    /// Server-Sent Events from sse-starlette under uvicorn (`.ci/sse-server.py`): `/events?n=N`, `/drop?n=N&after=K`, POST `/chat`.
    static let sse = url("COURIER_SSE_URL")

    /// hypercorn with aioquic (`.ci/h3-server.py`) serving httpbin and `/files/NAME` (the fixtures
    /// of `www`) over HTTP/3 on UDP and over HTTP/2 and HTTP/1.1 on TCP, both on this port, with
    /// `Alt-Svc: h3=":PORT"`. Test CA.
    static let http3 = url("COURIER_H3_URL")
    /// The same over TCP only, advertising HTTP/3 on another (UDP) port: `Alt-Svc: h3=":OTHER"`.
    static let http3AltSvc = url("COURIER_H3_ALTSVC_URL")
    /// The same over TCP only, advertising HTTP/3 on a UDP port where nothing listens.
    static let http3DeadAltSvc = url("COURIER_H3_DEAD_ALTSVC_URL")
    /// hypercorn with aioquic requiring a client certificate from the client CA in every handshake, QUIC and TCP.
    static let http3MutualTLS = url("COURIER_H3_MTLS_URL")
    /// Node.js's HTTP/1.1 server (`.ci/echo-server.js`): `/echo` writes each request chunk back as
    /// it arrives, then the request's trailer lines as the response's trailers, in order, and
    /// `X-Request-Trailer-Count`. Plain HTTP.
    static let nodeEcho = url("COURIER_NODE_ECHO_URL")

    /// The test CA (PEM) that signed the servers' certificates (all but the self-signed one).
    static let testCA = file("COURIER_TEST_CA_FILE")
    /// A hashed CA directory (`openssl rehash`) holding only the test CA.
    static let testCADirectory = file("COURIER_TEST_CA_DIR")
    /// An unrelated CA (PEM) that signed none of the servers' certificates.
    static let otherCA = file("COURIER_TEST_OTHER_CA_FILE")
    /// The client certificate and key (PEM) the mutual-TLS servers accept.
    static let clientCertificate = file("COURIER_TEST_CLIENT_CERT")
    static let clientKey = file("COURIER_TEST_CLIENT_KEY")
    /// The same certificate and key in one PEM file.
    static let clientCombined = file("COURIER_TEST_CLIENT_COMBINED")
    /// The same certificate and key as PKCS#12, with `clientP12Password`.
    static let clientP12 = file("COURIER_TEST_CLIENT_P12")
    static let clientP12Password = ProcessInfo.processInfo.environment["COURIER_TEST_CLIENT_P12_PASSWORD"]
    /// A client certificate and key (PEM) from a CA the mutual-TLS servers do not trust.
    static let rogueClientCertificate = file("COURIER_TEST_ROGUE_CLIENT_CERT")
    static let rogueClientKey = file("COURIER_TEST_ROGUE_CLIENT_KEY")
    /// The public-key pin of every TLS server but the expired, wrong-host and self-signed ones, as curl spells it:
    /// `sha256//` + base64 of the SHA-256 of the certificate's SubjectPublicKeyInfo (DER).
    static let serverPin = ProcessInfo.processInfo.environment["COURIER_TEST_SERVER_PIN"]
    /// A pin in the same form that matches no server (the other CA's key).
    static let wrongPin = ProcessInfo.processInfo.environment["COURIER_TEST_WRONG_PIN"]

    private static func url(_ variable: String) -> URL? {
        InteropEnvironment.url(variable, group: group(of: variable))
    }

    /// The group of interop tests a server's variable belongs to, as the skip notice names it.
    private static func group(of variable: String) -> String {
        switch variable {
        case "COURIER_HTTPBIN_URL": "interop tests with httpbin"
        case "COURIER_PY_MTLS_URL": "interop tests with the mutual-TLS Python server"
        case "COURIER_SSE_URL": "interop tests with the Server-Sent Events server (sse-starlette)"
        default: "interop tests with nginx (HTTP, HTTPS, HTTP/2, h2c, TLS failures)"
        }
    }

    private static func file(_ variable: String) -> URL? {
        ProcessInfo.processInfo.environment[variable].map { URL(fileURLWithPath: $0) }
    }
}
