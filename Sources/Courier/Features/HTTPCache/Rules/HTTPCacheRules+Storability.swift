import Foundation

// RFC 9111 §3 (storing responses), §3.5 (Authorization) and §4.1 (Vary).
extension HTTPCacheRules {
    /// Why a response may not be stored (RFC 9111 §3), or `nil` when it may.
    ///
    /// Stored: final responses to `GET` whose status is heuristically cacheable
    /// (``heuristicallyCacheableStatusCodes``) or that carry explicit permission or freshness
    /// (`public`, `private` in a private cache, `Expires`, `max-age`, `s-maxage` in a shared
    /// cache). Refused: other methods; `1xx` and `304`; a `206` that
    /// ``refusalToStorePartial(requestHeaders:responseHeaders:)`` refuses; `no-store` in the request or the response (a response's `no-store` is overridden
    /// by `must-understand` when the status is understood, §5.2.2.3; `must-understand` with a
    /// status not understood is refused); in a shared cache, `private` and — unless the response
    /// says `public`, `must-revalidate` or `s-maxage` — a request with `Authorization` (§3.5);
    /// and `Vary: *`, which could never match a later request (§4.1), so is not stored at all.
    ///
    /// The reason is short and readable, e.g. `"no-store"`, `"status 500 is not cacheable without explicit freshness"`.
    func refusalToStore(
        method: HTTPMethod, requestHeaders: HTTPHeaders, statusCode: Int,
        responseHeaders: HTTPHeaders
    ) -> String? {
        guard method == .get else { return "method \(method.rawValue) is not cached" }
        guard statusCode >= 200, statusCode <= 999 else { return "status \(statusCode) is not a final response" }
        if statusCode == 206, let refusal = refusalToStorePartial(requestHeaders: requestHeaders, responseHeaders: responseHeaders) {
            return refusal
        }
        if statusCode == 304 { return "304 Not Modified is not stored" }
        if requestDirectives(requestHeaders).noStore { return "request no-store" }
        let response = responseDirectives(responseHeaders)
        if response.mustUnderstand {
            guard Self.understoodStatusCodes.contains(statusCode) else {
                return "must-understand with status \(statusCode)"
            }
        } else if response.noStore {
            return "no-store"
        }
        if isShared, response.isPrivate { return "private in a shared cache" }
        if isShared, requestHeaders.contains("Authorization"), !Self.allowsSharedAuthorized(response) {
            return "Authorization in a shared cache"
        }
        if Self.varyFieldNames(responseHeaders).contains("*") { return "Vary: *" }
        let explicitlyCacheable =
            response.isPublic || (!isShared && response.isPrivate)
            || responseHeaders.contains("Expires") || response.maxAge != nil || (isShared && response.sharedMaxAge != nil)
        guard explicitlyCacheable || Self.heuristicallyCacheableStatusCodes.contains(statusCode) else {
            return "status \(statusCode) is not cacheable without explicit freshness"
        }
        return nil
    }

    /// The request field values an entry must remember for its response's `Vary` (§4.1):
    /// lower-cased field name → normalised value (``normalisedFieldValue(_:)``), `""` for a field
    /// the request lacks; `nil` when the response has no `Vary` (or one naming no field).
    /// `Vary: *` gives `["*": ""]`, which never matches (such responses are not stored anyway).
    func varyingRequestHeaders(requestHeaders: HTTPHeaders, responseHeaders: HTTPHeaders) -> [String: String]? {
        let names = Self.varyFieldNames(responseHeaders)
        guard !names.isEmpty else { return nil }
        if names.contains("*") { return ["*": ""] }
        var values: [String: String] = [:]
        for name in names where values[name] == nil {
            values[name] = Self.normalisedFieldValue(requestHeaders[name] ?? "")
        }
        return values
    }

    /// Whether `requestHeaders` select the stored response (§4.1): every field the entry
    /// remembers has the same normalised value in the request (absent in both also matches),
    /// and the stored `Vary` is neither `*` nor names a field the entry does not remember.
    func varyMatches(_ entry: CacheEntryHead, requestHeaders: HTTPHeaders) -> Bool {
        let stored = entry.varyingRequestHeaders ?? [:]
        guard stored["*"] == nil else { return false }
        for name in Self.varyFieldNames(entry.headers) where stored[name] == nil { return false }
        for (name, value) in stored where Self.normalisedFieldValue(requestHeaders[name] ?? "") != Self.normalisedFieldValue(value) {
            return false
        }
        return true
    }

    /// The lower-cased field names listed by `Vary` (empty members dropped, in order, repeats kept).
    static func varyFieldNames(_ headers: HTTPHeaders) -> [String] {
        guard let vary = headers["Vary"] else { return [] }
        return vary.split(separator: ",").compactMap { member in
            let name = String(member).trimmedASCII
            return name.isEmpty ? nil : name.lowercased()
        }
    }

    /// A field value normalised for `Vary` matching (§4.1 allows removing whitespace where the
    /// grammar permits it): leading and trailing blanks dropped, runs of blanks made one space,
    /// blanks around list commas made `", "`, empty list members dropped; quoted strings are
    /// kept exactly. `"gzip ,  deflate"` and `"gzip, deflate"` match; case is kept.
    static func normalisedFieldValue(_ value: String) -> String {
        var output: [UInt8] = []
        output.reserveCapacity(value.utf8.count)
        var inQuotes = false
        var escaped = false
        var pendingSpace = false
        var pendingComma = false
        for byte in value.utf8 {
            if inQuotes {
                output.append(byte)
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = false
                }
                continue
            }
            switch byte {
            case 0x20, 0x09:
                pendingSpace = true
            case UInt8(ascii: ","):
                pendingComma = true
                pendingSpace = false
            default:
                if !output.isEmpty {
                    if pendingComma {
                        output.append(contentsOf: [UInt8(ascii: ","), 0x20])
                    } else if pendingSpace {
                        output.append(0x20)
                    }
                }
                pendingSpace = false
                pendingComma = false
                output.append(byte)
                if byte == UInt8(ascii: "\"") { inQuotes = true }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
