import Foundation

/// Moves one HTTP exchange over the network. Courier's request layer sits on top: it applies
/// adapters, cookies, redirects, retries, validation and serialization, and hands the transport
/// exactly one request at a time per ``TransportTransfer``.
///
/// The contract every transport keeps:
/// - Redirects are never followed by the transport; a 3xx is delivered like any response.
/// - Events for one transfer reach its ``TransportEventSink`` serially (never concurrently), in order:
///   `uploadProgress`* , `response`, (`uploadProgress` | `body`)*, then exactly one `completed`.
///   Nothing is delivered after `completed`. A failure before the head skips `response`.
/// - The sink is called on a transport thread and must return quickly without blocking.
/// - `cancel()` at any time, from any thread, leads to exactly one `completed` (with `.cancelled`
///   unless the transfer had already completed), and stops network work promptly.
/// - Body bytes delivered but not yet acknowledged never exceed ``TransportRequest/flowControlWindow``
///   by more than one read: the transport stops reading until ``TransportTransfer/acknowledge(_:)``
///   brings the backlog down (transports that cannot pause say so in ``TransportCapabilities``).
/// - Idle and resource timeouts are enforced by the transport and reported as `.timedOut`; time
///   spent suspended does not count towards the idle timeout.
///
/// Not part of Courier's public API: it is `@_spi(Transport)` so that benchmarks can drive a
/// transport directly.
@_spi(Transport) public protocol Transport: AnyObject, Sendable {
    /// What this transport can and cannot do.
    var capabilities: TransportCapabilities { get }

    /// Starts the exchange at once and returns its handle.
    func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer

    /// Cancels every transfer and releases threads and handles. Idempotent.
    func shutdown()
}

/// What a transport supports; Courier's request layer fills the gaps (for example its own
/// pause-by-range on URLSession).
@_spi(Transport) public struct TransportCapabilities: Sendable, Hashable {
    /// The transport's name in metrics and logs: `"curl"` or `"urlSession"`.
    public var name: String
    /// `suspend()` really pauses the transfer and keeps the connection.
    public var pausesInPlace: Bool
    /// The transport honours ``TransportRequest/flowControlWindow``.
    public var appliesBackpressure: Bool
}

/// Settings fixed for a transport's lifetime, taken from ``SessionConfiguration``.
@_spi(Transport) public struct TransportConfiguration: Sendable {
    /// Maximum open connections per host (scheme + host + port).
    public var maximumConnectionsPerHost: Int = 8
    /// How TLS connections are secured.
    public var tls = TLSConfiguration()
    /// Proxy, connect timeout, rate limits and libcurl's account of each transfer, for Courier's tools.
    package var tuning = TransportTuning()
    /// Extra certificate authorities (PEM files) trusted in addition to ``tls``'s trust roots.
    public var additionalTrustedCertificates: [URL] {
        get { tls.trustRoots.includesSystem ? tls.trustRoots.certificateFiles : [] }
        set { tls.trustRoots = TLSConfiguration.TrustRoots.system.adding(newValue) }
    }
    /// The time the transport's timeouts run on (a test's ``ManualTransportClock``, or the system's).
    package var clock: TransportClock = .system

    /// Whether origins that advertise HTTP/3 with `Alt-Svc` get later automatic requests over it
    /// (``SessionConfiguration/usesHTTP3WhenAdvertised``).
    public var usesHTTP3WhenAdvertised = false

    /// Creates a configuration.
    public init(maximumConnectionsPerHost: Int = 8, additionalTrustedCertificates: [URL] = []) {
        self.maximumConnectionsPerHost = maximumConnectionsPerHost
        tls.trustRoots = TLSConfiguration.TrustRoots.system.adding(additionalTrustedCertificates)
    }
}

/// One exchange as it goes on the wire.
@_spi(Transport) public struct TransportRequest: Sendable {
    /// The absolute http(s) URL.
    public let url: URL
    /// The method.
    public var method: HTTPMethod
    /// Every header to send, in order (Courier has already merged defaults, cookies and adapters).
    public var headers: HTTPHeaders
    /// The body.
    public var body: TransportBody
    /// Maximum silence (no byte sent or received) before `.timedOut`; `nil` for none.
    public var idleTimeout: Duration?
    /// The instant after which the exchange fails with `.timedOut`, whatever the activity.
    public var deadline: ContinuousClock.Instant?
    /// Ask for and decode compressed bodies (`gzip`, `deflate`, and what else the transport has).
    /// Off for Range requests, which need identity bytes.
    public var automaticDecompression: Bool
    /// Maximum body bytes delivered to the sink and not yet acknowledged.
    public var flowControlWindow: Int
    /// The slowest the exchange may go before it fails with `.timedOut`; `nil` for no minimum.
    public var minimumTransferRate: MinimumTransferRate?
    /// The HTTP version to speak.
    public var httpVersion: HTTPVersion = .automatic
    /// Whether a consumer takes the body at its own pace (a stream), so the transfer may stay
    /// paused by ``flowControlWindow`` for long. A transport whose pause would hold up other
    /// requests sharing the connection gives such a transfer a connection of its own.
    public var consumerSetsPace = false
    /// Whether the response body is expected to be large (a download or a stream): a transport that
    /// sizes its read buffer from the origin's earlier, smaller responses gives such a transfer its
    /// largest one instead.
    public var expectsLargeBody = false
    /// The body size (decoded bytes of this exchange) past which the request layer fails the
    /// exchange; a transport may stop reading once it is crossed, after delivering the chunk that
    /// crossed it, or at a head whose `Content-Length` is above it. `nil` for no limit.
    public var maximumBodySize: Int64?
    /// The most decoded bytes per coded byte received (`100` for 100:1): once at least 1 MiB has
    /// been decoded, a body past it fails the exchange with `.responseTooLarge` and the transport
    /// stops reading. Only the transport sees coded bytes, so it enforces this; `nil` for no limit.
    public var maximumDecompressionRatio: Int?
    /// The most body bytes delivered and not yet acknowledged that a transport which cannot
    /// pause (``TransportCapabilities/appliesBackpressure`` is `false`) lets wait: past it the
    /// exchange fails with `.responseTooLarge` and the transport stops reading. A transport that
    /// pauses at ``flowControlWindow`` never gets there. `nil` for no bound.
    public var maximumUnacknowledgedBytes: Int64?

    /// Creates a request; only the URL is required.
    public init(
        url: URL, method: HTTPMethod = .get, headers: HTTPHeaders = [:], body: TransportBody = .empty,
        idleTimeout: Duration? = .seconds(60), deadline: ContinuousClock.Instant? = nil,
        automaticDecompression: Bool = true, flowControlWindow: Int = 4 << 20
    ) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.automaticDecompression = automaticDecompression
        self.flowControlWindow = flowControlWindow
    }
}

/// A request body as the transport reads it.
@_spi(Transport) public enum TransportBody: Sendable, Hashable {
    /// No body.
    case empty
    /// Bytes in memory, sent with `Content-Length`.
    case data(Data)
    /// A file streamed from disk, sent with `Content-Length: length`; never loaded whole.
    case file(URL, length: Int64)
    /// Bytes read from an `InputStream` or an `AsyncSequence`, once: sent with `Content-Length`
    /// when the stream declares its length (curl; FoundationNetworking sends every stream
    /// chunked), chunked (HTTP/1.1) when it does not.
    case stream(BodyStream)

    /// The body length in bytes; -1 for a stream that declares none.
    public var length: Int64 {
        switch self {
        case .empty: 0
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(let stream): stream.declaredLength ?? -1
        }
    }
}

/// The status line and headers of a final (non-1xx) response.
@_spi(Transport) public struct ResponseHead: Sendable {
    /// The status code.
    public let statusCode: Int
    /// Headers, one value per name; repeated fields are joined with ", " (RFC 9110 §5.3).
    public var headers: HTTPHeaders
    /// Every `Set-Cookie` field, which cannot be joined.
    public let setCookies: [String]
    /// Every field line as it arrived, in order, repeated names (each `Set-Cookie`) apart: what
    /// ``HTTPHeaders`` callers read as the response's `headerFields`. Bounded with the rest of the
    /// head by the transport's head-size limit.
    public let fields: HTTPHeaders
    /// The URL that answered.
    public var url: URL
    /// `"HTTP/1.1"`, `"HTTP/2"`, ...
    public let httpVersion: String
    /// Where the `HTTPURLResponse` built for this head may be kept for the next equal head
    /// (a replayed stored response); `nil` for a head from the network.
    var responseMemo: HTTPResponseMemo?
    /// Whether the transport undid the content coding `Content-Encoding` names, so the body it
    /// delivers is decoded although the field still says how it travelled. `false` when no coding
    /// applies or the body is delivered as it came (decoding off, or a transport that does not
    /// say): a response cache then keeps the field with the still-coded body.
    var bodyIsDecoded = false

    /// Builds a head from raw header fields in arrival order.
    public init(statusCode: Int, fields: [(name: String, value: String)], url: URL, httpVersion: String) {
        self.statusCode = statusCode
        self.url = url
        self.httpVersion = httpVersion
        var setCookies: [String] = []
        var lengthsSeen: UInt64 = 0
        let headers =
            fields.count <= Self.fieldsJoinedBySearching
            ? Self.joinedBySearching(fields, setCookies: &setCookies, lengthsSeen: &lengthsSeen)
            : Self.joinedByIndex(fields, setCookies: &setCookies, lengthsSeen: &lengthsSeen)
        self.headers = headers
        self.setCookies = setCookies
        if headers.count == fields.count {
            // No name repeated (most heads): the joined headers are the lines, sharing storage.
            self.fields = headers
        } else {
            var lines = HTTPHeaders(minimumCapacity: fields.count)
            for field in fields { lines.append(name: field.name, value: field.value) }
            self.fields = lines
        }
        self.expectedContentLength = Self.announcedLength(in: headers, nameLengths: lengthsSeen)
    }

    /// Up to this many fields, repeated names are found by searching the names added so far (the
    /// fastest way for the heads servers send); a longer head is joined through an index, so a
    /// hostile one (42,000 distinct names fit in 256 KiB, or one name 64,000 times) costs linear time,
    /// not 14 s of processor time per response.
    static let fieldsJoinedBySearching = 32

    /// Joins repeated fields into the first one of that name, by search. Names compare with ASCII
    /// case folding, which keeps the UTF-8 length, so two names can only be equal if their lengths
    /// are: a field whose name length has not been seen yet cannot repeat an earlier one and is
    /// appended without a search. `lengthsSeen` gets bit n for a name of n bytes (bit 63 for every
    /// name of 63 bytes or more, which are then searched). The plain rule, `headers.addJoining`
    /// for every field, gives the same headers.
    private static func joinedBySearching(
        _ fields: [(name: String, value: String)], setCookies: inout [String], lengthsSeen: inout UInt64
    ) -> HTTPHeaders {
        var headers = HTTPHeaders(minimumCapacity: fields.count)
        for field in fields {
            if field.name.caseInsensitiveEquals("Set-Cookie") { setCookies.append(field.value) }
            let bit = lengthBit(of: field.name)
            if lengthsSeen & bit == 0 {
                headers.appendDistinct(name: field.name, value: field.value)
            } else {
                headers.addJoining(name: field.name, value: field.value)
            }
            lengthsSeen |= bit
        }
        return headers
    }

    /// Joins repeated fields like ``joinedBySearching(_:setCookies:lengthsSeen:)`` (the same
    /// headers: the first field's position, the last field's spelling, values joined with `", "`
    /// in arrival order), through an index of ASCII-folded name bytes, and each name's values
    /// joined once at the end.
    private static func joinedByIndex(
        _ fields: [(name: String, value: String)], setCookies: inout [String], lengthsSeen: inout UInt64
    ) -> HTTPHeaders {
        var positions: [[UInt8]: Int] = [:]
        var names: [String] = []
        var values: [[String]] = []
        for field in fields {
            if field.name.caseInsensitiveEquals("Set-Cookie") { setCookies.append(field.value) }
            lengthsSeen |= lengthBit(of: field.name)
            let key = field.name.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
            if let position = positions[key] {
                names[position] = field.name
                values[position].append(field.value)
            } else {
                positions[key] = names.count
                names.append(field.name)
                values.append([field.value])
            }
        }
        var headers = HTTPHeaders(minimumCapacity: names.count)
        for (name, fieldValues) in zip(names, values) {
            headers.appendDistinct(name: name, value: fieldValues.count == 1 ? fieldValues[0] : fieldValues.joined(separator: ", "))
        }
        return headers
    }

    /// Bit n for a name of n bytes, bit 63 for a name of 63 bytes or more.
    private static func lengthBit(of name: String) -> UInt64 {
        1 << UInt64(min(name.utf8.count, 63))
    }

    /// `Content-Length` as a number, unless a content coding changes the length on decoding.
    /// `nameLengths` has bit n set when a field name of n bytes is present: a name that is not
    /// there is not looked up.
    private static func announcedLength(in headers: HTTPHeaders, nameLengths: UInt64) -> Int64 {
        // The bits of the two names' lengths: "Content-Encoding" has 16 bytes, "Content-Length" 14.
        let contentEncoding: UInt64 = 1 << 16, contentLength: UInt64 = 1 << 14
        if nameLengths & contentEncoding != 0, let coding = headers.value(for: "Content-Encoding"),
            !coding.trimmedASCII.caseInsensitiveEquals("identity")
        {
            return -1
        }
        guard nameLengths & contentLength != 0, let value = headers.value(for: "Content-Length"),
            let length = Int64(value.trimmedASCII), length >= 0
        else { return -1 }
        return length
    }

    /// The body length the server announced, or -1 (none, or a content coding that the transport
    /// decodes). Meaningless for HEAD, 1xx, 204 and 304.
    public let expectedContentLength: Int64

    /// Why this head's `Content-Length` cannot be trusted, or `nil` when it can (or is absent, or
    /// `Transfer-Encoding` overrides it): RFC 9112 §6.3 makes a response whose length is not one
    /// non-negative decimal number invalid. Repeated fields are joined, so two fields with
    /// different values arrive here as a list (`5, 6`), like a list sent in one field; a list of
    /// one value repeated (`5, 5`) is accepted (RFC 9110 §8.6). Transports read such a body by
    /// one of the values (libcurl by the last, or until the connection closes when the number
    /// overflows), so the body handed out could be cut short or run into the next response.
    var contentLengthProblem: String? {
        guard headers.value(for: "Transfer-Encoding") == nil, let value = headers.value(for: "Content-Length") else { return nil }
        let values = value.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmedASCII }
        let quoted = WireSyntax.quoted(value.count > 64 ? value.prefix(64) + "…" : value)
        guard let first = values.first, values.allSatisfy({ $0 == first }) else {
            return "The response has conflicting Content-Length values (\(quoted))."
        }
        guard !first.isEmpty, first.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return "The response's Content-Length is not a number of bytes (\(quoted))."
        }
        guard Int64(first) != nil else {
            return "The response's Content-Length is too large to be a body length (\(quoted))."
        }
        return nil
    }
}

/// What a transport reports about one exchange.
@_spi(Transport) public enum TransportEvent: Sendable {
    /// Request body bytes sent so far, and the total (or -1).
    case uploadProgress(sent: Int64, total: Int64)
    /// The final response head.
    case response(ResponseHead)
    /// The next piece of the (decoded) response body.
    case body(Data)
    /// The exchange ended: `error` is `nil` on success.
    case completed(error: CourierError?, metrics: TransferMetrics)
}

/// Receives a transfer's events; see ``Transport`` for ordering and threading.
@_spi(Transport) public protocol TransportEventSink: AnyObject, Sendable {
    /// Handles the next event. Called serially; must not block.
    func receive(_ event: TransportEvent)
}

/// A handle on one running exchange. Every method is thread-safe and idempotent.
@_spi(Transport) public protocol TransportTransfer: AnyObject, Sendable {
    /// Stops sending and receiving, keeping the connection when the transport can.
    func suspend()
    /// Continues after ``suspend()``.
    func resume()
    /// Ends the exchange; the sink receives `completed` with `.cancelled` unless it already completed.
    func cancel()
    /// Tells the transport that `bytes` body bytes have been consumed, reopening the flow-control window.
    func acknowledge(_ bytes: Int)
}
