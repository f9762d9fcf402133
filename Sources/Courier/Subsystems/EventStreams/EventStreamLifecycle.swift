import Foundation

/// The lifecycle of an event stream across its connections, as a state machine with no I/O:
/// events in, one action out. How the stream ended is carried by the transition that ends it.
struct EventStreamLifecycle: Sendable {
    /// Where the stream is.
    enum State: Sendable, Equatable {
        /// Not started.
        case idle
        /// A connection is being made; `failures` attempts in a row failed before it.
        case connecting(failures: Int)
        /// The server accepted the stream on this connection at `since` (events may flow); the
        /// `failures` in a row before it still count until the connection proves stable.
        case open(since: Duration, failures: Int)
        /// Waiting to reconnect; `failures` attempts in a row have failed.
        case waiting(failures: Int)
        /// Over: cleanly (`nil`) or with an error.
        case finished(CourierError?)

        static func == (lhs: State, rhs: State) -> Bool {
            switch (lhs, rhs) {
            case (.idle, .idle): true
            case (.open(let since1, let failures1), .open(let since2, let failures2)): since1 == since2 && failures1 == failures2
            case (.connecting(let a), .connecting(let b)), (.waiting(let a), .waiting(let b)): a == b
            case (.finished(let a), .finished(let b)): a?.kind == b?.kind
            default: false
            }
        }
    }

    /// What the server said when a connection's response head arrived.
    enum Verdict: Sendable {
        /// A 200 `text/event-stream`: the stream is open.
        case accepted
        /// A 204: the server wants the stream to stop.
        case stop
        /// Worth another attempt later (a 5xx, 408 or 429).
        case retryable(CourierError)
        /// Never worth another attempt (another status, another content type, a failed validator).
        case fatal(CourierError)
    }

    /// What happened.
    enum Event: Sendable {
        /// The consumer asked for the first element.
        case start
        /// A connection's response head was judged.
        case judged(Verdict)
        /// The connection ended: cleanly (`nil`) or with an error.
        case connectionEnded(CourierError?)
        /// The stream was cancelled (`cancel()` or the consuming task).
        case cancelled(CourierError)
        /// The stream itself failed, whatever the connection does (an event past the size limit).
        case failed(CourierError)
        /// The reconnection delay passed.
        case delayElapsed
    }

    /// What the driver must do.
    enum Action: Sendable, Equatable {
        /// Open a connection.
        case connect
        /// Wait `delay` (before jitter), then deliver ``Event/delayElapsed``; `failures` attempts in
        /// a row have failed (or ended before they proved stable), `reason` is why the last
        /// connection ended.
        case reconnect(delay: Duration, failures: Int, reason: CourierError?)
        /// End the sequence: cleanly (`nil`) or by throwing the error.
        case finish(CourierError?)
        /// Nothing to do.
        case none

        static func == (lhs: Action, rhs: Action) -> Bool {
            switch (lhs, rhs) {
            case (.connect, .connect), (.none, .none): true
            case (.reconnect(let d1, let f1, let r1), .reconnect(let d2, let f2, let r2)): d1 == d2 && f1 == f2 && r1?.kind == r2?.kind
            case (.finish(let a), .finish(let b)): a?.kind == b?.kind
            default: false
            }
        }
    }

    private(set) var state: State = .idle
    let policy: EventStreamReconnection
    /// Whether the request may be sent again (idempotent, or the policy allows re-sending it).
    let mayResend: Bool

    init(policy: EventStreamReconnection, method: HTTPMethod) {
        self.policy = policy
        mayResend = method.isIdempotent || policy.resendsNonIdempotentRequests
    }

    /// Applies `event`, which happened at `now` on the stream's clock (any fixed origin);
    /// `serverRetry` is the reconnection time the stream set (`retry:`), if any.
    mutating func handle(_ event: Event, at now: Duration = .zero, serverRetry: Duration? = nil) -> Action {
        switch (state, event) {
        case (.finished, _):
            return .none
        case (_, .cancelled(let error)), (_, .failed(let error)):
            state = .finished(error)
            return .finish(error)
        case (.idle, .start):
            state = .connecting(failures: 0)
            return .connect
        case (.connecting(let failures), .judged(.accepted)):
            state = .open(since: now, failures: failures)
            return .none
        case (.connecting, .judged(.stop)):
            state = .finished(nil)
            return .finish(nil)
        case (.connecting, .judged(.fatal(let error))):
            state = .finished(error)
            return .finish(error)
        case (.connecting(let failures), .judged(.retryable(let error))):
            return retry(failures: failures + 1, reason: error, serverRetry: serverRetry)
        case (.connecting(let failures), .connectionEnded(let error)):
            return retry(failures: failures + 1, reason: error, serverRetry: serverRetry)
        case (.open(let since, let failures), .connectionEnded(let error)):
            // Only a connection that stayed open a while shows the stream is healthy again: one
            // that ends soon after it opened (a server answering `retry: 0` and closing after
            // each event) is one more failure, so the delay backs off instead of repeating.
            let stable = now - since >= policy.stableConnectionDuration
            return retry(failures: stable ? 0 : failures + 1, reason: error, serverRetry: serverRetry)
        case (.waiting(let failures), .delayElapsed):
            state = .connecting(failures: failures)
            return .connect
        default:
            return .none
        }
    }

    /// After a connection ended: reconnect if allowed, else finish with what ended it.
    private mutating func retry(failures: Int, reason: CourierError?, serverRetry: Duration?) -> Action {
        let retryable = reason.map(Self.isRetryable) ?? true
        let exhausted = policy.maximumConsecutiveFailures.map { failures > $0 } ?? false
        guard policy.isEnabled, mayResend, retryable, !exhausted else {
            state = .finished(reason)
            return .finish(reason)
        }
        state = .waiting(failures: failures)
        return .reconnect(delay: delay(failures: failures, serverRetry: serverRetry), failures: failures, reason: reason)
    }

    /// The server's `retry:` (else the default), raised to the policy's floor, doubled for each
    /// failure in a row beyond the first, capped at the maximum; the floor wins over the cap.
    func delay(failures: Int, serverRetry: Duration?) -> Duration {
        let floor = max(policy.minimumDelay, .zero)
        var delay = max(serverRetry ?? policy.defaultDelay, floor)
        if failures > 1 {
            for _ in 1..<min(failures, 32) where delay < policy.maximumDelay { delay *= 2 }
        }
        return max(min(delay, policy.maximumDelay), floor)
    }

    /// Whether a connection that ended with `error` is worth another attempt: network failures
    /// are; what a new attempt would only repeat (a refused certificate, an invalid request, an
    /// event past the size limit, a failed validator) is not.
    static func isRetryable(_ error: CourierError) -> Bool {
        switch error.kind {
        case .connectionLost, .timedOut, .cannotConnect, .cannotFindHost, .transportFailed, .invalidResponse,
            .secureConnectionFailed:
            true
        case .validationFailed:
            error.responseCode.map { $0 >= 500 || $0 == 408 || $0 == 429 } ?? false
        default:
            false
        }
    }
}
