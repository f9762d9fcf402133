import Foundation

/// Timings and byte counts of a request's network transfer, filled by the transport on every platform.
///
/// Durations are `nil` when the transport cannot measure them (URLSession on Linux measures only
/// first byte and total). Across redirects and retries, ``total`` covers the whole request and the
/// phase timings describe the last exchange.
public struct TransferMetrics: Sendable, Hashable, CustomStringConvertible {
    /// The figures themselves, as one plain value.
    struct Values: Sendable, Hashable {
        var start: Date
        var dnsLookup: Duration?
        var connect: Duration?
        var tlsHandshake: Duration?
        var timeToFirstByte: Duration?
        var total: Duration
        var bytesSent: Int64
        var bytesReceived: Int64
        var redirectCount: Int
        var connectionReused: Bool?
        var httpVersion: String?
        var remoteAddress: String?
        var transport: String
        var tlsVersion: String? = nil
        var tlsCipherSuite: String? = nil
        var source: ResponseSource = .network
    }

    /// An immutable box around the figures, replaced on every change. Metrics ride inside every
    /// completion event, request record and response, which are copied many times per request:
    /// one reference copies cheaper than the figures' 200 bytes.
    private final class Storage: Sendable {
        let values: Values
        init(_ values: Values) { self.values = values }
    }

    private var storage: Storage

    /// The figures, for building metrics in one step (each property setter makes a new box).
    var values: Values { storage.values }

    /// Metrics with these figures.
    init(_ values: Values) {
        storage = Storage(values)
    }

    private mutating func update(_ change: (inout Values) -> Void) {
        var values = storage.values
        change(&values)
        storage = Storage(values)
    }

    /// When the (last) exchange started.
    public var start: Date {
        get { storage.values.start }
        set { update { $0.start = newValue } }
    }
    /// Name resolution.
    public var dnsLookup: Duration? {
        get { storage.values.dnsLookup }
        set { update { $0.dnsLookup = newValue } }
    }
    /// TCP connect (after DNS).
    public var connect: Duration? {
        get { storage.values.connect }
        set { update { $0.connect = newValue } }
    }
    /// TLS handshake (after connect); `nil` for plain HTTP.
    public var tlsHandshake: Duration? {
        get { storage.values.tlsHandshake }
        set { update { $0.tlsHandshake = newValue } }
    }
    /// From the start of the exchange to the first response byte.
    public var timeToFirstByte: Duration? {
        get { storage.values.timeToFirstByte }
        set { update { $0.timeToFirstByte = newValue } }
    }
    /// From the start of the exchange to its end.
    public var total: Duration {
        get { storage.values.total }
        set { update { $0.total = newValue } }
    }
    /// Request bytes sent (body included, headers included when the transport counts them).
    public var bytesSent: Int64 {
        get { storage.values.bytesSent }
        set { update { $0.bytesSent = newValue } }
    }
    /// Response body bytes received, as delivered (after decompression).
    public var bytesReceived: Int64 {
        get { storage.values.bytesReceived }
        set { update { $0.bytesReceived = newValue } }
    }
    /// Redirects followed before this exchange.
    public var redirectCount: Int {
        get { storage.values.redirectCount }
        set { update { $0.redirectCount = newValue } }
    }
    /// Whether the exchange reused an already-open connection; `nil` when unknown.
    public var connectionReused: Bool? {
        get { storage.values.connectionReused }
        set { update { $0.connectionReused = newValue } }
    }
    /// The HTTP version used, e.g. `"HTTP/1.1"`.
    public var httpVersion: String? {
        get { storage.values.httpVersion }
        set { update { $0.httpVersion = newValue } }
    }
    /// The peer's address, e.g. `"127.0.0.1:8080"`.
    public var remoteAddress: String? {
        get { storage.values.remoteAddress }
        set { update { $0.remoteAddress = newValue } }
    }
    /// The TLS version of the connection, e.g. `"TLSv1.3"`; `nil` in the clear or when the
    /// transport cannot tell (URLSession).
    public var tlsVersion: String? {
        get { storage.values.tlsVersion }
        set { update { $0.tlsVersion = newValue } }
    }
    /// The TLS cipher suite of the connection, e.g. `"TLS_AES_256_GCM_SHA384"`; `nil` in the clear
    /// or when the transport cannot tell (URLSession).
    public var tlsCipherSuite: String? {
        get { storage.values.tlsCipherSuite }
        set { update { $0.tlsCipherSuite = newValue } }
    }
    /// Which transport carried the exchange, e.g. `"curl"` or `"urlSession"`.
    public var transport: String {
        get { storage.values.transport }
        set { update { $0.transport = newValue } }
    }
    /// Where the response came from: the network, or the response cache (fresh, revalidated
    /// with a `304`, or stale for a reason).
    public var source: ResponseSource {
        get { storage.values.source }
        set { update { $0.source = newValue } }
    }

    /// Creates metrics; transports fill in what they know.
    public init(
        start: Date = Date(), dnsLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil,
        timeToFirstByte: Duration? = nil, total: Duration = .zero, bytesSent: Int64 = 0, bytesReceived: Int64 = 0,
        redirectCount: Int = 0, connectionReused: Bool? = nil, httpVersion: String? = nil,
        remoteAddress: String? = nil, transport: String
    ) {
        self.init(
            Values(
                start: start, dnsLookup: dnsLookup, connect: connect, tlsHandshake: tlsHandshake,
                timeToFirstByte: timeToFirstByte, total: total, bytesSent: bytesSent, bytesReceived: bytesReceived,
                redirectCount: redirectCount, connectionReused: connectionReused, httpVersion: httpVersion,
                remoteAddress: remoteAddress, transport: transport))
    }

    /// Whether both hold the same figures.
    public static func == (lhs: TransferMetrics, rhs: TransferMetrics) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.values == rhs.storage.values
    }

    /// Hashes the figures.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(storage.values)
    }

    /// One line: transport, version, timings in milliseconds and byte counts.
    public var description: String {
        func ms(_ duration: Duration?) -> String {
            guard let duration else { return "-" }
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return String(format: "%.2fms", seconds * 1000)
        }
        var parts = ["transport=\(transport)"]
        if let httpVersion { parts.append(httpVersion) }
        if let tlsVersion { parts.append(tlsVersion + (tlsCipherSuite.map { " " + $0 } ?? "")) }
        parts.append("dns=\(ms(dnsLookup)) connect=\(ms(connect)) tls=\(ms(tlsHandshake)) ttfb=\(ms(timeToFirstByte)) total=\(ms(total))")
        parts.append("sent=\(bytesSent)B received=\(bytesReceived)B redirects=\(redirectCount)")
        if let connectionReused { parts.append("reused=\(connectionReused)") }
        if let remoteAddress { parts.append("peer=\(remoteAddress)") }
        if source != .network { parts.append("source=\(source)") }
        return parts.joined(separator: " ")
    }
}
