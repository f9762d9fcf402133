import CCurl
import Foundation

/// Settings every event loop and easy handle of one transport gets.
struct CurlHandleDefaults: Sendable {
    /// CURLOPT_BUFFERSIZE: the largest receive buffer (bytes read from the socket per call); each
    /// loop gives an origin whose responses are small less (``CurlReceiveBufferSizing``).
    var receiveBufferSize = 256 * 1024
    /// The TLS options of HTTPS transfers.
    var tls = CurlTLSSettings()
    /// The share handle (TLS sessions, DNS) every easy handle uses.
    var share: CurlShare?
    /// Which loop each HTTP/2 origin's transfers go to, and what the loops learned about origins.
    var routing = CurlMultiplexRouting()
    /// The longest a pass on a caller's thread waits for a fast answer (``CurlResponseWait``).
    var responseWaitLimit = CurlResponseWait.defaultLimit
    /// CURLOPT_PROXY and CURLOPT_NOPROXY, from the environment.
    var proxies = CurlProxyEnvironment(environment: [:])
    /// The origins that advertised HTTP/3, when the transport follows `Alt-Svc` (and libcurl speaks HTTP/3).
    var alternativeServices: CurlAlternativeServices?
    /// Connect timeout, rate limits and the debug handler of Courier's tools.
    var tuning = TransportTuning()
    /// The time Courier's timeouts run on.
    var clock = TransportClock.system
    /// How many transfers the transport's loops carry in all (``CurlLoopScheduling``).
    var transfers = CurlTransferGauge()
}

/// Turns a ``TransportRequest`` into easy-handle options: URL, method, headers in order, body
/// callbacks and content decoding. Callbacks are wired separately by ``CurlExchange``.
enum CurlRequestBuilder {
    /// The method, body length and decoding choices derived from a request.
    struct Plan: Equatable {
        /// How libcurl is told the method.
        enum Method: Equatable {
            /// Plain GET (libcurl's default).
            case get
            /// HEAD through CURLOPT_NOBODY.
            case head
            /// Any method with a body: CURLOPT_UPLOAD, CURLOPT_INFILESIZE_LARGE and CURLOPT_CUSTOMREQUEST.
            case upload(String, length: Int64)
            /// Any other method without a body, through CURLOPT_CUSTOMREQUEST.
            case custom(String)
        }

        /// How to send the method.
        var method: Method
        /// The request's header fields, validated, in order.
        var fields: HTTPHeaders
        /// Whether `Expect:` goes out too, which stops libcurl adding `Expect: 100-continue`.
        var suppressesExpect: Bool
        /// The `Accept-Encoding` the transport adds (every coding it decodes here) when decoding
        /// and the request has none of its own; it is in ``fields`` too. libcurl's own decoding is
        /// always off: ``CurlExchange`` decodes, so that a paused transfer holds coded bytes only.
        var acceptEncoding: String?
        /// CURLOPT_HTTP_VERSION.
        var httpVersion = Int(CCURL_HTTP_VERSION_2TLS)
        /// CURLOPT_PIPEWAIT: wait for a connection that may multiplex rather than open another.
        var waitsToMultiplex = false
        /// CURLOPT_FRESH_CONNECT and CURLOPT_FORBID_REUSE: a connection of its own, closed afterwards.
        var isolatesConnection = false
        /// The HTTP/3 alternative service the request goes to (over QUIC, CURLOPT_CONNECT_TO), if any.
        var alternative: AltSvcAlternative?
        /// CURLOPT_HTTP_VERSION when the request goes over TCP after its alternative failed.
        var tcpHTTPVersion = Int(CCURL_HTTP_VERSION_2TLS)

        /// The longest a QUIC connection to an alternative may take before the request goes over
        /// TCP instead: a black-holed UDP port must not cost the whole idle timeout.
        static let alternativeConnectLimit = Duration.seconds(10)

        /// Whether a request body is sent.
        var sendsBody: Bool {
            if case .upload = method { true } else { false }
        }

        /// The lines CURLOPT_HTTPHEADER gets, in order (as ``CurlRequestBuilder/apply(_:for:to:defaults:receiveBufferSize:)`` builds them).
        var headerLines: [String] {
            var lines = fields.map { header in withLine(name: header.name, value: header.value) { String(cString: $0) } }
            if suppressesExpect { lines.append(withLine(name: "Expect", value: nil) { String(cString: $0) }) }
            return lines
        }
    }

    /// Works out the plan, over HTTP/3 to `alternative` when one is given and the request lets the
    /// transport choose its version; throws `.invalidRequest` for a header libcurl cannot send as
    /// given, and `.httpVersionUnavailable` for a version the URL or libcurl cannot have.
    static func plan(for request: TransportRequest, alternative: AltSvcAlternative? = nil) throws(CourierError) -> Plan {
        let name = request.method.rawValue
        let method: Plan.Method
        switch request.method {
        case .head:
            method = .head
        case .get where request.body == .empty:
            method = .get
        case .post, .put, .patch:
            method = .upload(name, length: request.body.length)
        default:
            method = request.body == .empty ? .custom(name) : .upload(name, length: request.body.length)
        }

        for header in request.headers {
            // The engine checks this before any transport sees the request (WireSyntax); kept
            // here because libcurl would put the line on the wire as it is.
            guard WireSyntax.isToken(header.name), WireSyntax.isFieldValue(header.value) else {
                throw CourierError(.invalidRequest, "The header \(WireSyntax.quoted(header.name)) is not valid HTTP.", url: request.url)
            }
        }
        var plan = Plan(method: method, fields: request.headers, suppressesExpect: false, acceptEncoding: nil)
        let secure = request.url.scheme?.lowercased() == "https"
        let sendsTrailers = if case .stream(let stream) = request.body { stream.sendsTrailers } else { false }
        // libcurl sends request trailers only after a chunked HTTP/1.1 body (an HTTP/2 stream
        // would end without them): such a request goes over HTTP/1.1 or is refused.
        if sendsTrailers, request.body.length >= 0 {
            throw CourierError(
                .invalidRequest,
                "Request trailers follow a chunked body, which has no Content-Length: give the body no length.", url: request.url)
        }
        if sendsTrailers, request.httpVersion != .automatic, request.httpVersion != .http1_1 {
            throw CourierError(
                .httpVersionUnavailable,
                "Request trailers are sent over HTTP/1.1 only (libcurl sends them after a chunked body), "
                    + "but the request requires \(request.httpVersion).", url: request.url)
        }
        switch request.httpVersion {
        case .automatic where sendsTrailers:
            plan.httpVersion = Int(CCURL_HTTP_VERSION_1_1)
            plan.isolatesConnection = secure && !CurlLibrary.keepsHTTP1_1OffHTTP2
        case .automatic where request.consumerSetsPace && !CurlLibrary.pausesHTTP2StreamsIndependently:
            // Its long pauses would hold up every other stream of a shared HTTP/2 connection
            // (libcurl before 8.1.0): a connection of its own, over HTTP/1.1.
            plan.httpVersion = Int(CCURL_HTTP_VERSION_1_1)
        case .automatic:
            plan.httpVersion = Int(CCURL_HTTP_VERSION_2TLS)
        case .http1_1:
            plan.httpVersion = Int(CCURL_HTTP_VERSION_1_1)
            // libcurl before 7.77.0 may send it on an HTTP/2 connection it has open to the same
            // host (curl issue 6862): a connection of its own there.
            plan.isolatesConnection = secure && !CurlLibrary.keepsHTTP1_1OffHTTP2
        case .http2:
            guard secure else {
                throw CourierError(
                    .httpVersionUnavailable,
                    "HTTP/2 is negotiated over TLS only: use https, or "
                        + ".http2PriorKnowledge for a cleartext HTTP/2 server.", url: request.url)
            }
            plan.httpVersion = Int(CCURL_HTTP_VERSION_2TLS)
        case .http2PriorKnowledge:
            plan.httpVersion = Int(secure ? CCURL_HTTP_VERSION_2TLS : CCURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE)
            // libcurl before 8.0.0 breaks the framing of a second request on a cleartext HTTP/2
            // connection (curl issue 10634): each request gets a connection of its own there.
            plan.isolatesConnection = !secure && !CurlLibrary.reusesCleartextHTTP2
        case .http3:
            guard secure else {
                throw CourierError(.httpVersionUnavailable, "HTTP/3 runs over TLS only: use https.", url: request.url)
            }
            guard let library = CurlLibrary.inUse, library.speaksHTTP3 else {
                let loaded = CurlLibrary.inUse.map { "libcurl \($0.version) from \($0.path)" } ?? "The libcurl in use"
                throw CourierError(
                    .httpVersionUnavailable,
                    "\(loaded) was built without HTTP/3: choose one built with it (COURIER_LIBCURL, Libcurl.load(from:)).",
                    url: request.url)
            }
            plan.httpVersion = library.http3OnlyVersion
        }
        plan.tcpHTTPVersion = plan.httpVersion
        if let alternative, request.httpVersion == .automatic, secure, plan.httpVersion == Int(CCURL_HTTP_VERSION_2TLS),
            let library = CurlLibrary.inUse, library.speaksHTTP3
        {
            plan.alternative = alternative
            plan.httpVersion = library.http3OnlyVersion
        }
        plan.waitsToMultiplex =
            plan.httpVersion != Int(CCURL_HTTP_VERSION_1_1) && (secure || request.httpVersion == .http2PriorKnowledge)
            && !plan.isolatesConnection
        // libcurl adds `Expect: 100-continue` to every upload, which costs a round trip (or a
        // one-second wait on servers that ignore it); Courier sends it only when asked to.
        plan.suppressesExpect = plan.sendsBody && !request.headers.contains("Expect")
        // With decoding on, Courier advertises what it can decode; a caller's own Accept-Encoding
        // header is sent instead, and decoding stays on. With no decoder at all it asks for
        // identity: a request without the field would accept any coding (RFC 9110 §12.5.3).
        if request.automaticDecompression, !request.headers.contains("Accept-Encoding") {
            let codings = CurlContentCoding.advertised ?? "identity"
            plan.acceptEncoding = codings
            plan.fields.append(name: "Accept-Encoding", value: codings)
        }
        return plan
    }

    /// Applies `plan` to `easy` for `request`, with a receive buffer of `receiveBufferSize` bytes
    /// (by default the transport's); returns the header list, which must outlive the transfer and be
    /// freed with `ccurl_slist_free_all` afterwards.
    static func apply(
        _ plan: Plan, for request: TransportRequest, to easy: CurlEasyHandle,
        defaults: CurlHandleDefaults, receiveBufferSize: Int? = nil
    ) throws(CourierError) -> OpaquePointer? {
        let handle = easy.pointer
        let urlString = request.url.absoluteString
        let urlResult = urlString.withCString { ccurl_easy_setopt_ptr(handle, CCURLOPT_URL, $0) }
        guard urlResult == CCURLE_OK else {
            throw CourierError(
                .invalidURL, "libcurl rejected the URL: \(CurlError(code: urlResult).text)",
                underlyingError: CurlError(code: urlResult), url: request.url)
        }
        try easy.set(.protocols, Int(CCURLPROTO_HTTP | CCURLPROTO_HTTPS))
        try easy.set(.noSignal, 1)
        try easy.set(.tcpNoDelay, 1)
        try easy.set(.followLocation, 0)
        try easy.set(.suppressConnectHeaders, 1)
        let sized = ccurl_easy_setopt_long(handle, CCURLOPT_BUFFERSIZE, receiveBufferSize ?? defaults.receiveBufferSize)
        // libcurl 7.73 to 8.6 refuses a new size while the handle still has a receive buffer (a
        // reused handle whose last transfer was cut short keeps it) and goes on with that buffer,
        // which this loop sized already: there, only a fresh handle's refusal is a failure.
        let tolerated = easy.hasServedTransfer && sized == CCURLE_BAD_FUNCTION_ARGUMENT && CurlLibrary.refusesBufferSizeOnReusedHandles
        if !tolerated { try easy.check(.bufferSize, sized) }
        try easy.set(.errorBuffer, pointer: easy.errorBuffer)
        try easy.set(.proxy, string: defaults.proxies.proxy(for: urlString))
        try easy.set(.noProxy, string: defaults.proxies.noProxy ?? "")
        if let share = defaults.share { try easy.check(.share, ccurl_easy_setopt_share(handle, share.pointer)) }
        let secure = request.url.scheme?.lowercased() == "https"
        if secure { try defaults.tls.apply(to: easy, for: request.url) }
        try easy.set(.httpVersion, plan.httpVersion)
        if plan.alternative != nil {
            let limit = min(Plan.alternativeConnectLimit, request.idleTimeout.map { $0 / 2 } ?? Plan.alternativeConnectLimit)
            try easy.set(
                .connectTimeoutMilliseconds, max(1, Int(limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000)))
        }
        try easy.set(.pipeWait, plan.waitsToMultiplex ? 1 : 0)
        if plan.isolatesConnection != easy.isolatesConnection {
            try easy.set(.freshConnect, plan.isolatesConnection ? 1 : 0)
            try easy.set(.forbidReuse, plan.isolatesConnection ? 1 : 0)
            easy.isolatesConnection = plan.isolatesConnection
        }
        // Set on every transfer, 0 included: a reused handle would otherwise keep the last one's.
        // libcurl skips the check while the transfer is paused, so suspend and backpressure do not trip it.
        try easy.set(.lowSpeedLimit, request.minimumTransferRate?.bytesPerSecond ?? 0)
        try easy.set(.lowSpeedTime, request.minimumTransferRate?.wholeSeconds ?? 0)
        try applyTuning(defaults.tuning, to: easy)

        switch plan.method {
        case .get:
            break
        case .head:
            try easy.set(.noBody, 1)
        case .upload(let method, let length):
            try easy.set(.upload, 1)
            try easy.set(.inFileSizeLarge, offset: length)
            try easy.set(.customRequest, string: method)
        case .custom(let method):
            try easy.set(.customRequest, string: method)
        }

        // libcurl never decodes (over HTTP/2 it would even without CURLOPT_ACCEPT_ENCODING), on
        // every version: a transfer paused while libcurl decodes keeps a whole read's decoded output,
        // however large (8.13.0's pause writer holds coded bytes, but what one read decoded to before
        // the pause is still buffered, up to about 75 MB: curl issue 16280).
        try easy.set(.httpContentDecoding, 0)

        var list: OpaquePointer?
        for header in plan.fields {
            list = try appendLine(name: header.name, value: header.value, to: list, url: request.url)
        }
        if plan.suppressesExpect { list = try appendLine(name: "Expect", value: nil, to: list, url: request.url) }
        guard let list else { return nil }
        do {
            try easy.set(.httpHeader, pointer: UnsafeRawPointer(list))
        } catch {
            ccurl_slist_free_all(list)
            throw error
        }
        return list
    }

    /// CURLOPT_CONNECT_TO for a plan with an alternative: the connection goes to the alternative's
    /// host and port (TLS still verifies the URL's host). Returns the list, which must outlive the
    /// transfer and be freed with `ccurl_slist_free_all` afterwards; `nil` without an alternative.
    static func applyAlternative(_ plan: Plan, for url: URL, to easy: CurlEasyHandle) throws(CourierError) -> OpaquePointer? {
        guard let alternative = plan.alternative, let host = url.host(percentEncoded: true) else { return nil }
        let origin = host.contains(":") ? "[\(host)]" : host
        let line = "\(origin):\(url.port ?? 443):\(alternative.host ?? ""):\(alternative.port)"
        guard let list = ccurl_slist_append(nil, line) else {
            throw CourierError(.transportFailed, "libcurl could not allocate the connect-to list.", url: url)
        }
        do {
            try easy.set(.connectTo, pointer: UnsafeRawPointer(list))
        } catch {
            ccurl_slist_free_all(list)
            throw error
        }
        return list
    }

    /// Puts a transfer that went to its alternative back on TCP, as its plan would have sent it
    /// without one.
    static func removeAlternative(_ plan: Plan, from easy: CurlEasyHandle, tuning: TransportTuning) throws(CourierError) {
        try easy.set(.connectTo, pointer: nil)
        try easy.set(.connectTimeoutMilliseconds, 0)
        try easy.set(.httpVersion, plan.tcpHTTPVersion)
        // The tools' own connect timeout, which the alternative's replaced.
        try applyTuning(tuning, to: easy)
    }

    /// The connect timeout and rate limits of Courier's tools; nothing when they set none (a reused
    /// handle was reset, so libcurl's defaults hold).
    private static func applyTuning(_ tuning: TransportTuning, to easy: CurlEasyHandle) throws(CourierError) {
        if let timeout = tuning.connectTimeout {
            let milliseconds = timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
            try easy.set(.connectTimeoutMilliseconds, Int(clamping: max(1, milliseconds)))
        }
        if let rate = tuning.maximumReceiveRate { try easy.set(.maximumReceiveSpeed, offset: rate) }
        if let rate = tuning.maximumSendRate { try easy.set(.maximumSendSpeed, offset: rate) }
    }

    /// Appends `Name: value` to a libcurl header list (which copies it).
    private static func appendLine(name: String, value: String?, to list: OpaquePointer?, url: URL) throws(CourierError) -> OpaquePointer {
        guard let appended = withLine(name: name, value: value, { ccurl_slist_append(list, $0) }) else {
            // libcurl leaves the list as it was when an append fails.
            ccurl_slist_free_all(list)
            throw CourierError(.transportFailed, "libcurl could not allocate the request headers.", url: url)
        }
        return appended
    }

    /// Calls `body` with the header line `Name: value` as a C string built on the stack. An empty
    /// value goes out as `Name;` ("Name:" would tell libcurl to drop its own header of that name);
    /// a `nil` one as `Name:`, which does just that.
    fileprivate static func withLine<Result>(name: String, value: String?, _ body: (UnsafePointer<CChar>) -> Result) -> Result {
        var name = name
        var text = value ?? ""
        let separator: (first: UInt8, second: UInt8?) =
            switch value {
            case nil: (UInt8(ascii: ":"), nil)
            case ""?: (UInt8(ascii: ";"), nil)
            default: (UInt8(ascii: ":"), UInt8(ascii: " "))
            }
        return name.withUTF8 { nameBytes in
            text.withUTF8 { valueBytes in
                let count = nameBytes.count + 2 + valueBytes.count + 1
                return withUnsafeTemporaryAllocation(of: CChar.self, capacity: count) { buffer in
                    var index = 0
                    func put(_ byte: UInt8) {
                        buffer[index] = CChar(bitPattern: byte)
                        index += 1
                    }
                    nameBytes.forEach(put)
                    put(separator.first)
                    if let second = separator.second { put(second) }
                    valueBytes.forEach(put)
                    put(0)
                    // Never nil: the buffer holds at least the separator and the terminating NUL.
                    return body(UnsafePointer(buffer.baseAddress.unsafelyUnwrapped))
                }
            }
        }
    }
}
