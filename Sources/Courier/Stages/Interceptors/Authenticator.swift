import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential an ``AuthenticationInterceptor`` puts on requests: an OAuth token pair, an API
/// key with an expiry, a signing key.
public protocol AuthenticationCredential: Sendable {
    /// Whether the credential must be refreshed before its next use (for example, because it
    /// expires within the next minute). Checked before every request is adapted.
    var requiresRefresh: Bool { get }
}

/// Knows how to use and renew one kind of credential; an ``AuthenticationInterceptor`` takes care
/// of when, and of doing it once for many requests.
///
/// ```swift
/// struct OAuthAuthenticator: Authenticator {
///     func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
///         urlRequest.headers.update(.authorization(bearerToken: credential.accessToken))
///     }
///     func refresh(_ credential: OAuthCredential, for session: Session) async throws -> OAuthCredential {
///         try await tokenSession.request("token", method: .post, parameters: ["refresh_token": credential.refreshToken])
///             .validate().serializingDecodable(OAuthCredential.self).value
///     }
/// }
/// ```
///
/// `refresh` must not send its request through the interceptor that is waiting for it: use
/// another session (or a session without this interceptor), or it waits for itself forever.
public protocol Authenticator: Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential

    /// Puts `credential` on `urlRequest` (a header, a query item, a signature).
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Returns a fresh credential to replace `credential`; a thrown error fails every request
    /// waiting for it. Give the call its own timeout: requests wait as long as it runs.
    func refresh(_ credential: Credential, for session: Session) async throws -> Credential

    /// Whether `urlRequest` failed because its credential was rejected. The default says yes for
    /// 401 Unauthorized; override it for APIs that signal expiry differently (403, a JSON code).
    func didRequest(
        _ urlRequest: URLRequest, with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool

    /// Whether `urlRequest` was sent with `credential` (rather than with an older one). The
    /// default applies `credential` to a copy and checks that nothing changes.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

extension Authenticator {
    /// Yes for 401 Unauthorized.
    public func didRequest(
        _ urlRequest: URLRequest, with response: HTTPURLResponse,
        failDueToAuthenticationError error: CourierError
    ) -> Bool {
        response.statusCode == 401
    }

    /// Applies `credential` to a copy of `urlRequest` and reports whether the URL and every
    /// header stayed the same (header names compare case-insensitively).
    public func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool {
        var copy = urlRequest
        apply(credential, to: &copy)
        guard copy.url == urlRequest.url else { return false }
        let before = urlRequest.allHTTPHeaderFields ?? [:]
        let after = copy.allHTTPHeaderFields ?? [:]
        return before.count == after.count
            && after.allSatisfy { urlRequest.value(forHTTPHeaderField: $0.key) == $0.value }
    }
}

/// Limits how often credentials may be refreshed, so a server that rejects every fresh
/// credential cannot cause an endless refresh loop.
public struct RefreshWindow: Sendable, Hashable {
    /// The span of time looked back over.
    public let interval: Duration
    /// How many refreshes that span may hold; one more fails with
    /// ``AuthenticationError/excessiveRefresh(_:)``.
    public let maximumAttempts: Int

    /// Creates a window: at most `maximumAttempts` refreshes within any `interval` (30 s and 5 by default).
    public init(interval: Duration = .seconds(30), maximumAttempts: Int = 5) {
        self.interval = interval
        self.maximumAttempts = max(0, maximumAttempts)
    }
}

/// Why an ``AuthenticationInterceptor`` could not authenticate a request.
///
/// It reaches response handlers as the ``CourierError/underlyingError`` of a
/// `CourierError` of kind ``CourierError/Kind/adaptationFailed``, whether it happened while
/// adapting a request or while deciding about a retry:
/// ```swift
/// if case .refreshFailed? = response.error?.underlyingError as? AuthenticationError { showLogin() }
/// ```
public enum AuthenticationError: Error, Sendable, CustomStringConvertible {
    /// The interceptor has no credential (never set, or cleared by a failed refresh).
    case missingCredential
    /// The authenticator's `refresh` threw this error; the credential was cleared.
    case refreshFailed(any Error)
    /// More refreshes were needed than the window allows.
    case excessiveRefresh(RefreshWindow)

    /// A sentence explaining the failure.
    public var description: String {
        switch self {
        case .missingCredential:
            return "The authentication interceptor has no credential (none was set, or the last refresh failed)."
        case .refreshFailed(let error):
            return "Refreshing the credential failed: \(error)"
        case .excessiveRefresh(let window):
            return "The credential was refreshed \(window.maximumAttempts) times within \(window.interval); "
                + "the server keeps rejecting fresh credentials, so no further refresh is attempted."
        }
    }
}
