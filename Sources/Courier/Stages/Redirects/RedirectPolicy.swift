import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What to do when a response redirects: follow it, hand the 3xx back, or change the next request.
///
/// Set it for a session (``SessionConfiguration/redirectPolicy``) or for one request with
/// `request.redirect(using:)`; the request's policy wins. The proposed request already has Courier's
/// rules applied (method rewrite, credentials stripped across origins).
public struct RedirectPolicy: Sendable {
    let decide: @Sendable (_ proposed: URLRequest, _ response: HTTPURLResponse) -> URLRequest?

    /// Creates a policy from a closure returning the request to send, or `nil` to stop and deliver the 3xx.
    public init(_ decide: @escaping @Sendable (_ proposed: URLRequest, _ response: HTTPURLResponse) -> URLRequest?) {
        self.decide = decide
    }

    /// Follow every redirect (up to ``SessionConfiguration/maximumRedirects``).
    public static let follow = RedirectPolicy { proposed, _ in proposed }

    /// Never follow: the 3xx response is the response.
    public static let doNotFollow = RedirectPolicy { _, _ in nil }

    /// Follow with a modified request, or return `nil` to stop.
    public static func modify(_ transform: @escaping @Sendable (_ proposed: URLRequest, _ response: HTTPURLResponse) -> URLRequest?) -> RedirectPolicy
    {
        RedirectPolicy(transform)
    }
}

extension Request {
    /// Uses `policy` for this request's redirects instead of the session's.
    @discardableResult
    public nonisolated func redirect(using policy: RedirectPolicy) -> Self {
        engineAccess.perform { $0.redirectPolicy = policy }
        return self
    }
}
