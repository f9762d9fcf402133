import Foundation

/// Timings and byte counts of a request's network transfer, filled by the transport on every platform.
///
/// Durations are `nil` when the transport cannot measure them (URLSession on Linux measures only
/// first byte and total). Across redirects and retries, ``total`` covers the whole request and the
/// phase timings describe the last exchange.
public struct TransferMetrics: Sendable, Hashable, CustomStringConvertible {
    /// When the (last) exchange started.
    public var start: Date
    /// Name resolution.
    public var dnsLookup: Duration?
    /// TCP connect (after DNS).
    public var connect: Duration?
    /// TLS handshake (after connect); `nil` for plain HTTP.
    public var tlsHandshake: Duration?
    /// From the start of the exchange to the first response byte.
    public var timeToFirstByte: Duration?
    /// From the start of the exchange to its end.
    public var total: Duration
    /// Request bytes sent (body included, headers included when the transport counts them).
    public var bytesSent: Int64
    /// Response body bytes received, as delivered (after decompression).
    public var bytesReceived: Int64
    /// Redirects followed before this exchange.
    public var redirectCount: Int
    /// Whether the exchange reused an already-open connection; `nil` when unknown.
    public var connectionReused: Bool?
    /// The HTTP version used, e.g. `"HTTP/1.1"`.
    public var httpVersion: String?
    /// The peer's address, e.g. `"127.0.0.1:8080"`.
    public var remoteAddress: String?
    /// Which transport carried the exchange, e.g. `"curl"` or `"urlSession"`.
    public var transport: String

    /// Creates metrics; transports fill in what they know.
    public init(start: Date = Date(), dnsLookup: Duration? = nil, connect: Duration? = nil, tlsHandshake: Duration? = nil,
                timeToFirstByte: Duration? = nil, total: Duration = .zero, bytesSent: Int64 = 0, bytesReceived: Int64 = 0,
                redirectCount: Int = 0, connectionReused: Bool? = nil, httpVersion: String? = nil,
                remoteAddress: String? = nil, transport: String) {
        self.start = start
        self.dnsLookup = dnsLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.timeToFirstByte = timeToFirstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.redirectCount = redirectCount
        self.connectionReused = connectionReused
        self.httpVersion = httpVersion
        self.remoteAddress = remoteAddress
        self.transport = transport
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
        parts.append("dns=\(ms(dnsLookup)) connect=\(ms(connect)) tls=\(ms(tlsHandshake)) ttfb=\(ms(timeToFirstByte)) total=\(ms(total))")
        parts.append("sent=\(bytesSent)B received=\(bytesReceived)B redirects=\(redirectCount)")
        if let connectionReused { parts.append("reused=\(connectionReused)") }
        if let remoteAddress { parts.append("peer=\(remoteAddress)") }
        return parts.joined(separator: " ")
    }
}
