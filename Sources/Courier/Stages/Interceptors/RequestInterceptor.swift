import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Changes a request before it is sent: add a token, sign it, add common parameters.
///
/// Adapters run before every attempt (so again on each retry), session adapters first, then the
/// request's own in the order added. A thrown error fails the request with `.adaptationFailed`
/// through its response handlers; it is never thrown at the call site.
public protocol RequestAdapter: Sendable {
    /// Returns the request to send instead of `request`.
    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest
}

/// Decides whether a failed request is tried again.
public protocol RequestRetrier: Sendable {
    /// Returns what to do about `error`; `request.retryCount` says how many retries already happened.
    func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision
}

/// Both an adapter and a retrier; implement either method or both.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Sends the request unchanged.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest { request }

    /// Never retries.
    public func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        .doNotRetry
    }
}

/// What a ``RequestRetrier`` wants done about a failure.
public enum RetryDecision: Sendable {
    /// Try again now.
    case retry
    /// Try again after this delay.
    case retryWithDelay(Duration)
    /// Give up with the original error.
    case doNotRetry
    /// Give up with this error instead.
    case doNotRetryWithError(any Error)

    /// Whether this decision retries.
    public var retries: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    /// The delay before the retry, or `nil` if this decision does not retry.
    var delay: Duration? {
        switch self {
        case .retry: .zero
        case .retryWithDelay(let delay): max(delay, .zero)
        case .doNotRetry, .doNotRetryWithError: nil
        }
    }
}

/// Combines adapters and retriers: adapters chain in order, and the first retrier that retries
/// (or gives up with an error of its own) decides.
public struct Interceptor: RequestInterceptor {
    /// The adapters, applied in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, asked in order.
    public let retriers: [any RequestRetrier]

    /// Creates an interceptor from adapters and retriers.
    public init(adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = []) {
        self.adapters = adapters
        self.retriers = retriers
    }

    /// Creates an interceptor from interceptors, each used as adapter and retrier.
    public init(interceptors: [any RequestInterceptor]) {
        self.init(adapters: interceptors, retriers: interceptors)
    }

    /// Creates an interceptor from closures.
    public init(
        adapter: @escaping @Sendable (URLRequest, Session) async throws -> URLRequest,
        retrier: @escaping @Sendable (any Request, Session, CourierError) async -> RetryDecision = { _, _, _ in .doNotRetry }
    ) {
        self.init(adapters: [ClosureAdapter(adapt: adapter)], retriers: [ClosureRetrier(decide: retrier)])
    }

    /// Applies every adapter in order.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        var request = request
        for adapter in adapters {
            request = try await adapter.adapt(request, for: session)
        }
        return request
    }

    /// Asks each retrier in order until one retries or fails with its own error.
    public func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        for retrier in retriers {
            let decision = await retrier.retry(request, for: session, dueTo: error)
            if case .doNotRetry = decision { continue }
            return decision
        }
        return .doNotRetry
    }
}

/// An adapter made from a closure.
public struct ClosureAdapter: RequestAdapter {
    let adaptClosure: @Sendable (URLRequest, Session) async throws -> URLRequest

    /// Creates the adapter.
    public init(adapt: @escaping @Sendable (URLRequest, Session) async throws -> URLRequest) {
        adaptClosure = adapt
    }

    /// Calls the closure.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        try await adaptClosure(request, session)
    }
}

/// A retrier made from a closure.
public struct ClosureRetrier: RequestRetrier {
    let decideClosure: @Sendable (any Request, Session, CourierError) async -> RetryDecision

    /// Creates the retrier.
    public init(decide: @escaping @Sendable (any Request, Session, CourierError) async -> RetryDecision) {
        decideClosure = decide
    }

    /// Calls the closure.
    public func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        await decideClosure(request, session, error)
    }
}
