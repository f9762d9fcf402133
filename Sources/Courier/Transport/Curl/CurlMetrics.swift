import CCurl
import Foundation

/// Reads a finished transfer's timings and counters from its easy handle into ``TransferMetrics``.
enum CurlMetrics {
    /// libcurl's cumulative timestamps, in microseconds from the start of the transfer.
    struct Timeline: Equatable {
        var nameLookup: Int64 = 0
        var connect: Int64 = 0
        var appConnect: Int64 = 0
        var startTransfer: Int64 = 0
        var total: Int64 = 0
    }

    /// The metrics of the transfer that just ran on `easy`.
    static func collect(
        from easy: CurlEasyHandle, start: Date, bytesReceived: Int64,
        tls: (version: String, cipher: String?)? = nil, trailerFields: HTTPHeaders? = nil
    ) -> TransferMetrics {
        let handle = easy.pointer
        var timeline = Timeline()
        ccurl_easy_getinfo_off(handle, CCURLINFO_NAMELOOKUP_TIME_T, &timeline.nameLookup)
        ccurl_easy_getinfo_off(handle, CCURLINFO_CONNECT_TIME_T, &timeline.connect)
        ccurl_easy_getinfo_off(handle, CCURLINFO_APPCONNECT_TIME_T, &timeline.appConnect)
        ccurl_easy_getinfo_off(handle, CCURLINFO_STARTTRANSFER_TIME_T, &timeline.startTransfer)
        ccurl_easy_getinfo_off(handle, CCURLINFO_TOTAL_TIME_T, &timeline.total)
        var connects = 0
        ccurl_easy_getinfo_long(handle, CCURLINFO_NUM_CONNECTS, &connects)
        var version = 0
        ccurl_easy_getinfo_long(handle, CCURLINFO_HTTP_VERSION, &version)
        var uploaded: Int64 = 0
        ccurl_easy_getinfo_off(handle, CCURLINFO_SIZE_UPLOAD_T, &uploaded)
        var ip: UnsafePointer<CChar>?
        ccurl_easy_getinfo_string(handle, CCURLINFO_PRIMARY_IP, &ip)
        var port = 0
        ccurl_easy_getinfo_long(handle, CCURLINFO_PRIMARY_PORT, &port)
        let address = ip.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

        var values = phases(of: timeline, reused: address == nil ? nil : connects == 0, start: start)
        values.bytesSent = uploaded
        values.bytesReceived = bytesReceived
        values.httpVersion = httpVersion(Int32(truncatingIfNeeded: version))
        values.tlsVersion = tls?.version
        values.tlsCipherSuite = tls?.cipher
        values.trailerFields = trailerFields
        if let address {
            if let last = easy.lastRemoteAddress, last.ip == address, last.port == port {
                values.remoteAddress = last.text
            } else {
                let text = remoteAddress(ip: address, port: port)
                easy.lastRemoteAddress = (address, port, text)
                values.remoteAddress = text
            }
        }
        return TransferMetrics(values)
    }

    /// Turns cumulative timestamps into phase durations. A reused connection had no lookup,
    /// connect or handshake, so those are `nil` rather than zero.
    static func phases(of timeline: Timeline, reused: Bool?, start: Date = Date()) -> TransferMetrics.Values {
        func duration(_ microseconds: Int64) -> Duration { .microseconds(max(0, microseconds)) }
        var values = TransferMetrics.Values(
            start: start, dnsLookup: nil, connect: nil, tlsHandshake: nil,
            timeToFirstByte: timeline.startTransfer > 0 ? duration(timeline.startTransfer) : nil, total: duration(timeline.total),
            bytesSent: 0, bytesReceived: 0, redirectCount: 0, connectionReused: reused, httpVersion: nil, remoteAddress: nil,
            transport: "curl")
        if reused == false {
            values.dnsLookup = duration(timeline.nameLookup)
            values.connect = duration(timeline.connect - timeline.nameLookup)
            if timeline.appConnect > 0 { values.tlsHandshake = duration(timeline.appConnect - timeline.connect) }
        }
        return values
    }

    /// `"HTTP/1.1"` for a CURL_HTTP_VERSION_* value; `nil` when no response was read.
    static func httpVersion(_ value: Int32) -> String? {
        switch value {
        case CCURL_HTTP_VERSION_1_0: "HTTP/1.0"
        case CCURL_HTTP_VERSION_1_1: "HTTP/1.1"
        case CCURL_HTTP_VERSION_2_0: "HTTP/2"
        case CCURL_HTTP_VERSION_3: "HTTP/3"
        default: nil
        }
    }

    /// `"127.0.0.1:8080"` or `"[::1]:8080"`.
    static func remoteAddress(ip: String, port: Int) -> String {
        // Bytes, not `String.contains(_:)`, which goes through Foundation's NSString search.
        ip.utf8.contains(UInt8(ascii: ":")) ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }
}
