import CCurl
import Foundation

/// Settings every easy handle of one transport gets.
struct CurlHandleDefaults: Sendable {
    /// CURLOPT_BUFFERSIZE: the receive buffer (bytes read from the socket per call).
    var receiveBufferSize = 256 * 1024
    /// CURLOPT_CAINFO: a combined CA bundle, when extra certificates are trusted.
    var caInfoPath: String?
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
        /// The header lines for CURLOPT_HTTPHEADER, in order.
        var headerLines: [String]
        /// CURLOPT_ACCEPT_ENCODING: `""` (advertise and decode everything libcurl has), or `nil`
        /// to send nothing extra and decode nothing.
        var acceptEncoding: String?

        /// Whether a request body is sent.
        var sendsBody: Bool {
            if case .upload = method { true } else { false }
        }
    }

    /// Works out the plan; throws `.encodingFailed` for a header libcurl cannot send as given.
    static func plan(for request: TransportRequest) throws(CourierError) -> Plan {
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

        var lines: [String] = []
        lines.reserveCapacity(request.headers.count + 1)
        for header in request.headers {
            guard isToken(header.name) else {
                throw CourierError(.encodingFailed, "The header name \"\(header.name)\" is not a valid HTTP field name.", url: request.url)
            }
            guard !header.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw CourierError(.encodingFailed, "The value of header \(header.name) contains a line break or NUL.", url: request.url)
            }
            lines.append(line(for: header))
        }
        var plan = Plan(method: method, headerLines: lines, acceptEncoding: nil)
        // libcurl adds `Expect: 100-continue` to every upload, which costs a round trip (or a
        // one-second wait on servers that ignore it); Courier sends it only when asked to.
        if plan.sendsBody, !request.headers.contains("Expect") { plan.headerLines.append("Expect:") }
        // With decoding on, "" makes libcurl advertise what it can decode; a caller's own
        // Accept-Encoding header replaces that advertisement while decoding stays on.
        if request.automaticDecompression { plan.acceptEncoding = "" }
        return plan
    }

    /// Applies `plan` to `easy` for `request`; returns the header list, which must outlive the
    /// transfer and be freed with `ccurl_slist_free_all` afterwards.
    static func apply(_ plan: Plan, for request: TransportRequest, to easy: CurlEasyHandle,
                      defaults: CurlHandleDefaults) throws(CourierError) -> OpaquePointer? {
        let handle = easy.pointer
        let urlResult = request.url.absoluteString.withCString { ccurl_easy_setopt_ptr(handle, CCURLOPT_URL, $0) }
        guard urlResult == CCURLE_OK else {
            throw CourierError(.invalidURL, "libcurl rejected the URL: \(CurlError(code: urlResult).text)",
                               underlyingError: CurlError(code: urlResult), url: request.url)
        }
        ccurl_easy_setopt_long(handle, CCURLOPT_PROTOCOLS, Int(CCURLPROTO_HTTP | CCURLPROTO_HTTPS))
        ccurl_easy_setopt_long(handle, CCURLOPT_NOSIGNAL, 1)
        ccurl_easy_setopt_long(handle, CCURLOPT_TCP_NODELAY, 1)
        ccurl_easy_setopt_long(handle, CCURLOPT_FOLLOWLOCATION, 0)
        ccurl_easy_setopt_long(handle, CCURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
        ccurl_easy_setopt_long(handle, CCURLOPT_BUFFERSIZE, defaults.receiveBufferSize)
        ccurl_easy_setopt_ptr(handle, CCURLOPT_ERRORBUFFER, easy.errorBuffer)
        if let caInfo = defaults.caInfoPath {
            caInfo.withCString { _ = ccurl_easy_setopt_ptr(handle, CCURLOPT_CAINFO, $0) }
        }

        switch plan.method {
        case .get:
            break
        case .head:
            ccurl_easy_setopt_long(handle, CCURLOPT_NOBODY, 1)
        case .upload(let method, let length):
            ccurl_easy_setopt_long(handle, CCURLOPT_UPLOAD, 1)
            ccurl_easy_setopt_off(handle, CCURLOPT_INFILESIZE_LARGE, length)
            method.withCString { _ = ccurl_easy_setopt_ptr(handle, CCURLOPT_CUSTOMREQUEST, $0) }
        case .custom(let method):
            method.withCString { _ = ccurl_easy_setopt_ptr(handle, CCURLOPT_CUSTOMREQUEST, $0) }
        }

        if let encoding = plan.acceptEncoding {
            encoding.withCString { _ = ccurl_easy_setopt_ptr(handle, CCURLOPT_ACCEPT_ENCODING, $0) }
        } else {
            // Over HTTP/2 libcurl decodes a Content-Encoding even when it did not ask for one.
            ccurl_easy_setopt_long(handle, CCURLOPT_HTTP_CONTENT_DECODING, 0)
        }

        guard !plan.headerLines.isEmpty else { return nil }
        var list: OpaquePointer?
        for line in plan.headerLines {
            guard let longer = line.withCString({ ccurl_slist_append(list, $0) }) else {
                ccurl_slist_free_all(list)
                throw CourierError(.transportFailed, "libcurl could not allocate the request headers.", url: request.url)
            }
            list = longer
        }
        ccurl_easy_setopt_ptr(handle, CCURLOPT_HTTPHEADER, UnsafeRawPointer(list))
        return list
    }

    /// `Name: value`, built in one allocation. An empty value is sent as `Name;`: "Name:" would
    /// tell libcurl to drop its own header of that name.
    private static func line(for header: HTTPHeader) -> String {
        var line = ""
        line.reserveCapacity(header.name.utf8.count + header.value.utf8.count + 2)
        line += header.name
        line += header.value.isEmpty ? ";" : ": "
        line += header.value
        return line
    }

    /// Whether `name` is an RFC 9110 token (what a field name must be).
    private static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "!"), UInt8(ascii: "#")...UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"),
                 UInt8(ascii: "."), UInt8(ascii: "^")...UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                true
            default:
                false
            }
        }
    }
}
