import Foundation

/// What the HTTP cache does for a request, as ``HTTPCacheRules/decide(method:requestHeaders:policy:entry:now:)`` says.
enum CacheDecision: Sendable, Hashable {
    /// Serve the stored response without asking the server. `source` is ``ResponseSource/cache``
    /// or ``ResponseSource/staleCache(_:)``; `age` is its current age in seconds (for the `Age`
    /// field); `revalidateInBackground` is `true` under `stale-while-revalidate` (RFC 5861 §3):
    /// refresh the entry after answering.
    case serve(source: ResponseSource, age: Int, revalidateInBackground: Bool)
    /// Send the request with these extra header fields (`If-None-Match`, `If-Modified-Since`;
    /// RFC 9111 §4.3.1); a `304` answer serves the stored body, freshened (§4.3.4).
    case revalidate(conditionalHeaders: HTTPHeaders)
    /// Go to the network as if nothing were stored; `reason` is for the miss event.
    case fetch(reason: String)
    /// `only-if-cached` (the request directive or ``HTTPCachePolicy/onlyIfCached``) and nothing
    /// usable is stored: answer `504 Gateway Timeout` (RFC 9111 §5.2.1.7).
    case unsatisfiable
}
