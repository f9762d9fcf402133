import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Observes everything that happens to a session's requests. Every method has a no-op default,
/// so implement only what you need.
///
/// Events of one request arrive in order, synchronously on that request's serial executor: keep
/// the methods quick, and hop to your own queue for anything slow.
public protocol EventMonitor: Sendable {
    /// The request object was created (nothing is sent yet).
    func requestDidCreate(_ request: any Request)
    /// `resume()` took effect.
    func requestDidResume(_ request: any Request)
    /// `suspend()` took effect.
    func requestDidSuspend(_ request: any Request)
    /// `cancel()` took effect.
    func requestDidCancel(_ request: any Request)
    /// The attempt's `URLRequest` was built and adapted; `attempt` counts from 1.
    func request(_ request: any Request, didAdapt urlRequest: URLRequest, attempt: Int)
    /// Preparing the request failed (invalid URL, encoding, adapter error).
    func request(_ request: any Request, didFailToPrepareWith error: CourierError)
    /// An exchange is about to be handed to the transport (an attempt's first, or a redirect that
    /// Courier follows): add to `headers` what this exchange should carry, such as a W3C
    /// `traceparent`. `attempt` counts from 1 and stays the same across redirects.
    ///
    /// Called after adapters and the cookie store had their say, before Courier checks every header
    /// is valid HTTP (an invalid one fails the request with `.invalidRequest`, naming it). The
    /// exchange's ``request(_:didStartExchange:headers:)`` event shows the result.
    func request(_ request: any Request, willSend urlRequest: URLRequest, attempt: Int, headers: inout HTTPHeaders)
    /// An exchange was handed to the transport; `headers` are exactly those sent, in order
    /// (including cookies and, for resumable downloads, `Range` and `If-Range`).
    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders)
    /// A response head arrived.
    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse)
    /// A redirect is being followed.
    func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse)
    /// Download progress changed.
    func request(_ request: any Request, didUpdateDownloadProgress progress: TransferProgress)
    /// Upload progress changed.
    func request(_ request: any Request, didUpdateUploadProgress progress: TransferProgress)
    /// An exchange ended (successfully or not) with these metrics.
    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?)
    /// Validation rejected the response.
    func request(_ request: any Request, didFailValidationWith error: CourierError)
    /// The request will be retried after `delay`.
    func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError)
    /// The request finished: `error` is `nil` on success.
    func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?)
    /// A response serializer produced its result.
    func request(_ request: any Request, didSerialize result: Result<any Sendable, CourierError>, using serializer: String)
    /// The HTTP cache served, missed, stored, revalidated or invalidated a response for this request.
    func request(_ request: any Request, didUseCache event: HTTPCacheEvent)
    /// The session changed something about how it works (for example, a transport fell back).
    func session(_ session: Session, didNotice notice: SessionNotice)
}

extension EventMonitor {
    /// Does nothing.
    public func requestDidCreate(_ request: any Request) {}
    /// Does nothing.
    public func requestDidResume(_ request: any Request) {}
    /// Does nothing.
    public func requestDidSuspend(_ request: any Request) {}
    /// Does nothing.
    public func requestDidCancel(_ request: any Request) {}
    /// Does nothing.
    public func request(_ request: any Request, didAdapt urlRequest: URLRequest, attempt: Int) {}
    /// Does nothing.
    public func request(_ request: any Request, didFailToPrepareWith error: CourierError) {}
    /// Adds nothing.
    public func request(_ request: any Request, willSend urlRequest: URLRequest, attempt: Int, headers: inout HTTPHeaders) {}
    /// Does nothing.
    public func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {}
    /// Does nothing.
    public func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {}
    /// Does nothing.
    public func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {}
    /// Does nothing.
    public func request(_ request: any Request, didUpdateDownloadProgress progress: TransferProgress) {}
    /// Does nothing.
    public func request(_ request: any Request, didUpdateUploadProgress progress: TransferProgress) {}
    /// Does nothing.
    public func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {}
    /// Does nothing.
    public func request(_ request: any Request, didFailValidationWith error: CourierError) {}
    /// Does nothing.
    public func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) {}
    /// Does nothing.
    public func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {}
    /// Does nothing.
    public func request(_ request: any Request, didSerialize result: Result<any Sendable, CourierError>, using serializer: String) {}
    /// Does nothing.
    public func request(_ request: any Request, didUseCache event: HTTPCacheEvent) {}
    /// Does nothing.
    public func session(_ session: Session, didNotice notice: SessionNotice) {}
}

/// Something a session reports about itself.
public struct SessionNotice: Sendable, CustomStringConvertible {
    /// What kind of notice this is.
    public enum Kind: String, Sendable {
        /// The requested transport could not be used; another carries requests.
        case transportFallback
        /// A server pool switched its active server.
        case serverSwitched
        /// The session's configuration cannot be honoured (see ``SessionConfiguration/validate()``):
        /// every request fails with `.invalidConfiguration`.
        case invalidConfiguration
        /// Debug builds only: a request path starting with `/` replaced the path of the session's
        /// ``Session/baseURL`` (`https://api.x/v2` + `/users` → `https://api.x/users`).
        case basePathDropped
    }

    /// The kind.
    public let kind: Kind
    /// A sentence explaining it.
    public let message: String

    /// Creates a notice.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// `kind: message`.
    public var description: String { "\(kind.rawValue): \(message)" }
}

/// Sends every event to each monitor in turn.
struct CompositeEventMonitor: Sendable {
    let monitors: [any EventMonitor]

    var isEmpty: Bool { monitors.isEmpty }

    func callAsFunction(_ event: (any EventMonitor) -> Void) {
        for monitor in monitors { event(monitor) }
    }
}
