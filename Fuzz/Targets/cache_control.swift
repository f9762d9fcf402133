// Fuzz target: the HTTP cache rules — Cache-Control parsing (CacheControl), HTTP-dates
// (HTTPDate) and the decision, storability, age, freshening and invalidation of HTTPCacheRules.
//
// The input is split at newlines: line 1 is the request's Cache-Control, line 2 the stored
// response's Cache-Control, lines 3… other response fields (`Age`, `Date`, `Expires`,
// `Last-Modified`, `ETag`, `Vary`, `Location`, in that order); the first byte also picks the
// policy, the cache mode and the clock offsets.
//
// Properties: nothing traps; parsed delta-seconds are never negative and never beyond 2^31
// (bare max-stale aside); parsing is deterministic and a canonical rendering of the directives
// parses back equal; a parsed date survives format → parse; ages and lifetimes are never
// negative; a no-store request is never served from the cache; only-if-cached never goes to
// the network; a response's no-store (without must-understand) is never stored; must-revalidate
// and no-cache responses are never served stale by the protocol, nor on error; revalidation sends
// only If-None-Match / If-Modified-Since; freshening keeps the status and Content-Length;
// invalidation lists only same-origin URLs, and none for safe methods.
import CourierSupport
import Foundation
@testable import Courier

private let origin = Date(timeIntervalSince1970: 1_750_000_000)
private let requestURL = URL(string: "https://api.example.com/items/1?x=1")!
private let policies: [HTTPCachePolicy] = [.useProtocolPolicy, .reloadIgnoringCache, .revalidate, .returnCacheElseLoad, .onlyIfCached]
private let fieldNames = ["Age", "Date", "Expires", "Last-Modified", "ETag", "Vary", "Location"]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    checkParsing(text)
    // Header values that are not UTF-8 reach the rules as ISO-8859-1 (see CurlResponseParser).
    let latin1 = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    if latin1 != text { checkParsing(latin1) }
    checkDate(text)

    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let selector = Int(bytes.first ?? 0)
    var request = HTTPHeaders()
    if let line = lines.first { request.add(name: "Cache-Control", value: line) }
    var response = HTTPHeaders()
    if lines.count > 1 { response.add(name: "Cache-Control", value: lines[1]) }
    for (name, value) in zip(fieldNames, lines.dropFirst(2)) where !value.isEmpty {
        response.add(name: name, value: value)
    }
    if selector & 0x80 != 0 { request.add(name: "Accept", value: lines.last ?? "") }
    // Clock offsets from the first bytes: up to ±2^15 s, and one in four absurd.
    let offsets = bytes.dropFirst().prefix(3).map { TimeInterval(Int8(bitPattern: $0)) * 256 }
    let received = origin.addingTimeInterval(offsets.first ?? 0)
    let now = selector & 0x03 == 0x03 ? Date.distantFuture : origin.addingTimeInterval(offsets.dropFirst().first ?? 10)
    checkRules(request: request, response: response, received: received, now: now, selector: selector)
    return 0
}

/// Parsing properties of `CacheControl`.
private func checkParsing(_ text: String) {
    let directives = CacheControl(text)
    for (name, value) in [("max-age", directives.maxAge), ("s-maxage", directives.sharedMaxAge), ("min-fresh", directives.minFresh),
                          ("stale-while-revalidate", directives.staleWhileRevalidate), ("stale-if-error", directives.staleIfError)] {
        if let value { precondition(value >= 0 && value <= CacheControl.maximumDeltaSeconds, "\(name)=\(value)") }
    }
    if let maxStale = directives.maxStale {
        precondition(maxStale >= 0 && (maxStale <= CacheControl.maximumDeltaSeconds || maxStale == .max), "max-stale=\(maxStale)")
    }
    precondition(CacheControl(text) == directives, "parsing is not deterministic")
    let rendered = render(directives)
    precondition(CacheControl(rendered) == directives, "\(directives) renders as \(rendered), which parses as \(CacheControl(rendered))")
}

/// A canonical `Cache-Control` value for `directives`.
private func render(_ directives: CacheControl) -> String {
    var parts: [String] = []
    if let value = directives.maxAge { parts.append("max-age=\(value)") }
    if let value = directives.sharedMaxAge { parts.append("s-maxage=\(value)") }
    if let value = directives.maxStale { parts.append(value == .max ? "max-stale" : "max-stale=\(value)") }
    if let value = directives.minFresh { parts.append("min-fresh=\(value)") }
    if let value = directives.staleWhileRevalidate { parts.append("stale-while-revalidate=\(value)") }
    if let value = directives.staleIfError { parts.append("stale-if-error=\(value)") }
    let flags: [(Bool, String)] = [
        (directives.noCache, "no-cache"), (directives.noStore, "no-store"), (directives.noTransform, "no-transform"),
        (directives.onlyIfCached, "only-if-cached"), (directives.mustRevalidate, "must-revalidate"),
        (directives.proxyRevalidate, "proxy-revalidate"), (directives.mustUnderstand, "must-understand"),
        (directives.isPublic, "public"), (directives.isPrivate, "private"), (directives.immutable, "immutable"),
    ]
    parts += flags.filter(\.0).map(\.1)
    return parts.joined(separator: ", ")
}

private func checkDate(_ text: String) {
    // The byte-level reader of canonical dates (a FastPaths trick) reads whatever it accepts as the general parser does.
    if let fast = HTTPDate.canonicalIMFFixdate(text) {
        precondition(fast == HTTPDate.parseAnyForm(text, now: origin), "\(text.debugDescription): \(fast) by bytes, not by the general parser")
    }
    guard let date = HTTPDate.parse(text, now: origin) else { return }
    let formatted = HTTPDate.format(date)
    precondition(HTTPDate.parse(formatted, now: origin) == date, "\(date) formats as \(formatted), which does not parse back")
}

private func checkRules(request: HTTPHeaders, response: HTTPHeaders, received: Date, now: Date, selector: Int) {
    let rules = HTTPCacheRules(isShared: selector & 0x04 != 0)
    let policy = policies[(selector >> 3) % policies.count]
    let requestDirectives = CacheControl(request["Cache-Control"])
    let responseDirectives = CacheControl(response["Cache-Control"])

    let refusal = rules.refusalToStore(method: .get, requestHeaders: request, statusCode: 200, responseHeaders: response)
    if responseDirectives.noStore && !responseDirectives.mustUnderstand || requestDirectives.noStore {
        precondition(refusal != nil, "stored despite no-store: \(request) / \(response)")
    }
    let entry = CacheEntryHead(statusCode: 200, headers: response, requestTime: received.addingTimeInterval(-1), responseTime: received,
                               varyingRequestHeaders: rules.varyingRequestHeaders(requestHeaders: request, responseHeaders: response))
    let age = rules.currentAge(of: entry, now: now)
    let lifetime = rules.freshnessLifetime(of: entry)
    precondition(age >= 0 && lifetime >= 0, "age \(age), lifetime \(lifetime)")

    let decision = rules.decide(method: .get, requestHeaders: request, policy: policy, entry: entry, now: now)
    switch decision {
    case .serve(let source, let servedAge, let background):
        precondition(!requestDirectives.noStore, "served a no-store request under \(policy)")
        precondition(servedAge == age, "served age \(servedAge), current age \(age)")
        precondition(!background || source == .staleCache(.staleWhileRevalidate), "background revalidation for \(source)")
        if policy == .useProtocolPolicy {
            precondition(!responseDirectives.noCache, "served a no-cache response without validation")
            if case .staleCache = source {
                precondition(!responseDirectives.mustRevalidate, "served a must-revalidate response stale")
            } else {
                precondition(lifetime > age, "served as fresh with age \(age) ≥ lifetime \(lifetime)")
            }
        }
    case .revalidate(let conditional):
        precondition(!conditional.isEmpty, "revalidation without validators")
        precondition(conditional.allSatisfy { ["If-None-Match", "If-Modified-Since"].contains($0.name) }, "sent \(conditional)")
        precondition(!requestDirectives.onlyIfCached && policy != .onlyIfCached, "only-if-cached went to the network")
    case .fetch:
        precondition(!requestDirectives.onlyIfCached && policy != .onlyIfCached, "only-if-cached went to the network")
    case .unsatisfiable:
        precondition(requestDirectives.onlyIfCached || policy == .onlyIfCached, "504 without only-if-cached")
    }
    if policy == .reloadIgnoringCache, !requestDirectives.onlyIfCached {
        guard case .fetch = decision else { preconditionFailure("reloadIgnoringCache gave \(decision)") }
    }
    _ = rules.decide(method: .head, requestHeaders: request, policy: policy, entry: nil, now: now)

    if rules.mayServeStaleOnError(entry, now: now, requestHeaders: request) {
        precondition(!responseDirectives.mustRevalidate && !responseDirectives.noCache, "stale-if-error despite \(responseDirectives)")
    }
    if rules.mayFreshen(entry, with: response) || selector & 0x40 != 0 {
        var notModified = response
        notModified.update(name: "Content-Length", value: "0")
        var stored = entry
        stored.headers.update(name: "Content-Length", value: "1234")
        let fresh = rules.freshened(stored, with: notModified, requestTime: now, responseTime: now)
        precondition(fresh.statusCode == 200 && fresh.headers["Content-Length"] == "1234", "freshening changed \(fresh)")
    }
    for method in [HTTPMethod.get, .head, .post, .delete, HTTPMethod(rawValue: "PURGE")] {
        let urls = rules.invalidatedURLs(method: method, requestURL: requestURL, statusCode: 200 + selector % 300, responseHeaders: response)
        if method == .get || method == .head { precondition(urls.isEmpty, "\(method) invalidated \(urls)") }
        for url in urls {
            precondition(HTTPCacheRules.origin(of: url) == HTTPCacheRules.origin(of: requestURL), "invalidated another origin: \(url)")
        }
    }
}
