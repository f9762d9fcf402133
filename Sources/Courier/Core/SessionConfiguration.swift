import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a ``Session`` talks to the network: transport, timeouts, cookies and connection limits.
///
/// **HTTP caching.** Off by default (``httpCache`` is ``HTTPCacheMode/disabled``): both transports
/// send every request to the network, whatever `Cache-Control`, `Expires` or validators say, and
/// revalidation headers you set yourself (`If-None-Match`, `If-Modified-Since`) are sent as given,
/// with a `304` reaching your handlers like any other response. With ``httpCache`` on, Courier's
/// own cache (RFC 9111, in the session's ``ResponseCache``) serves, stores and revalidates
/// responses the same way on both transports; `URLCache` stays off on every platform.
public struct SessionConfiguration: Sendable {
    /// Which transport carries requests.
    public enum TransportChoice: Sendable {
        /// libcurl on Linux (falling back to URLSession, with an event-monitor notice, if libcurl
        /// cannot be loaded); URLSession on Apple platforms.
        case automatic
        /// Courier's libcurl multi transport, libcurl loaded at run time (Linux).
        case curl
        /// Foundation's URLSession with this configuration. Courier still handles redirects,
        /// cookies, timeouts and pause itself, so those settings here are overridden.
        case urlSession(URLSessionConfiguration)
    }

    /// Where cookies come from and go to.
    public enum Cookies: Sendable {
        /// `HTTPCookieStorage.shared`.
        case shared
        /// No cookies are sent or stored.
        case none
        /// A storage of your own.
        case storage(HTTPCookieStorage)

        var storage: HTTPCookieStorage? {
            switch self {
            case .shared: .shared
            case .none: nil
            case .storage(let storage): storage
            }
        }
    }

    /// The default configuration: automatic transport, 60 s idle timeout, 7-day resource timeout,
    /// shared cookies, 8 connections per host, in-memory bodies up to 256 MiB, downloads unlimited,
    /// no minimum transfer rate.
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// Which transport carries requests.
    public var transport: TransportChoice = .automatic
    /// Whether responses are cached by the HTTP rules (RFC 9111) in the session's
    /// ``ResponseCache``: ``HTTPCacheMode/disabled`` by default (see ``HTTPCacheMode`` for why).
    /// A request's own ``Request/cachePolicy(_:)`` overrides it.
    public var httpCache: HTTPCacheMode = .disabled
    /// Idle timeout in seconds: the longest silence allowed while a request is running
    /// (sub-second values work). A request's own `timeout:` overrides it.
    public var requestTimeout: TimeInterval = 60
    /// Whole-request limit in seconds, across redirects and retries, enforced by Courier.
    public var resourceTimeout: TimeInterval = 7 * 24 * 3600
    /// Maximum open connections per host.
    public var maximumConnectionsPerHost: Int = 8
    /// Cookie handling.
    public var cookies: Cookies = .shared
    /// Extra certificate authorities (PEM files) to trust in addition to the system trust store:
    /// the same as `tls.trustRoots = .system(adding: certificates)`, and added to whatever
    /// ``tls`` trusts (curl transport; URLSession uses the platform's trust evaluation).
    public var additionalTrustedCertificates: [URL] = []
    /// Trust roots, client certificate, public-key pins, minimum TLS version (see ``TLSConfiguration``).
    public var tls: TLSConfiguration = .default
    /// The HTTP version requests speak: ``HTTPVersion/automatic`` (HTTP/2 over TLS when the server
    /// offers it) by default. A request's own ``Request/httpVersion(_:)`` wins.
    ///
    /// Over HTTP/2, concurrent requests to one origin share one connection (up to the server's
    /// stream limit, beyond which more connections open; on the curl transport one more beyond 100
    /// requests in flight, and the requests beyond both connections' streams wait for one);
    /// ``maximumConnectionsPerHost`` then bounds connections, not requests in flight.
    public var httpVersion: HTTPVersion = .automatic
    /// Whether an origin that advertises HTTP/3 in an `Alt-Svc` response header (RFC 7838) gets
    /// the session's later ``HTTPVersion/automatic`` requests over HTTP/3 (QUIC, to the advertised
    /// port). Off by default.
    ///
    /// The session keeps what origins advertised in memory, for the advertisement's `ma` (24 hours
    /// at most) and at most 256 origins. A request whose QUIC connection cannot be made goes over
    /// TCP again, and that origin's advertisement is ignored for 5 minutes. It needs the curl
    /// transport with a libcurl built with HTTP/3 (``Libcurl/supportsHTTP3``); on one without,
    /// requests go as ``HTTPVersion/automatic`` says. The URLSession transport refuses it.
    public var usesHTTP3WhenAdvertised = false
    /// Maximum redirects followed before failing with `.tooManyRedirects`; 0 follows none.
    public var maximumRedirects: Int = 16
    /// Whether and how redirects are followed (a request's own policy wins).
    public var redirectPolicy: RedirectPolicy = .follow
    /// Ask servers for compressed bodies and decode them. When `false`, Courier sends no
    /// `Accept-Encoding` of its own (one you set is sent as given) and bodies arrive as sent.
    public var automaticDecompression: Bool = true
    /// Where Courier writes its own temporary files (downloads in progress, large multipart bodies).
    /// They are removed when the request ends, whatever the outcome. By default
    /// `courier-<user id>` in the system's temporary directory; it must be a directory this
    /// process's user owns (created `0700` when absent) or a shared one with the sticky bit, such
    /// as `/tmp`: another user's directory fails the requests that need it with `.fileSystem`.
    public var temporaryDirectory: URL = TemporaryFiles.defaultDirectory
    /// The largest response body, in decoded bytes, that Courier keeps in memory (data, string,
    /// JSON and decodable responses, and the body kept with a failure): 256 MiB by default,
    /// `nil` for no limit. A body that grows past it stops the transfer at once and fails with
    /// `.responseTooLarge`; a `Content-Length` above it fails at the head without reading the body.
    /// A request's own ``Request/maximumResponseSize(_:)`` wins. Streams have no size limit; what
    /// waits for their consumer is bounded (``maximumStreamBacklog``).
    public var maximumResponseSize: Int? = 256 << 20
    /// The most bytes of a streamed response (`streamRequest`, an event stream) that may wait for
    /// a consumer that is not taking them: 16 MiB by default, `nil` for no bound. The curl
    /// transport never gets near it: it stops reading once a stream's 1 MiB window is full, which
    /// holds the server back. URLSession cannot hold a server back, so on that transport a stream
    /// whose consumer falls further behind stops at once and fails with `.responseTooLarge`,
    /// naming this setting; read faster, raise it, or use the curl transport for large bodies
    /// read slowly.
    public var maximumStreamBacklog: Int? = 16 << 20
    /// The largest file a download may write, in bytes: `nil` (no limit) by default. Checked
    /// against `Content-Length` at the head and while writing; failures are `.responseTooLarge`.
    /// A request's own ``DownloadRequest/maximumDownloadSize(_:)`` wins.
    public var maximumDownloadSize: Int64? = nil
    /// The most decoded bytes a compressed response body may yield per byte received: `100` means
    /// 100:1. `nil` (off) by default. The ratio is checked once at least 1 MiB has been decoded, so
    /// small bodies that compress well always pass; crossing it stops the transfer at once and fails
    /// with `.responseTooLarge`, naming the ratio, the limit and the bytes seen. The curl transport
    /// counts every coded byte received; URLSession, which hands over decoded bytes only, compares
    /// with the body's `Content-Length` and cannot check a coded body sent without one.
    ///
    /// Off by default because the size limits already bound what a decompression bomb can take
    /// (``maximumResponseSize`` counts decoded bytes, and a stream holds the server back), and
    /// because data made mostly of repeats (sparse files, padded exports) legitimately inflates
    /// past any ratio. Where a small response may expand into a large download or an endless
    /// stream, `100` is the usual bound of zip-bomb defences: text and JSON compress 3–20:1,
    /// gzip at its limit about 1000:1. A request's own ``Request/maximumDecompressionRatio(_:)`` wins.
    public var maximumDecompressionRatio: Int? = nil
    /// The slowest a transfer may go before it fails with `.timedOut` (see ``MinimumTransferRate``);
    /// `nil` (off) by default. A request's own ``Request/minimumTransferRate(_:)`` wins.
    public var minimumTransferRate: MinimumTransferRate? = nil
    /// The most header field lines a response head may have (a repeated name counts each time it
    /// appears: Courier keeps every line, see ``DataResponse/headerFields``): 1000 by default,
    /// `nil` for no limit. More fails the request with `.responseTooLarge`. A response's trailer
    /// section (``DataResponse/trailerFields``) is held to the same limit.
    public var maximumResponseHeaderCount: Int? = 1000
    /// The most bytes of header fields a response head may have: 256 KiB by default, `nil` for no
    /// limit of Courier's own. More fails the request with `.responseTooLarge`. libcurl (both
    /// transports on Linux) also refuses heads over 300 KiB, or a single field over 100 KiB. A
    /// response's trailer section is held to the same limits (the curl transport stops reading
    /// one past 300 KiB).
    public var maximumResponseHeadSize: Int? = 256 << 10
    /// The clock retry delays are measured on; tests can inject a clock they control.
    public var retryClock: any Clock<Duration> = ContinuousClock()
    /// The time the transports' timeouts run on (``requestTimeout``, ``resourceTimeout``, the
    /// minimum transfer rate on URLSession); tests inject a ``ManualTransportClock``.
    package var transportClock: TransportClock = .system
    /// Answers `401 Unauthorized` challenges (Basic and Digest) of every request of the session
    /// with this credential, as `request.authenticate(with:)` does for one request; `nil` (the
    /// default) answers none.
    ///
    /// ```swift
    /// var config = SessionConfiguration.default
    /// config.credential = HTTPCredential(username: "bob", password: "secret")
    /// let api = Session(configuration: config, baseURL: apiURL)
    /// ```
    public var credential: HTTPCredential? = nil
    /// Proxy, connect timeout, rate limits and libcurl's account of each transfer: the `courier`
    /// command's `-x`, `--connect-timeout`, `--limit-rate` and `-v` (curl transport only).
    package var transportTuning = TransportTuning()

    /// Creates the default configuration.
    public init() {}

    /// Checks what can be checked before any request: the TLS files are readable, the pins well
    /// formed, and the chosen transport can honour every TLS field. A session whose configuration
    /// fails this fails each of its requests with the same error.
    public func validate() throws(CourierError) {
        try transportConfiguration.tls.validate()
        var usesURLSession = false
        switch transport {
        case .urlSession: usesURLSession = true
        case .curl: usesURLSession = false
        case .automatic:
            #if !canImport(FoundationNetworking)
            usesURLSession = true
            #endif
        }
        if usesURLSession {
            try URLSessionTransport.checkSupport(
                of: transportConfiguration.tls, httpVersion: httpVersion, followsAltSvc: usesHTTP3WhenAdvertised)
        }
    }

    var transportConfiguration: TransportConfiguration {
        var configuration = TransportConfiguration(maximumConnectionsPerHost: maximumConnectionsPerHost)
        configuration.tls = tls
        configuration.tls.trustRoots = tls.trustRoots.adding(additionalTrustedCertificates)
        configuration.usesHTTP3WhenAdvertised = usesHTTP3WhenAdvertised
        configuration.clock = transportClock
        configuration.tuning = transportTuning
        return configuration
    }
}
