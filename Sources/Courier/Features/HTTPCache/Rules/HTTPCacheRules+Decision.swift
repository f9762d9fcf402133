import Foundation

// RFC 9111 §4 (constructing responses from caches), §5.2.1 (request directives), §5.2.2
// (response directives), RFC 5861 §3 (stale-while-revalidate) and RFC 8246 (immutable).
extension HTTPCacheRules {
    /// What to do for a request, given what is stored for its URL (`entry`, `nil` when nothing).
    ///
    /// - Only `GET` and `HEAD` are answered from the cache (`HEAD` from a stored `GET`, §4.3.5's
    ///   counterpart); requests with their own conditional fields (`If-None-Match`,
    ///   `If-Modified-Since`, `If-Match`, `If-Unmodified-Since`) go to the network, as do
    ///   requests with `no-store` (§5.2.1.5 allows serving them; Courier leaves the cache out
    ///   entirely, as OkHttp does). `Range` and `If-Range` do not change the decision: which bytes
    ///   are served is ``rangeAnswer(method:requestHeaders:entry:storedLength:)``'s part.
    /// - ``HTTPCachePolicy/reloadIgnoringCache``: `.fetch`. ``HTTPCachePolicy/revalidate``:
    ///   `.revalidate` when the entry has validators, else `.fetch`.
    /// - ``HTTPCachePolicy/returnCacheElseLoad`` and ``HTTPCachePolicy/onlyIfCached``: any stored
    ///   entry whose `Vary` matches is served (`.cache` when fresh, `.staleCache(.cachePolicy)`
    ///   when stale) — unless the response forbids serving it unvalidated (`no-cache`, or stale
    ///   with `must-revalidate`; in a shared cache also `proxy-revalidate`/`s-maxage`), which
    ///   RFC 9111 says a cache must honour "in all circumstances" (§5.2.2.2): then it is
    ///   revalidated (or, for `.onlyIfCached`, `.unsatisfiable`).
    /// - ``HTTPCachePolicy/useProtocolPolicy``: a response `no-cache` or request `no-cache` (or
    ///   `Pragma: no-cache`) revalidates. A fresh `immutable` response is served even when the
    ///   request's `max-age` would refuse it (a browser-style reload sends `max-age=0`). A request
    ///   `max-age=N` refuses entries older than N; `min-fresh=N` wants N more seconds of freshness.
    ///   A fresh entry meeting those is served. A stale one is served when the request's
    ///   `max-stale` covers its staleness (`.staleCache(.maxStaleAllowed)`), or when the response's
    ///   `stale-while-revalidate` does and the request sets no `max-age`/`min-fresh`
    ///   (`.staleCache(.staleWhileRevalidate)`, `revalidateInBackground: true`); neither applies
    ///   when the response forbids serving it stale. Otherwise it is revalidated, or fetched when
    ///   it has no validators (`"stale without validators"`).
    /// - `only-if-cached` (request directive, or the `.onlyIfCached` policy): any decision to go
    ///   to the network becomes `.unsatisfiable` (§5.2.1.7).
    func decide(
        method: HTTPMethod, requestHeaders: HTTPHeaders, policy: HTTPCachePolicy,
        entry: CacheEntryHead?, now: Date
    ) -> CacheDecision {
        let request = requestDirectives(requestHeaders)
        let decision = decideIgnoringOnlyIfCached(
            method: method, requestHeaders: requestHeaders, request: request,
            policy: policy, entry: entry, now: now)
        guard request.onlyIfCached || policy == .onlyIfCached else { return decision }
        switch decision {
        case .serve, .unsatisfiable: return decision
        case .fetch, .revalidate: return .unsatisfiable
        }
    }

    /// Request fields that make a request one the cache does not answer itself.
    private static let bypassingRequestFields = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]

    private func decideIgnoringOnlyIfCached(
        method: HTTPMethod, requestHeaders: HTTPHeaders, request: CacheControl,
        policy: HTTPCachePolicy, entry: CacheEntryHead?, now: Date
    ) -> CacheDecision {
        guard method == .get || method == .head else { return .fetch(reason: "method \(method.rawValue) is not served from the cache") }
        if request.noStore { return .fetch(reason: "request no-store") }
        if policy == .reloadIgnoringCache { return .fetch(reason: "reload ignoring cache") }
        if let field = Self.bypassingRequestFields.first(where: { requestHeaders.contains($0) }) {
            return .fetch(reason: "request has \(field)")
        }
        guard let entry else { return .fetch(reason: "nothing stored") }
        guard varyMatches(entry, requestHeaders: requestHeaders) else { return .fetch(reason: "Vary mismatch") }
        let response = responseDirectives(entry.headers)
        if isShared, entry.requestHadAuthorization, !Self.allowsSharedAuthorized(response) {
            return .fetch(reason: "stored for a request with Authorization")
        }
        let age = currentAge(of: entry, now: now)
        let lifetime = freshnessLifetime(of: entry, response: response)
        // Seconds of freshness left; zero or less is stale (by its negation).
        let remaining = Self.subtracting(lifetime, age)

        switch policy {
        case .revalidate:
            return revalidation(of: entry, otherwise: "no validators to revalidate with")
        case .returnCacheElseLoad, .onlyIfCached:
            if response.noCache { return revalidation(of: entry, otherwise: "no-cache without validators") }
            if remaining > 0 { return .serve(source: .cache, age: age, revalidateInBackground: false) }
            if forbidsStale(response) { return revalidation(of: entry, otherwise: "stale, must-revalidate, no validators") }
            return .serve(source: .staleCache(.cachePolicy), age: age, revalidateInBackground: false)
        case .useProtocolPolicy, .reloadIgnoringCache:
            break
        }

        if response.noCache { return revalidation(of: entry, otherwise: "no-cache without validators") }
        if request.noCache { return revalidation(of: entry, otherwise: "request no-cache, no validators") }
        let minFresh = request.minFresh ?? 0
        if response.immutable, remaining > 0, remaining >= minFresh {
            return .serve(source: .cache, age: age, revalidateInBackground: false)
        }
        if let maxAge = request.maxAge, age > maxAge {
            return revalidation(of: entry, otherwise: "older than the request's max-age, no validators")
        }
        if remaining > 0, remaining >= minFresh {
            return .serve(source: .cache, age: age, revalidateInBackground: false)
        }
        if !forbidsStale(response) {
            if let maxStale = request.maxStale, Self.adding(remaining, maxStale) >= minFresh {
                let source: ResponseSource = remaining > 0 ? .cache : .staleCache(.maxStaleAllowed)
                return .serve(source: source, age: age, revalidateInBackground: false)
            }
            if remaining <= 0, let window = response.staleWhileRevalidate, request.maxAge == nil, request.minFresh == nil,
                Self.subtracting(0, remaining) <= window
            {
                return .serve(source: .staleCache(.staleWhileRevalidate), age: age, revalidateInBackground: true)
            }
        }
        return revalidation(of: entry, otherwise: remaining > 0 ? "not fresh enough for min-fresh, no validators" : "stale without validators")
    }

    /// `.revalidate` with the entry's validators, or `.fetch(reason:)` when it has none.
    private func revalidation(of entry: CacheEntryHead, otherwise reason: String) -> CacheDecision {
        let conditional = conditionalHeaders(for: entry)
        return conditional.isEmpty ? .fetch(reason: reason) : .revalidate(conditionalHeaders: conditional)
    }

    /// Whether a stored response that ``decide(method:requestHeaders:policy:entry:now:)`` sent to
    /// the network past (`.fetch`: stale or unvalidated, with no validators to revalidate it
    /// with) may still stand in for an error, as ``mayServeStaleOnError(_:now:requestHeaders:)``
    /// then decides: RFC 5861 §4's `stale-if-error` applies to any stored response, with or
    /// without validators. Only for a `GET` whose headers select it (§4.1 `Vary`; in a shared
    /// cache, §3.5 `Authorization`) and not under ``HTTPCachePolicy/reloadIgnoringCache``, which
    /// leaves the store out.
    func mayStandInForErrors(_ entry: CacheEntryHead, method: HTTPMethod, requestHeaders: HTTPHeaders, policy: HTTPCachePolicy) -> Bool {
        guard method == .get, policy != .reloadIgnoringCache, varyMatches(entry, requestHeaders: requestHeaders) else { return false }
        if isShared, entry.requestHadAuthorization, !Self.allowsSharedAuthorized(responseDirectives(entry.headers)) { return false }
        return true
    }

    /// Whether a stored response may answer after the network failed or the server answered
    /// with a 5xx (RFC 5861 §4, `stale-if-error`): it is stale by at most the larger of the
    /// response's and the request's `stale-if-error` windows (a fresh entry always qualifies when a
    /// window is given). Never when the response forbids stale use (`must-revalidate`,
    /// `no-cache`; in a shared cache `proxy-revalidate`/`s-maxage`, §4.2.4 — the most
    /// restrictive directive wins, §4.2.1) or the request says `no-store`.
    func mayServeStaleOnError(_ entry: CacheEntryHead, now: Date, requestHeaders: HTTPHeaders) -> Bool {
        let request = requestDirectives(requestHeaders)
        let response = responseDirectives(entry.headers)
        guard !request.noStore, !forbidsStale(response) else { return false }
        guard let window = [response.staleIfError, request.staleIfError].compactMap({ $0 }).max() else { return false }
        let staleness = max(0, Self.subtracting(currentAge(of: entry, now: now), freshnessLifetime(of: entry, response: response)))
        return staleness <= window
    }
}
