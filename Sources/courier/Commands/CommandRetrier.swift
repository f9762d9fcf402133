import Courier
import CourierLocking
import Foundation

/// `--retry N`, as curl retries: after a timeout, a host that cannot be resolved, a lost
/// connection, or a 408, 429, 500, 502, 503 or 504 answer; a refused connection too with
/// `--retry-connrefused`, and any failure with `--retry-all-errors`. The first wait is
/// `--retry-delay` (1 s by default), doubling after each retry; no retry starts once
/// `--retry-max-time` has passed.
struct CommandRetrier: RequestInterceptor {
    /// The statuses that are retried (and, with `--retry`, fail validation so that they can be).
    static let retriedStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes

    let limit: Int
    let firstDelay: Double
    let retryAllErrors: Bool
    let retryRefusedConnections: Bool
    /// No retry after this instant.
    let deadline: ContinuousClock.Instant?
    /// Retries so far, by request.
    private let counts = Locked<[UUID: Int]>([:])

    init(options: FetchOptions, start: ContinuousClock.Instant = .now) {
        limit = options.retries
        firstDelay = options.retryDelay ?? 1
        retryAllErrors = options.retryAllErrors
        retryRefusedConnections = options.retryConnectionRefused
        deadline = options.retryMaxTime.map { start + .seconds($0) }
    }

    func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        guard !error.isCancelled, shouldRetry(error) else { return .doNotRetry }
        if let deadline, ContinuousClock.now >= deadline { return .doNotRetry }
        let count = counts.withLock { counts -> Int? in
            let done = counts[request.id, default: 0]
            guard done < limit else { return nil }
            counts[request.id] = done + 1
            return done
        }
        guard let count else { return .doNotRetry }
        let delay = Duration.seconds(min(firstDelay * pow(2, Double(count)), 600))
        return delay > .zero ? .retryWithDelay(delay) : .retry
    }

    /// Whether `error` is worth another attempt.
    func shouldRetry(_ error: CourierError) -> Bool {
        if retryAllErrors { return true }
        switch error.kind {
        case .timedOut, .cannotFindHost, .connectionLost: return true
        case .cannotConnect: return retryRefusedConnections
        case .validationFailed: return error.responseCode.map(Self.retriedStatusCodes.contains) ?? false
        default: return false
        }
    }
}
