import CourierSupport
import Foundation

/// One byte range of a `Range` request (RFC 9110 §14.1.1): `first-last`, `first-`, or `-suffix`.
/// Positions past what an `Int64` holds are saturated, so they select nothing rather than fail.
enum ByteRangeSpec: Hashable, Sendable {
    /// `first-pos "-" [ last-pos ]`.
    case from(Int64, through: Int64?)
    /// `"-" suffix-length`: the last bytes.
    case suffix(Int64)

    /// The bytes it selects of a representation of `length` bytes; `nil` when it selects none
    /// (unsatisfiable, §14.1.1: a first position at or past the end, or a suffix of zero).
    func resolved(length: Int64) -> ClosedRange<Int64>? {
        switch self {
        case .from(let first, let last):
            guard first < length else { return nil }
            return first...min(last ?? .max, length - 1)
        case .suffix(let count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count)...(length - 1)
        }
    }
}

/// What a request's `Range` field asks for, as the cache reads it.
enum ByteRangeRequest: Hashable, Sendable {
    /// No `Range`, or one to be ignored (another unit, invalid syntax: a server ignores it, §14.2).
    case none
    /// One byte range.
    case single(ByteRangeSpec)
    /// More than one range: only the network answers it (Courier builds no `multipart/byteranges`).
    case multiple

    /// The longest `Range` value read; a longer one is ignored.
    static let maximumFieldLength = 4096

    /// Reads `Range` from `headers`.
    init(_ headers: HTTPHeaders) {
        guard let value = headers["Range"], value.utf8.count <= Self.maximumFieldLength else {
            self = .none
            return
        }
        self.init(fieldValue: value)
    }

    /// Reads a `Range` field value: `bytes=` (any case) and a comma-separated list of range specs,
    /// empty members skipped (§5.6.1).
    init(fieldValue: String) {
        let trimmed = fieldValue.trimmedASCII
        guard let equals = trimmed.firstIndex(of: "="), String(trimmed[..<equals]).trimmedASCII.caseInsensitiveEquals("bytes") else {
            self = .none
            return
        }
        var specs: [ByteRangeSpec] = []
        for member in trimmed[trimmed.index(after: equals)...].split(separator: ",", omittingEmptySubsequences: false) {
            let text = String(member).trimmedASCII
            if text.isEmpty { continue }
            guard let spec = Self.spec(text) else {
                self = .none
                return
            }
            specs.append(spec)
            if specs.count > 1 {
                self = .multiple
                return
            }
        }
        self = specs.first.map(ByteRangeRequest.single) ?? .none
    }

    private static func spec(_ text: Substring) -> ByteRangeSpec? {
        guard let dash = text.firstIndex(of: "-") else { return nil }
        let firstText = text[..<dash], lastText = text[text.index(after: dash)...]
        if firstText.isEmpty {
            return position(lastText).map(ByteRangeSpec.suffix)
        }
        guard let first = position(firstText) else { return nil }
        if lastText.isEmpty { return .from(first, through: nil) }
        guard let last = position(lastText), last >= first else { return nil }
        return .from(first, through: last)
    }

    /// 1*DIGIT, saturated at `Int64.max`.
    private static func position(_ text: Substring) -> Int64? {
        guard !text.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in text.utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowAgain) = times.addingReportingOverflow(Int64(byte - 0x30))
            value = overflow || overflowAgain ? .max : sum
        }
        return value
    }
}

/// A `Content-Range` of a stored or received partial response: `bytes first-last/complete`.
struct ContentRange: Hashable, Sendable {
    var first: Int64
    var last: Int64
    /// The complete representation's length.
    var completeLength: Int64

    /// The bytes it covers.
    var bytes: ClosedRange<Int64> { first...last }
    /// How many bytes it covers.
    var count: Int64 { last - first + 1 }

    /// Reads `bytes first-last/complete` with `first <= last < complete`; `nil` for anything else
    /// (an unknown complete length `*`, the `*/complete` of a 416, another unit, bad syntax).
    init?(_ value: String) {
        let trimmed = value.trimmedASCII
        guard trimmed.utf8.count <= 200, let space = trimmed.firstIndex(of: " "), trimmed[..<space].caseInsensitiveEquals("bytes") else {
            return nil
        }
        let rest = String(trimmed[trimmed.index(after: space)...]).trimmedASCII
        guard let slash = rest.firstIndex(of: "/"), let dash = rest[..<slash].firstIndex(of: "-"),
            let first = Self.number(rest[..<dash]), let last = Self.number(rest[rest.index(after: dash)..<slash]),
            let complete = Self.number(rest[rest.index(after: slash)...]), first <= last, last < complete
        else { return nil }
        self.init(first: first, last: last, completeLength: complete)
    }

    init(first: Int64, last: Int64, completeLength: Int64) {
        self.first = first
        self.last = last
        self.completeLength = completeLength
    }

    /// The field value: `bytes first-last/complete`.
    var fieldValue: String { "bytes \(first)-\(last)/\(completeLength)" }

    /// At most 18 digits: every value fits an `Int64` without overflow.
    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int64(text)
    }
}

/// How the cache answers a request from a stored response, as far as `Range` goes (RFC 9111
/// §3.3–3.4, RFC 9110 §14): see ``HTTPCacheRules/rangeAnswer(method:requestHeaders:entry:storedLength:)``.
enum RangeAnswer: Hashable, Sendable {
    /// The stored response as it is.
    case whole
    /// `206 Partial Content` with `bytes`, of a representation of `completeLength` bytes; the
    /// stored body starts at byte `storedFrom` of it (0 for a complete stored response).
    case partial(bytes: ClosedRange<Int64>, completeLength: Int64, storedFrom: Int64)
    /// `416 Range Not Satisfiable` with `Content-Range: bytes */completeLength`.
    case unsatisfiable(completeLength: Int64)
    /// The store cannot answer: the request goes to the network (the reason is for the miss event).
    case network(reason: String)
}

/// How a new partial response joins a stored one (RFC 9111 §3.4): the combined body is the
/// stored part's bytes `before`, then every byte of the new part, then the stored part's bytes
/// `after` (offsets in the stored body), and its head is ``head``.
struct PartialCombination: Hashable, Sendable {
    /// Stored body bytes that come before the new part.
    var before: Range<Int64>?
    /// Stored body bytes that come after the new part.
    var after: Range<Int64>?
    /// The combined body's length.
    var length: Int64
    /// The combined response's head: the new one's, with the combined `Content-Range`, or a `200`
    /// without one when the combination is the complete representation.
    var head: CacheEntryHead
}

// RFC 9111 §3.3 (storing incomplete responses), §3.4 (combining partial content), §4 with
// RFC 9110 §13.1.5 (If-Range) and §14 (range requests).
extension HTTPCacheRules {
    /// Whether `entry` is a stored partial response (a `206` with its `Content-Range`).
    static func isPartial(_ entry: CacheEntryHead) -> Bool {
        entry.statusCode == 206
    }

    /// How a request is answered from the stored response `entry`, whose body holds
    /// `storedLength` bytes, as far as `Range` and `If-Range` go (freshness is
    /// ``decide(method:requestHeaders:policy:entry:now:)``'s):
    /// - a complete stored `200` answers a `GET` with one satisfiable range with a `206` of those
    ///   bytes, and with one that selects nothing with a `416`; an `If-Range` that does not match
    ///   its validator strongly (§13.1.5) makes it answer `.whole`, as the origin would;
    /// - a stored `206` answers only a `GET` whose one range lies within the stored bytes (and
    ///   whose `If-Range`, if any, matches): else `.network`, never the part as if it were all;
    /// - several ranges go to the network (no `multipart/byteranges` is built from the store);
    /// - a `Range` on a `HEAD`, of another unit, or of invalid syntax is ignored (§14.2), and so
    ///   is one on a stored response of another status (a `404` is served whole).
    func rangeAnswer(method: HTTPMethod, requestHeaders: HTTPHeaders, entry: CacheEntryHead, storedLength: Int64) -> RangeAnswer {
        let partial = Self.isPartial(entry)
        let range = method == .get ? ByteRangeRequest(requestHeaders) : .none
        var stored: ContentRange?
        if partial {
            guard let part = entry.headers["Content-Range"].flatMap(ContentRange.init), part.count == storedLength else {
                return .network(reason: "the stored partial response does not say which bytes it holds")
            }
            stored = part
        }
        let spec: ByteRangeSpec
        switch range {
        case .none: return partial ? .network(reason: "only part of the response is stored") : .whole
        case .multiple: return .network(reason: "several ranges are answered by the server")
        case .single(let single): spec = single
        }
        guard partial || entry.statusCode == 200 else { return .whole }
        if let condition = requestHeaders["If-Range"], !Self.ifRangeMatches(condition, entry: entry) {
            return partial ? .network(reason: "If-Range does not match the stored part") : .whole
        }
        let completeLength = stored?.completeLength ?? storedLength
        guard let bytes = spec.resolved(length: completeLength) else { return .unsatisfiable(completeLength: completeLength) }
        guard let stored else { return .partial(bytes: bytes, completeLength: completeLength, storedFrom: 0) }
        guard stored.bytes.contains(bytes.lowerBound), stored.bytes.contains(bytes.upperBound) else {
            return .network(reason: "the stored part does not hold the range")
        }
        return .partial(bytes: bytes, completeLength: completeLength, storedFrom: stored.first)
    }

    /// `If-Range` (RFC 9110 §13.1.5): an entity tag matches only a strong `ETag` equal to it
    /// (strong comparison); a date only a `Last-Modified` equal to it that is strong — at least a
    /// second before the response's `Date` (§8.8.2.2). Anything else, weak tags included, does not.
    static func ifRangeMatches(_ condition: String, entry: CacheEntryHead) -> Bool {
        let condition = String(condition.trimmedASCII)
        if condition.hasPrefix("\"") || condition.hasPrefix("W/") {
            guard let tag = strongETag(entry.headers) else { return false }
            return !condition.hasPrefix("W/") && condition == tag
        }
        guard let asked = HTTPDate.parse(condition, now: entry.responseTime),
            let lastModified = date("Last-Modified", in: entry.headers, reference: entry.responseTime), asked == lastModified
        else { return false }
        return dateValue(of: entry).timeIntervalSince(lastModified) >= 1
    }

    /// The response's `ETag` when it is strong (not `W/`), trimmed; `nil` otherwise.
    static func strongETag(_ headers: HTTPHeaders) -> String? {
        guard let tag = headers["ETag"].map({ String($0.trimmedASCII) }), tag.hasPrefix("\""), tag.count >= 2, tag.hasSuffix("\"") else { return nil }
        return tag
    }

    /// Why a `206` may not be stored (beyond ``refusalToStore(method:requestHeaders:statusCode:responseHeaders:)``'s
    /// general rules), or `nil` when it may (§3.3): it must answer a request with one byte range,
    /// say which bytes it holds (`Content-Range` with a known complete length; not
    /// `multipart/byteranges`), carry a strong `ETag` (what combining it later requires, §3.4),
    /// and be in no content coding.
    func refusalToStorePartial(requestHeaders: HTTPHeaders, responseHeaders: HTTPHeaders) -> String? {
        guard case .single = ByteRangeRequest(requestHeaders) else { return "partial content (206) to a request without one range" }
        guard responseHeaders["Content-Range"].flatMap(ContentRange.init) != nil else {
            return "partial content (206) without a Content-Range of known length"
        }
        if let type = responseHeaders["Content-Type"], type.trimmedASCII.lowercased().hasPrefix("multipart/byteranges") {
            return "partial content (206) in several parts"
        }
        guard Self.strongETag(responseHeaders) != nil else { return "partial content (206) without a strong ETag" }
        if let coding = responseHeaders["Content-Encoding"], !coding.trimmedASCII.isEmpty, !coding.trimmedASCII.caseInsensitiveEquals("identity") {
            return "partial content (206) in a content coding"
        }
        return nil
    }

    /// How the new partial response `new` (a storable `206`) joins the stored partial response
    /// `stored`, whose body holds `storedLength` bytes (RFC 9111 §3.4): only when both carry the
    /// same strong `ETag`, describe the same complete length, and their bytes touch or overlap;
    /// `nil` otherwise (the new part then replaces the stored one). The new part's bytes win where
    /// they overlap; the combined head is the new one's (§3.4: "use the header fields provided
    /// in the new response"), with the combined range, or a `200` when the whole is there.
    func combination(of stored: CacheEntryHead, storedLength: Int64, with new: CacheEntryHead) -> PartialCombination? {
        guard Self.isPartial(stored), new.statusCode == 206,
            let storedTag = Self.strongETag(stored.headers), storedTag == Self.strongETag(new.headers),
            let old = stored.headers["Content-Range"].flatMap(ContentRange.init), old.count == storedLength,
            let part = new.headers["Content-Range"].flatMap(ContentRange.init), part.completeLength == old.completeLength,
            part.first <= old.last &+ 1, old.first <= part.last &+ 1
        else { return nil }
        let combined = ContentRange(first: min(old.first, part.first), last: max(old.last, part.last), completeLength: old.completeLength)
        var head = new
        if combined.first == 0, combined.last == combined.completeLength - 1 {
            head.statusCode = 200
            head.headers.remove(name: "Content-Range")
        } else {
            head.headers.update(name: "Content-Range", value: combined.fieldValue)
        }
        return PartialCombination(
            before: old.first < part.first ? 0..<(part.first - old.first) : nil,
            after: old.last > part.last ? (part.last + 1 - old.first)..<storedLength : nil,
            length: combined.count, head: head)
    }
}
