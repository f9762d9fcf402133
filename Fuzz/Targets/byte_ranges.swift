// Fuzz target: the HTTP cache's byte ranges (HTTPCacheRules+Range.swift) — `Range` parsing
// (ByteRangeRequest, ByteRangeSpec), `Content-Range` parsing (ContentRange), the answer to a range
// request from a stored response (rangeAnswer, ifRangeMatches), the storability of a 206
// (refusalToStorePartial) and the combination of two partial responses (combination).
//
// The input is split at newlines: line 1 is the request's `Range`, line 2 the stored response's
// `Content-Range`, line 3 the new response's `Content-Range`, line 4 an `If-Range`, line 5 a
// length; the first byte picks the method, the stored status, the validators and how the stored
// body's length is chosen.
//
// Properties: nothing traps; parsing is deterministic; a single range spec renders and parses
// back equal, and what it resolves to lies inside the representation (and inside its own
// bounds); a parsed Content-Range has first <= last < complete and round-trips through its field
// value; an answered range lies inside the representation and, shifted by where the stored body
// starts, inside the stored body; a 416 is answered only for a range that selects nothing; a
// stored part is never served whole nor for a range it does not hold; HEAD and requests without
// one range are never answered with a part; a combination is never longer than the two parts
// together nor than the representation, is a 200 exactly when it is complete, and — built from
// real bytes as the cache builds it (stored bytes before, the new part, stored bytes after) — is
// exactly the representation's bytes over its Content-Range.
import CourierSupport
import Foundation
@testable import Courier

private let origin = Date(timeIntervalSince1970: 1_750_000_000)
private let rules = HTTPCacheRules()
/// The largest combination whose bytes are built and compared.
private let simulatedLimit: Int64 = 1 << 16

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    func line(_ index: Int) -> String? { index < lines.count ? lines[index] : nil }
    let selector = Int(bytes.first ?? 0)

    let range = line(0) ?? ""
    checkRangeParsing(range)
    for value in [line(1), line(2)].compactMap({ $0 }) { checkContentRangeParsing(value) }

    // The representation's length, for resolving specs: from line 5, else small.
    let length = line(4).flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) } ?? Int64(selector % 17)
    if case .single(let spec) = ByteRangeRequest(fieldValue: range) {
        for candidate in [0, 1, length, length &+ 1, Int64.max / 2] where candidate >= 0 { checkResolution(spec, length: candidate) }
    }

    checkAnswer(range: range, storedRange: line(1), ifRange: line(3), length: length, selector: selector)
    if let stored = line(1), let new = line(2) { checkCombination(stored: stored, new: new, selector: selector) }
    return 0
}

// MARK: - Parsing

private func checkRangeParsing(_ value: String) {
    let parsed = ByteRangeRequest(fieldValue: value)
    precondition(ByteRangeRequest(fieldValue: value) == parsed, "Range parsing is not deterministic: \(value)")
    var headers = HTTPHeaders()
    headers.add(name: "Range", value: value)
    let kept = headers["Range"] ?? ""
    let fromHeaders = ByteRangeRequest(headers)
    if kept.utf8.count <= ByteRangeRequest.maximumFieldLength {
        precondition(fromHeaders == ByteRangeRequest(fieldValue: kept), "Range from headers differs from its value's")
    } else {
        precondition(fromHeaders == .none, "a Range over the limit was read")
    }
    guard case .single(let spec) = parsed else { return }
    let rendered: String
    switch spec {
    case .from(let first, let last):
        precondition(first >= 0 && (last.map { $0 >= first } ?? true), "spec \(spec) from \(value)")
        rendered = "bytes=\(first)-\(last.map(String.init) ?? "")"
    case .suffix(let count):
        precondition(count >= 0, "suffix \(count) from \(value)")
        rendered = "bytes=-\(count)"
    }
    precondition(ByteRangeRequest(fieldValue: rendered) == parsed, "\(spec) renders as \(rendered), which parses differently")
}

private func checkContentRangeParsing(_ value: String) {
    let parsed = ContentRange(value)
    precondition(ContentRange(value) == parsed, "Content-Range parsing is not deterministic: \(value)")
    guard let parsed else { return }
    precondition(0 <= parsed.first && parsed.first <= parsed.last && parsed.last < parsed.completeLength, "\(parsed) from \(value)")
    precondition(parsed.count == parsed.last - parsed.first + 1 && parsed.count > 0)
    precondition(ContentRange(parsed.fieldValue) == parsed, "\(parsed) does not round-trip through \(parsed.fieldValue)")
}

private func checkResolution(_ spec: ByteRangeSpec, length: Int64) {
    guard let resolved = spec.resolved(length: length) else {
        // Unsatisfiable: a first position at or past the end, or an empty suffix (or representation).
        switch spec {
        case .from(let first, _): precondition(first >= length, "\(spec) selects nothing of \(length)")
        case .suffix(let count): precondition(count == 0 || length == 0, "\(spec) selects nothing of \(length)")
        }
        return
    }
    precondition(0 <= resolved.lowerBound && resolved.upperBound < length, "\(spec) resolves to \(resolved) of \(length)")
    switch spec {
    case .from(let first, let last):
        precondition(resolved.lowerBound == first && resolved.upperBound <= (last ?? .max))
        precondition(last == nil || resolved.upperBound == min(last ?? 0, length - 1))
    case .suffix(let count):
        precondition(Int64(resolved.count) == min(count, length) && resolved.upperBound == length - 1)
    }
}

// MARK: - Answers

private func checkAnswer(range: String, storedRange: String?, ifRange: String?, length: Int64, selector: Int) {
    let partial = selector & 0x01 != 0
    let method: HTTPMethod = selector & 0x02 != 0 ? .head : .get
    var headers = HTTPHeaders()
    headers.add(name: "Date", value: HTTPDate.format(origin))
    if selector & 0x04 != 0 { headers.add(name: "ETag", value: selector & 0x08 != 0 ? "W/\"v1\"" : "\"v1\"") }
    if selector & 0x10 != 0 { headers.add(name: "Last-Modified", value: HTTPDate.format(origin.addingTimeInterval(-60))) }
    if partial, let storedRange { headers.add(name: "Content-Range", value: storedRange) }
    let entry = CacheEntryHead(
        statusCode: partial ? 206 : (selector & 0x20 != 0 ? 404 : 200), headers: headers, requestTime: origin, responseTime: origin)
    var request = HTTPHeaders()
    request.add(name: "Range", value: range)
    if let ifRange, selector & 0x40 != 0 { request.add(name: "If-Range", value: ifRange) }
    let stored = partial ? storedRange.flatMap(ContentRange.init) : nil
    // The stored body's length: the part's own count (or one off it), or the representation's.
    let storedLength =
        if let stored { selector & 0x80 != 0 ? stored.count : max(0, stored.count - 1) } else { length }

    let answer = rules.rangeAnswer(method: method, requestHeaders: request, entry: entry, storedLength: storedLength)
    precondition(answer == rules.rangeAnswer(method: method, requestHeaders: request, entry: entry, storedLength: storedLength))
    let asked = method == .get ? ByteRangeRequest(request) : .none
    switch answer {
    case .whole:
        precondition(!partial, "a stored part was served whole")
    case .network:
        precondition(partial || asked == .multiple, "a complete stored response went to the network: \(answer)")
    case .partial(let bytes, let completeLength, let storedFrom):
        precondition(method == .get, "a part answered a \(method)")
        guard case .single(let spec) = asked else { preconditionFailure("a part answered \(asked)") }
        precondition(entry.statusCode == 206 || entry.statusCode == 200)
        precondition(spec.resolved(length: completeLength) == bytes, "\(bytes) is not what \(spec) selects of \(completeLength)")
        precondition(0 <= bytes.lowerBound && bytes.upperBound < completeLength, "\(bytes) outside \(completeLength)")
        // What the replay serves: these bytes of the stored body.
        let body = (bytes.lowerBound - storedFrom)..<(bytes.upperBound - storedFrom + 1)
        precondition(body.lowerBound >= 0 && body.upperBound <= storedLength, "\(body) outside the stored \(storedLength) bytes")
        if let stored {
            precondition(storedFrom == stored.first && completeLength == stored.completeLength && storedLength == stored.count)
        } else {
            precondition(storedFrom == 0 && completeLength == storedLength)
        }
    case .unsatisfiable(let completeLength):
        guard case .single(let spec) = asked else { preconditionFailure("a 416 answered \(asked)") }
        precondition(spec.resolved(length: completeLength) == nil, "a 416 for \(spec), which selects bytes of \(completeLength)")
        precondition(completeLength == (stored?.completeLength ?? storedLength))
    }
    if let ifRange {
        let matches = HTTPCacheRules.ifRangeMatches(ifRange, entry: entry)
        precondition(matches == HTTPCacheRules.ifRangeMatches(ifRange, entry: entry))
        if ifRange.trimmingCharacters(in: .whitespaces).hasPrefix("W/") { precondition(!matches, "a weak If-Range matched") }
        if matches, ifRange.trimmingCharacters(in: .whitespaces).hasPrefix("\"") {
            precondition(HTTPCacheRules.strongETag(entry.headers) != nil, "an entity tag matched without a strong ETag")
        }
    }
}

// MARK: - Combination

private func checkCombination(stored storedValue: String, new newValue: String, selector: Int) {
    var headers = HTTPHeaders()
    headers.add(name: "ETag", value: "\"v1\"")
    var storedHeaders = headers
    storedHeaders.add(name: "Content-Range", value: storedValue)
    var newHeaders = headers
    newHeaders.add(name: "Content-Range", value: newValue)
    if selector & 0x08 != 0 { newHeaders.update(name: "ETag", value: "\"v2\"") }
    let storedHead = CacheEntryHead(statusCode: 206, headers: storedHeaders, requestTime: origin, responseTime: origin)
    let newHead = CacheEntryHead(statusCode: 206, headers: newHeaders, requestTime: origin, responseTime: origin)

    var request = HTTPHeaders()
    request.add(name: "Range", value: "bytes=0-")
    if rules.refusalToStorePartial(requestHeaders: request, responseHeaders: newHeaders) == nil {
        precondition(ContentRange(newValue) != nil, "a 206 without a parsable Content-Range may be stored")
    }

    guard let old = ContentRange(storedValue) else {
        precondition(rules.combination(of: storedHead, storedLength: 1, with: newHead) == nil, "combined with an unreadable stored part")
        return
    }
    let storedLength = selector & 0x80 != 0 ? old.count : old.count &+ 1
    guard let combination = rules.combination(of: storedHead, storedLength: storedLength, with: newHead) else { return }
    guard let part = ContentRange(newValue) else { preconditionFailure("combined with an unreadable new part") }
    precondition(storedLength == old.count, "combined with a stored body of the wrong length")
    precondition(selector & 0x08 == 0, "combined parts of different representations")
    precondition(part.completeLength == old.completeLength)

    let before = combination.before.map { $0.upperBound - $0.lowerBound } ?? 0
    let after = combination.after.map { $0.upperBound - $0.lowerBound } ?? 0
    for stretch in [combination.before, combination.after].compactMap({ $0 }) {
        precondition(0 <= stretch.lowerBound && stretch.lowerBound < stretch.upperBound && stretch.upperBound <= storedLength, "\(stretch)")
    }
    precondition(before + part.count + after == combination.length, "the pieces do not add up to the length")
    precondition(combination.length <= old.count + part.count, "the combination is longer than the two parts together")
    precondition(combination.length <= old.completeLength, "the combination is longer than the representation")
    precondition(combination.length >= part.count && combination.length >= old.count)
    let complete = combination.length == old.completeLength
    if complete {
        precondition(combination.head.statusCode == 200 && combination.head.headers["Content-Range"] == nil, "a complete combination is not a 200")
    } else {
        let combined = combination.head.headers["Content-Range"].flatMap(ContentRange.init)
        precondition(combination.head.statusCode == 206 && combined?.count == combination.length, "\(combination.head)")
        precondition(combined?.completeLength == old.completeLength)
    }

    // Built from bytes, as the cache builds it: it is the representation over its range.
    guard combination.length <= simulatedLimit else { return }
    let first = min(old.first, part.first)
    let storedBody = representation(old.first, count: old.count)
    var built = [UInt8]()
    if let range = combination.before { built += storedBody[Int(range.lowerBound)..<Int(range.upperBound)] }
    built += representation(part.first, count: part.count)
    if let range = combination.after { built += storedBody[Int(range.lowerBound)..<Int(range.upperBound)] }
    precondition(built == representation(first, count: combination.length), "the combined body is not the representation's bytes")
}

/// `count` bytes of a representation whose byte at position `i` depends on `i` alone.
private func representation(_ first: Int64, count: Int64) -> [UInt8] {
    (0..<count).map { offset in
        let position = UInt64(first + offset)
        return UInt8(truncatingIfNeeded: (position &* 0x9E37_79B9_7F4A_7C15) >> 56)
    }
}
