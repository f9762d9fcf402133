import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a redirect response turns into the next request (RFC 9110 §15.4), as pure functions.
///
/// - 301 and 302 turn POST into GET without a body; 303 turns anything but HEAD into GET;
///   307 and 308 keep the method and the body.
/// - `Authorization`, `Cookie` and `Proxy-Authorization` are never sent to another origin.
/// - Going back to a URL already visited with the same method is a loop.
enum RedirectRules {
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]
    static let credentialHeaders = ["Authorization", "Cookie", "Proxy-Authorization"]
    /// The headers that describe a body, dropped with it when a redirect turns the method into GET
    /// (an upload's `Content-Type`, multipart's included, is one of them).
    static let bodyHeaders = ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"]

    /// The next request, a failure (limit or loop), or `nil` when `head` is not a redirect to follow.
    static func nextRequest(
        after request: URLRequest, response head: ResponseHead, original: URLRequest?,
        history: [RedirectStep], limit: Int
    ) -> Result<URLRequest, CourierError>? {
        guard limit > 0, redirectStatuses.contains(head.statusCode),
            let location = head.headers.value(for: "Location"), !location.isEmpty,
            let current = request.url
        else { return nil }
        guard let target = URL(string: location, relativeTo: current)?.absoluteURL, target.isHTTP else {
            return .failure(
                CourierError(
                    .invalidResponse, "The redirect from \(current.absoluteString) points to an invalid location \"\(location)\".",
                    responseCode: head.statusCode, url: current))
        }
        guard history.count < limit else {
            return .failure(
                CourierError(
                    .tooManyRedirects, "Stopped after \(limit) redirects (last: \(current.absoluteString) → \(target.absoluteString)).",
                    responseCode: head.statusCode, url: current))
        }
        var next = request
        next.url = target
        let method = request.method
        let becomesGET =
            (head.statusCode == 303 && method != .head)
            || ((head.statusCode == 301 || head.statusCode == 302) && method == .post)
        if becomesGET {
            next.method = .get
            next.httpBody = nil
            var headers = next.headers
            bodyHeaders.forEach { headers.remove(name: $0) }
            next.headers = headers
        }
        if target.origin != current.origin {
            var headers = next.headers
            credentialHeaders.forEach { headers.remove(name: $0) }
            next.headers = headers
        }
        let step = RedirectStep(url: target, method: next.method)
        let originalStep = original.flatMap { original in original.url.map { RedirectStep(url: $0, method: original.method) } }
        if history.contains(step) || step == originalStep {
            return .failure(
                CourierError(
                    .tooManyRedirects, "Redirect loop: \(current.absoluteString) redirects back to \(target.absoluteString).",
                    responseCode: head.statusCode, url: current))
        }
        return .success(next)
    }
}

extension RequestEngine {
    /// The request to follow `head` with, a failure, or `nil` when `head` is not a redirect to follow.
    func redirectRequest(for head: ResponseHead, in exchange: Exchange) -> Result<URLRequest, CourierError>? {
        var result = RedirectRules.nextRequest(
            after: exchange.request, response: head, original: record.initialRequest,
            history: machine.redirectHistory, limit: session.configuration.maximumRedirects)
        if case .success(let proposed)? = result {
            let policy = redirectPolicy ?? session.configuration.redirectPolicy
            result = policy.decide(proposed, LazyHTTPResponse(head: head).httpResponse).map { .success($0) }
        }
        if case .success(let next)? = result {
            machine.redirectFollowed(exchange: exchange.number, from: exchange.request, to: next)
        }
        return result
    }
}
