import Foundation

extension Resource {
    /// Builds the response to `request`, the `serveIndex`-th response since registration.
    func response(for request: RecordedRequest, serveIndex: Int) -> MockResponse {
        var response = representationResponse(for: request)
        for (name, value) in template.headers { response.headers.add(name, value) }
        response.behavior = template.behavior
        for limited in limitedEffects where serveIndex < limited.count {
            response = response.effect(limited.effect, at: limited.point)
        }
        for transform in transforms { response = transform(request, response) }
        return response
    }

    /// Status, headers and body as RFC 9110 §13 and §14 decide them.
    private func representationResponse(for request: RecordedRequest) -> MockResponse {
        var headers: HeaderFields = [:]
        if !ignoresRange { headers.add("Accept-Ranges", "bytes") }
        if let etag { headers.add("ETag", etag) }
        if let lastModified { headers.add("Last-Modified", HTTPDate.format(lastModified)) }

        guard request.method == "GET" || request.method == "HEAD" else {
            headers.add("Allow", "GET, HEAD")
            return MockResponse(status: 405, headers: headers)
        }
        if notModified(request) {
            return MockResponse(status: 304, headers: headers)
        }
        headers.add("Content-Type", contentType)
        let full = MockResponse(status: 200, headers: headers, body: body)
        let ranges = request.headers.values(for: "Range")
        guard request.method == "GET", !ignoresRange, ranges.count == 1, let range = ranges.first else { return full }
        if let ifRange = request.headers["If-Range"], !ifRangeMatches(ifRange) { return full }

        let length = body.count
        switch ByteRangeSpec.evaluate(range, length: length) {
        case .full:
            return full
        case .partial(let first, let last):
            headers.add("Content-Range", "bytes \(first)-\(last)/\(length)")
            return MockResponse(status: 206, headers: headers, body: body.slice(offset: first, count: last - first + 1))
        case .unsatisfiable:
            headers.remove("Content-Type")
            headers.add("Content-Range", "bytes */\(length)")
            return MockResponse(status: 416, headers: headers)
        }
    }

    /// `If-None-Match` (weak comparison), or without it `If-Modified-Since` (RFC 9110 §13.2.2).
    private func notModified(_ request: RecordedRequest) -> Bool {
        let noneMatch = request.headers.values(for: "If-None-Match")
        if !noneMatch.isEmpty {
            let tags = EntityTag.parseList(noneMatch.joined(separator: ","))
            if tags.wildcard { return true }
            guard let etag, let current = EntityTag.parseList(etag).tags.first else { return false }
            return tags.tags.contains { $0.opaque == current.opaque }
        }
        if let since = request.headers["If-Modified-Since"], let date = HTTPDate.parse(since), let lastModified {
            return lastModified.timeIntervalSince1970.rounded(.down) <= date.timeIntervalSince1970
        }
        return false
    }

    /// `If-Range`: a strong entity-tag match, or a date equal to `Last-Modified` (RFC 9110 §13.1.5).
    private func ifRangeMatches(_ value: String) -> Bool {
        let trimmed = String(value.trimmingOWS)
        if trimmed.hasPrefix("\"") || trimmed.hasPrefix("W/") {
            guard let etag, let current = EntityTag.parseList(etag).tags.first, !current.weak,
                let given = EntityTag.parseList(trimmed).tags.first, !given.weak
            else { return false }
            return given.opaque == current.opaque
        }
        guard let date = HTTPDate.parse(trimmed), let lastModified else { return false }
        return lastModified.timeIntervalSince1970.rounded(.down) == date.timeIntervalSince1970
    }
}

/// An entity tag: `"opaque"` or `W/"opaque"`.
struct EntityTag: Equatable {
    var weak: Bool
    /// The quoted part, quotes included.
    var opaque: String

    /// Parses a comma-separated list of entity tags (or `*`); malformed members are skipped.
    static func parseList(_ text: String) -> (tags: [EntityTag], wildcard: Bool) {
        var tags: [EntityTag] = []
        var wildcard = false
        var rest = Substring(text)
        while true {
            rest = rest.drop { $0 == " " || $0 == "\t" || $0 == "," }
            if rest.isEmpty { break }
            if rest.hasPrefix("*") {
                wildcard = true
                rest = rest.dropFirst()
                continue
            }
            var weak = false
            if rest.hasPrefix("W/") {
                weak = true
                rest = rest.dropFirst(2)
            }
            guard rest.hasPrefix("\""), let close = rest.dropFirst().firstIndex(of: "\"") else {
                rest = rest.drop { $0 != "," }
                continue
            }
            tags.append(EntityTag(weak: weak, opaque: String(rest[...close])))
            rest = rest[rest.index(after: close)...]
        }
        return (tags, wildcard)
    }
}

/// A `Range: bytes=…` header evaluated against a representation length (RFC 9110 §14.1-§14.2).
enum ByteRangeSpec {
    /// What to send.
    enum Outcome: Equatable {
        /// 200 with the full representation (no range, an ignored range, or several ranges).
        case full
        /// 206 with bytes `first...last`.
        case partial(first: Int64, last: Int64)
        /// 416.
        case unsatisfiable
    }

    private enum Spec {
        case closed(Int64, Int64)
        case from(Int64)
        case suffix(Int64)
    }

    /// Evaluates a Range header value; invalid syntax and other units are ignored (200), as
    /// RFC 9110 allows.
    static func evaluate(_ header: String, length: Int64) -> Outcome {
        let value = header.trimmingOWS
        guard let equals = value.firstIndex(of: "="), value[..<equals].trimmingOWS.equalsIgnoringASCIICase("bytes") else {
            return .full
        }
        let members = value[value.index(after: equals)...].split(separator: ",").map { $0.trimmingOWS }.filter { !$0.isEmpty }
        var specs: [Spec] = []
        for member in members {
            guard let spec = parse(member) else { return .full }
            specs.append(spec)
        }
        guard !specs.isEmpty else { return .full }
        let satisfiable = specs.filter { spec in
            switch spec {
            case .closed(let first, _), .from(let first): return first < length
            case .suffix(let count): return count > 0 && length > 0
            }
        }
        guard let only = satisfiable.first else { return .unsatisfiable }
        if specs.count > 1 { return .full }
        switch only {
        case .closed(let first, let last): return .partial(first: first, last: min(last, length - 1))
        case .from(let first): return .partial(first: first, last: length - 1)
        case .suffix(let count): return .partial(first: max(0, length - count), last: length - 1)
        }
    }

    private static func parse(_ member: Substring) -> Spec? {
        guard let dash = member.firstIndex(of: "-") else { return nil }
        let firstText = member[..<dash]
        let lastText = member[member.index(after: dash)...]
        let digits: (Substring) -> Int64? = { text in
            guard !text.isEmpty, text.count <= 18, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int64(text)
        }
        if firstText.isEmpty {
            return digits(lastText).map { .suffix($0) }
        }
        guard let first = digits(firstText) else { return nil }
        if lastText.isEmpty { return .from(first) }
        guard let last = digits(lastText), last >= first else { return nil }
        return .closed(first, last)
    }
}
