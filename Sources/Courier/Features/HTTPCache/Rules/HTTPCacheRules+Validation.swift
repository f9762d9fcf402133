import CourierSupport
import Foundation

// RFC 9111 §4.3: validation (conditional requests) and freshening stored responses with a 304.
extension HTTPCacheRules {
    /// The fields that make a request conditional on the stored response (§4.3.1):
    /// `If-None-Match` with its `ETag` (weak or strong, as stored) and `If-Modified-Since` with its
    /// `Last-Modified` when that is a valid HTTP-date; both when both exist (§4.3.1 asks for the
    /// entity tag and recommends the date too). Empty when the entry has no validator.
    func conditionalHeaders(for entry: CacheEntryHead) -> HTTPHeaders {
        var headers = HTTPHeaders()
        if let etag = entry.headers["ETag"].map({ String($0.trimmedASCII) }), !etag.isEmpty {
            headers.add(name: "If-None-Match", value: etag)
        }
        if let lastModified = entry.headers["Last-Modified"].map({ String($0.trimmedASCII) }),
            HTTPDate.parse(lastModified, now: entry.responseTime) != nil
        {
            headers.add(name: "If-Modified-Since", value: lastModified)
        }
        return headers
    }

    /// Whether a `304 Not Modified` with `notModifiedHeaders` may freshen the stored response
    /// (§4.3.4 "selecting" the stored response to update): an `ETag` in the 304 must match the
    /// stored one weakly (RFC 9110 §8.8.3.2: the same opaque tag, `W/` or not); without an `ETag`, a `Last-Modified` in both must be the same date. A 304
    /// carrying no validator is accepted (it answers the conditional request made from this
    /// very entry; §4.3.4 would accept it only for an entry without validators — lenient for
    /// servers that leave validators out of 304s). When `false`, the caller should fetch the
    /// resource without conditions.
    func mayFreshen(_ entry: CacheEntryHead, with notModifiedHeaders: HTTPHeaders) -> Bool {
        if let newTag = notModifiedHeaders["ETag"].map({ String($0.trimmedASCII) }), !newTag.isEmpty {
            guard let storedTag = entry.headers["ETag"].map({ String($0.trimmedASCII) }) else { return false }
            // Weak comparison throughout, including a strong tag in the 304 against a stored weak
            // one: servers weaken a tag when they apply a content coding (nginx's gzip) and send
            // the strong one with the 304, which answers the weak tag Courier sent. Strictly,
            // §4.3.4 selects nothing then; refetching every gzip-encoded resource helps no one.
            return Self.opaqueTag(newTag) == Self.opaqueTag(storedTag)
        }
        if let newDate = Self.date("Last-Modified", in: notModifiedHeaders, reference: entry.responseTime),
            let storedDate = Self.date("Last-Modified", in: entry.headers, reference: entry.responseTime)
        {
            return newDate == storedDate
        }
        return true
    }

    /// The stored head freshened by a 304 (§4.3.4, §3.2): every field of the 304 replaces the
    /// stored one, except those that describe the stored body's bytes, which the 304 does not
    /// resend (`Content-Length`, `Content-Encoding` — which says whether the stored bytes are
    /// still coded —, `Content-Range`, `Content-Type`, `Transfer-Encoding`), hop-by-hop fields (`Connection`
    /// and the fields it names, `Keep-Alive`, `Proxy-Connection`, `TE`, `Trailer`, `Upgrade`)
    /// and proxy authentication fields (§3.1). A `Date` or `Age` the 304 lacks is removed: the
    /// stored ones belonged to the old response and would make the freshened one look old
    /// (§4.2.3 then uses `responseTime` as `date_value`). The status code, the `Vary` values and
    /// `requestHadAuthorization` are kept; the request and response times become the 304's.
    func freshened(
        _ entry: CacheEntryHead, with notModifiedHeaders: HTTPHeaders,
        requestTime: Date, responseTime: Date
    ) -> CacheEntryHead {
        var fresh = entry
        let connectionNamed = Set((notModifiedHeaders["Connection"] ?? "").split(separator: ",").map { String($0).trimmedASCII.lowercased() })
        for field in notModifiedHeaders {
            let name = field.name.lowercased()
            guard !Self.fieldsNotFreshened.contains(name), !connectionNamed.contains(name) else { continue }
            fresh.headers.update(field)
        }
        if !notModifiedHeaders.contains("Date") { fresh.headers.remove(name: "Date") }
        if !notModifiedHeaders.contains("Age") { fresh.headers.remove(name: "Age") }
        fresh.requestTime = requestTime
        fresh.responseTime = responseTime
        return fresh
    }

    /// Lower-cased names of the fields a 304 does not update (see ``freshened(_:with:requestTime:responseTime:)``).
    static let fieldsNotFreshened: Set<String> = [
        "content-length", "content-encoding", "content-range", "content-type", "transfer-encoding",
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "upgrade",
        "proxy-authenticate", "proxy-authentication-info", "proxy-authorization",
    ]

    /// An entity tag without its weakness prefix, for comparison.
    private static func opaqueTag(_ tag: String) -> Substring {
        tag.hasPrefix("W/") ? tag.dropFirst(2) : tag[...]
    }
}
