import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries failures that are likely to go away: transient transport errors and the status codes
/// servers use for "try again later", with exponential backoff and `Retry-After` honoured.
///
/// ```swift
/// let api = Session(interceptor: RetryPolicy(retryLimit: 3))
/// let user = try await api.request("users/42").validate().serializingDecodable(User.self).value
/// ```
///
/// A request is retried when all of these hold:
/// - it was not cancelled, and fewer than ``retryLimit`` retries happened so far;
/// - its method is in ``retryableHTTPMethods`` (idempotent methods only by default, so a `POST`
///   is never sent twice unless you allow it);
/// - the error's kind is in ``retryableErrorKinds``, or the error is a validation failure whose
///   status code is in ``retryableHTTPStatusCodes``. A status code is only an error once a
///   validator rejects it, so add `validate()` to requests whose status codes should be retried.
///
/// The delay before retry *n* (counting from 0) is `exponentialBackoffScale *
/// exponentialBackoffBase^n` seconds, or a random duration between zero and that with
/// ``jitter`` ("full jitter", which spreads out clients that failed together). When the response
/// carries `Retry-After`, its value is used instead (seconds or an HTTP-date, measured from the
/// response's `Date` header when present so that client clock skew does not matter), capped at
/// ``maximumRetryAfter``. Delays are slept on `SessionConfiguration.retryClock`.
public struct RetryPolicy: RequestInterceptor {
    /// The default number of retries: 2.
    public static let defaultRetryLimit = 2
    /// The default backoff base: 2 (each delay doubles).
    public static let defaultExponentialBackoffBase = 2
    /// The default backoff scale: 0.5 s (delays 0.5 s, 1 s, 2 s, …).
    public static let defaultExponentialBackoffScale = 0.5
    /// The idempotent methods (RFC 9110 §9.2.2): GET, HEAD, PUT, DELETE, OPTIONS, TRACE and QUERY.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options, .trace, .query]
    /// 408 Request Timeout, 429 Too Many Requests, 500, 502, 503 and 504.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Transport failures that are usually transient: timeouts, lost connections, refused or
    /// unreachable hosts and failed name lookups.
    public static let defaultRetryableErrorKinds: Set<CourierError.Kind> = [.timedOut, .connectionLost, .cannotConnect, .cannotFindHost]

    /// The most retries of one request.
    public let retryLimit: Int
    /// The base of the exponential backoff.
    public let exponentialBackoffBase: Int
    /// The first delay, in seconds; later delays multiply it by the base.
    public let exponentialBackoffScale: Double
    /// Whether each backoff delay is drawn at random between zero and its computed value.
    public let jitter: Bool
    /// Methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPMethod>
    /// Status codes (of validation failures) that are retried.
    public let retryableHTTPStatusCodes: Set<Int>
    /// Error kinds that are retried.
    public let retryableErrorKinds: Set<CourierError.Kind>
    /// The longest `Retry-After` honoured; longer values are cut to it.
    public let maximumRetryAfter: Duration

    /// The current time, for `Retry-After` dates when the response has no `Date` header.
    var now: @Sendable () -> Date = { Date() }
    /// A random number in 0...1, for jitter.
    var randomUnit: @Sendable () -> Double = { Double.random(in: 0...1) }

    /// Creates a policy; every argument has a sensible default.
    ///
    /// - Parameters:
    ///   - retryLimit: The most retries of one request (negative values count as 0).
    ///   - exponentialBackoffBase: Each delay is this many times the previous one (at least 1).
    ///   - exponentialBackoffScale: The first delay in seconds (negative values count as 0).
    ///   - jitter: Draw each backoff delay at random between zero and its computed value.
    ///   - retryableHTTPMethods: Methods that may be retried; add `.post` only for endpoints
    ///     that tolerate a duplicate (for example with an idempotency key).
    ///   - retryableHTTPStatusCodes: Status codes of validation failures that are retried.
    ///   - retryableErrorKinds: Error kinds that are retried.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured.
    public init(
        retryLimit: Int = defaultRetryLimit,
        exponentialBackoffBase: Int = defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = defaultExponentialBackoffScale,
        jitter: Bool = true,
        retryableHTTPMethods: Set<HTTPMethod> = defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<CourierError.Kind> = defaultRetryableErrorKinds,
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.retryLimit = max(0, retryLimit)
        self.exponentialBackoffBase = max(1, exponentialBackoffBase)
        self.exponentialBackoffScale = exponentialBackoffScale.isFinite ? max(0, exponentialBackoffScale) : 0
        self.jitter = jitter
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableErrorKinds = retryableErrorKinds
        self.maximumRetryAfter = max(.zero, maximumRetryAfter)
    }

    /// Retries `error` if it is retryable, after the backoff or `Retry-After` delay.
    public func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        guard !error.isCancelled else { return .doNotRetry }
        let context = await request.retryContext()
        guard context.retryCount < retryLimit, shouldRetry(method: context.method, error: error) else { return .doNotRetry }
        let delay = retryAfterDelay(of: context.response(for: error)) ?? backoffDelay(retryCount: context.retryCount)
        return delay > .zero ? .retryWithDelay(delay) : .retry
    }

    /// Whether a failure of a request with `method` is worth another attempt (the limit aside).
    func shouldRetry(method: HTTPMethod?, error: CourierError) -> Bool {
        guard !error.isCancelled, let method, retryableHTTPMethods.contains(method) else { return false }
        if retryableErrorKinds.contains(error.kind) { return true }
        guard error.kind == .validationFailed, let code = error.responseCode else { return false }
        return retryableHTTPStatusCodes.contains(code)
    }

    /// The backoff before retry number `retryCount + 1`.
    func backoffDelay(retryCount: Int) -> Duration {
        // Computed in floating point and capped, so a large limit cannot overflow `Duration`.
        let exponent = Double(max(0, retryCount))
        let seconds = min(exponentialBackoffScale * pow(Double(exponentialBackoffBase), exponent), HTTPDate.maximumInterval)
        let drawn = jitter ? seconds * min(max(randomUnit(), 0), 1) : seconds
        return .seconds(drawn)
    }

    /// The delay `response`'s `Retry-After` asks for, capped; `nil` without a usable header.
    func retryAfterDelay(of response: HTTPURLResponse?) -> Duration? {
        guard let response, let value = response.value(forHTTPHeaderField: "Retry-After") else { return nil }
        let current = now()
        guard let retryAfter = RetryAfter(value, now: current) else { return nil }
        let reference = response.value(forHTTPHeaderField: "Date").flatMap { HTTPDate.parse($0, now: current) } ?? current
        return min(retryAfter.delay(from: reference), maximumRetryAfter)
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A ``RetryPolicy`` with the default settings: 2 retries of idempotent requests with jittered
    /// exponential backoff.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A ``RetryPolicy`` with these settings.
    public static func retryPolicy(
        retryLimit: Int = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: Int = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        jitter: Bool = true,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableErrorKinds: Set<CourierError.Kind> = RetryPolicy.defaultRetryableErrorKinds,
        maximumRetryAfter: Duration = .seconds(60)
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, jitter: jitter,
            retryableHTTPMethods: retryableHTTPMethods, retryableHTTPStatusCodes: retryableHTTPStatusCodes,
            retryableErrorKinds: retryableErrorKinds, maximumRetryAfter: maximumRetryAfter)
    }
}
