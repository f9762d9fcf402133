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
        /// The server accepted the stream on this connection (events may flow).
        case open
        /// Waiting to reconnect; `failures` attempts in a row have failed.
        case waiting(failures: Int)
        /// Over: cleanly (`nil`) or with an error.
        case finished(CourierError?)

        static func == (lhs: State, rhs: State) -> Bool {
            switch (lhs, rhs) {
            case (.idle, .idle), (.open, .open): true
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
        /// a row have failed, `reason` is why the last connection ended.
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

    /// Applies `event`; `serverRetry` is the reconnection time the stream set (`retry:`), if any.
    mutating func handle(_ event: Event, serverRetry: Duration? = nil) -> Action {
        switch (state, event) {
        case (.finished, _):
            return .none
        case (_, .cancelled(let error)), (_, .failed(let error)):
            state = .finished(error)
            return .finish(error)
        case (.idle, .start):
            state = .connecting(failures: 0)
            return .connect
        case (.connecting, .judged(.accepted)):
            state = .open
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
        case (.open, .connectionEnded(let error)):
            return retry(failures: 0, reason: error, serverRetry: serverRetry)
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

    /// The server's `retry:` (else the default), doubled for each failure in a row beyond the first, capped.
    func delay(failures: Int, serverRetry: Duration?) -> Duration {
        var delay = serverRetry ?? policy.defaultDelay
        if failures > 1 {
            for _ in 1..<min(failures, 32) where delay < policy.maximumDelay { delay *= 2 }
        }
        return min(delay, policy.maximumDelay)
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
