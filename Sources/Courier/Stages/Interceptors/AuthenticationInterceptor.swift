import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// Puts a credential on every request and refreshes it when the server rejects it, exactly once
/// for any number of requests that fail at the same time.
///
/// ```swift
/// let auth = AuthenticationInterceptor(authenticator: OAuthAuthenticator(), credential: storedCredential)
/// let api = Session(baseURL: apiURL, interceptor: auth)
/// let me = try await api.request("me").validate().serializingDecodable(User.self).value
/// ```
///
/// - Before each attempt the current credential is applied. If it ``AuthenticationCredential/requiresRefresh``,
///   it is refreshed first; while a refresh runs, every request waits for it.
/// - When a request fails and the authenticator says it failed because of its credential (401 by
///   default), the credential is refreshed once and every request waiting on that refresh is
///   retried with the new credential. A request that was sent with an older credential than the
///   current one is retried at once, without a refresh.
/// - A refresh error clears the credential and fails every waiting request. So do too many
///   refreshes within the ``refreshWindow``. Later requests fail to adapt until you set a new
///   ``credential``.
///
/// Failures arrive as `CourierError(.authenticationFailed)` whose `underlyingError` is an
/// ``AuthenticationError``. As with any retrier, a 401 is only a failure once a validator rejects
/// it: add `validate()` to the requests.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor {
    /// The credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// What applies and refreshes credentials.
    public let authenticator: AuthenticatorType
    /// The refresh limit; `nil` allows unlimited refreshes.
    public let refreshWindow: RefreshWindow?

    private struct State {
        var credential: Credential?
        /// Changes with every new credential (set, refreshed or cleared), so a decision made on
        /// a snapshot can tell whether the credential moved on meanwhile.
        var generation = 0
        var isRefreshing = false
        /// Why the last refresh failed, until a new credential is set; given to requests that
        /// were waiting for that refresh but only arrived after it ended.
        var refreshFailure: AuthenticationError?
        var waiters: [CheckedContinuation<Result<Credential, AuthenticationError>, Never>] = []
        var refreshTimes: [ContinuousClock.Instant] = []
    }

    // A POSIX-mutex box rather than `Synchronization.Mutex`: on Linux ThreadSanitizer cannot see
    // `Mutex`'s futex wait, so contended refreshes would be reported as races (see `Locked`).
    private let state: Locked<State>

    /// What `settle` does once it has looked at the state.
    private enum SettleStep {
        case wait
        case resume(Result<Credential, AuthenticationError>)
        case start(Credential)
    }

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: Applies and refreshes the credential.
    ///   - credential: The credential to start with; without one, requests fail to adapt until it is set.
    ///   - refreshWindow: At most this many refreshes within this interval; `nil` for no limit.
    public init(
        authenticator: AuthenticatorType, credential: Credential? = nil,
        refreshWindow: RefreshWindow? = RefreshWindow()
    ) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        state = Locked(State(credential: credential))
    }

    /// The current credential. Setting it (after a login, say) replaces it for every later
    /// attempt; a refresh that is running when you set it overwrites it when it finishes.
    public var credential: Credential? {
        get { state.withLock { $0.credential } }
        set {
            state.withLock { state in
                state.credential = newValue
                state.refreshFailure = nil
                state.generation += 1
            }
        }
    }

    /// How many requests are waiting for the running refresh.
    var waitingCount: Int {
        state.withLock { $0.waiters.count }
    }

    // MARK: - Adapting

    /// Applies the current credential, refreshing it first if it requires that, or waiting for a
    /// refresh that is running. Throws ``AuthenticationError``.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        let credential: Credential
        switch await usableCredential(for: session) {
        case .success(let usable):
            credential = usable
        case .failure(let failure):
            throw CourierError(.authenticationFailed, "Authentication failed: \(failure).", underlyingError: failure, url: request.url)
        }
        var adapted = request
        authenticator.apply(credential, to: &adapted)
        return adapted
    }

    private func usableCredential(for session: Session) async -> Result<Credential, AuthenticationError> {
        let (credential, generation, isRefreshing) = state.withLock { ($0.credential, $0.generation, $0.isRefreshing) }
        if !isRefreshing {
            guard let credential else { return .failure(.missingCredential) }
            // `requiresRefresh` is user code, so it runs outside the lock; `settle` notices if
            // the credential changed in the meantime.
            if !credential.requiresRefresh { return .success(credential) }
        }
        return await settle(stale: credential, generation: generation, session: session)
    }

    // MARK: - Retrying

    /// Refreshes the credential (once for all concurrent failures) and retries, if the
    /// authenticator says the request failed because of its credential.
    public func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        // An authentication or adaptation failure may come from this interceptor; asking again would loop.
        guard !error.isCancelled, error.kind != .adaptationFailed, error.kind != .authenticationFailed else { return .doNotRetry }
        let context = await request.retryContext()
        guard let response = context.response(for: error), let sent = context.lastRequest,
            authenticator.didRequest(sent, with: response, failDueToAuthenticationError: error)
        else { return .doNotRetry }
        let (credential, generation, isRefreshing, failure) = state.withLock {
            ($0.credential, $0.generation, $0.isRefreshing, $0.refreshFailure)
        }
        if !isRefreshing {
            guard let credential else { return decision(for: .failure(failure ?? .missingCredential), error: error) }
            // Sent with an older credential than the current one: the newer one may work.
            if !authenticator.isRequest(sent, authenticatedWith: credential) { return .retry }
        }
        return decision(for: await settle(stale: credential, generation: generation, session: session), error: error)
    }

    private func decision(for outcome: Result<Credential, AuthenticationError>, error: CourierError) -> RetryDecision {
        switch outcome {
        case .success:
            return .retry
        case .failure(let failure):
            let status = error.responseCode.map { " after a \($0) response" } ?? ""
            return .doNotRetryWithError(
                CourierError(
                    .authenticationFailed, "Authentication failed\(status).",
                    responseCode: error.responseCode, underlyingError: failure, url: error.url))
        }
    }

    // MARK: - The single refresh

    /// Returns the credential to use instead of `stale`, which was current at `generation`:
    /// the outcome of the running refresh, the newer credential if one replaced it meanwhile,
    /// or the outcome of a refresh this call starts.
    private func settle(stale: Credential?, generation: Int, session: Session) async -> Result<Credential, AuthenticationError> {
        return await withCheckedContinuation { continuation in
            let now = ContinuousClock.now
            let step: SettleStep = state.withLock { state in
                if state.isRefreshing {
                    state.waiters.append(continuation)
                    return .wait
                }
                guard state.generation == generation, let stale else {
                    return .resume(state.credential.map { .success($0) } ?? .failure(state.refreshFailure ?? .missingCredential))
                }
                if let window = refreshWindow {
                    state.refreshTimes.removeAll { now - $0 >= window.interval }
                    if state.refreshTimes.count >= window.maximumAttempts { return .resume(.failure(.excessiveRefresh(window))) }
                    state.refreshTimes.append(now)
                }
                state.isRefreshing = true
                state.waiters.append(continuation)
                return .start(stale)
            }
            switch step {
            case .wait:
                break
            case .resume(let outcome):
                continuation.resume(returning: outcome)
            case .start(let credential):
                // Its own task, so that no single waiter's cancellation can abandon the others.
                Task { await self.runRefresh(of: credential, session: session) }
            }
        }
    }

    private func runRefresh(of credential: Credential, session: Session) async {
        let outcome: Result<Credential, AuthenticationError>
        do {
            outcome = .success(try await authenticator.refresh(credential, for: session))
        } catch {
            outcome = .failure(.refreshFailed(error))
        }
        let waiters = state.withLock { state in
            state.isRefreshing = false
            state.generation += 1
            // A failed refresh leaves no credential: the old one was rejected.
            switch outcome {
            case .success(let credential):
                state.credential = credential
                state.refreshFailure = nil
            case .failure(let failure):
                state.credential = nil
                state.refreshFailure = failure
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
