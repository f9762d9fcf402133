import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a request's exchanges stand: the one machine the request engine feeds and obeys.
///
/// Pure value type, no I/O, no clocks, no tasks. It wraps the request's ``RequestLifecycle``
/// (which alone tracks the phase and the attempt) and owns what happens around an attempt: the
/// session's admission, the numbering of exchanges, the redirects followed within the attempt
/// and whether one of them dropped the body, and the three asynchronous excursions (request
/// adapters, response-head handlers, retriers). Every excursion follows one pattern: the machine
/// emits ``Action/runExcursion(_:_:)`` with a fresh ``ExcursionToken``, the engine runs it
/// wherever it must, and its result comes back as an event carrying that token; a result whose
/// token is not the one the machine is waiting for (the request was cancelled, or a newer
/// attempt or exchange began) is ignored here, never by a guard in the engine. How each exchange
/// ends (its first failure, a redirect or restart to follow, the transport's failure, or an
/// answer) is decided here and handed to the lifecycle by ``transferCompleted(exchange:failure:)``;
/// how the request ended is the completion carried by the transition that ends it (the
/// lifecycle's `cancel`, `finish` or `awaitDelivery`), kept by the lifecycle's final state. The
/// lifecycle's actions are the machine's too (``Action/lifecycle(_:)``): one vocabulary, nothing
/// translated.
///
/// Inspired by AsyncHTTPClient's `HTTPRequestStateMachine` (the exchange as one machine whose
/// actions the caller performs) and OkHttp's interceptor chain (each excursion proceeds exactly
/// once: a token answers at most once). The tests drive it as event → action tables.
struct ExchangeMachine<Transfer: AnyObject, Failure: Error, Completion> {
    typealias Lifecycle = RequestLifecycle<Transfer, Failure, Completion>
    typealias Hook = Lifecycle.Hook
    typealias ExchangeEnd = Lifecycle.ExchangeEnd
    typealias LifecycleAction = Lifecycle.Action

    /// Asynchronous work the engine runs outside the request's executor, answered by an event.
    enum Excursion {
        /// Run the request adapters on the attempt's request; answer ``adapted(_:_:)``.
        case adapters(attempt: Int, URLRequest)
        /// Ask the response-head handlers about the final head of exchange `exchange` (its events
        /// wait meanwhile); answer ``responseHeadDecided(_:proceed:)``.
        case responseHeadHandlers(exchange: Int, Transfer)
        /// Ask the retriers whether the attempt that failed with `failure` is tried again; answer
        /// ``retryDecided(_:_:)``.
        case retriers(attempt: Int, Failure)

        /// Which of the three this is.
        var kind: ExcursionKind {
            switch self {
            case .adapters: .adapters
            case .responseHeadHandlers: .responseHeadHandlers
            case .retriers: .retriers
            }
        }
    }

    /// The kinds of ``Excursion``.
    enum ExcursionKind: Equatable {
        case adapters, responseHeadHandlers, retriers
    }

    /// Names one excursion; its result is accepted only while the machine still waits for it.
    struct ExcursionToken: Equatable {
        let kind: ExcursionKind
        let serial: Int
    }

    /// What the retriers decided.
    enum RetryVerdict {
        /// Try again after this delay.
        case retry(after: Duration)
        /// Do not: the attempt ends with this failure.
        case conclude(Failure)
    }

    /// Work the engine must do after the state changed: the lifecycle's actions, passed on as
    /// they are, and the machine's own around them (admission, excursions, heads, the end of an
    /// attempt).
    enum Action {
        /// Do what the lifecycle decided: nothing, build the attempt's request (once admitted),
        /// start, suspend or resume an exchange, evaluate an attempt, wait before a retry, cancel,
        /// discard an exchange nobody owns, finish, or hand the end of the body over. The events
        /// they answer are the machine's of the same names (``requestBuilt(attempt:_:adapting:)``
        /// or ``preparationFailed(attempt:_:)``, ``transferStarted(attempt:_:)``,
        /// ``evaluated(attempt:_:askRetriers:)``, ``delayElapsed(attempt:)``, ``delivered()``).
        case lifecycle(LifecycleAction)
        /// Ask the session whether the request may start; answer ``admitted(attempt:)`` or
        /// ``refused(attempt:_:)``.
        case admit(attempt: Int)
        /// A late admission of a request that already ended: give the session its slot back.
        case releaseAdmission
        /// Run this excursion; its result comes back with the token. Indirect (boxed, and rare) so
        /// that the action stays small enough to copy inline rather than through value witnesses.
        indirect case runExcursion(Excursion, ExcursionToken)
        /// Stop the exchange's transfer: it failed, and ends with that failure once the transport says it stopped.
        case stopTransfer(Transfer)
        /// The response-head handlers let exchange `exchange`'s body in: take it, then the events held meanwhile.
        case acceptHead(exchange: Int, Transfer)
        /// The response-head handlers refused exchange `exchange`'s response: cancel the request.
        case refuseHead(exchange: Int, Transfer)
        /// The attempt is the last: make the body final and send ``finish(attempt:_:awaitingDelivery:)``.
        case conclude(attempt: Int, failure: Failure?)

        /// Nothing to do.
        static var none: Action { .lifecycle(.none) }
    }

    /// What an event did: an optional user hook to call first, then one action.
    struct Transition {
        var hook: Hook?
        var action: Action
        static var ignored: Transition { Transition(hook: nil, action: .none) }
    }

    /// The request's phase and attempt.
    private(set) var lifecycle = Lifecycle()
    /// Whether the session let the request start; asked once, before the first attempt prepares.
    private(set) var admitted = false
    /// The number of the last exchange started (0 before the first), counted by the lifecycle.
    var exchangeNumber: Int { lifecycle.exchangeNumber }
    /// Redirects followed within the current attempt, for the limit and loop detection.
    private(set) var redirectHistory: [RedirectStep] = []
    /// Whether a redirect of this attempt dropped the body (POST → GET after 301/302, anything → GET after 303).
    private(set) var redirectDroppedBody = false
    /// How the exchange in flight will end, once something decided it (a failure, or a redirect
    /// or restart to follow); `nil` while it is still on its way to an answer. Handed to the
    /// lifecycle by ``transferCompleted(exchange:failure:)``.
    private var ending: ExchangeEnd?
    /// The excursion whose result the machine waits for, and its token.
    private var waiting: (token: ExcursionToken, excursion: Excursion)?
    private var lastSerial = 0

    /// The public view of the state.
    var publicState: RequestState { lifecycle.publicState }
    /// The outcome, once the request has completed or been cancelled.
    var completion: Completion? { lifecycle.completion }

    /// The exchange in flight, if it is number `number`: the transport's events of any other one are stale.
    func liveExchange(_ number: Int) -> (attempt: Int, transfer: Transfer)? {
        guard number == exchangeNumber else { return nil }
        return lifecycle.transferInFlight
    }

    /// Whether the exchange in flight already knows how it ends (failed, or redirected): its body is not taken.
    var exchangeIsEnding: Bool {
        if case .none = ending { return false }
        return true
    }

    /// Whether the exchange in flight already failed; a later failure does not replace the first.
    var exchangeHasFailed: Bool {
        if case .failed? = ending { return true }
        return false
    }

    /// The token of the excursion whose result the machine waits for, if any.
    var pending: ExcursionToken? { waiting?.token }

    /// Whether exchange `number`'s events wait for the response-head handlers.
    func holdsEvents(of number: Int) -> Bool {
        waiting?.token.kind == .responseHeadHandlers && number == exchangeNumber
    }

    // MARK: - User verbs

    mutating func startAutomatically() -> Transition { lift(lifecycle.startAutomatically()) }
    mutating func resume() -> Transition { lift(lifecycle.resume()) }
    mutating func suspend() -> Transition { lift(lifecycle.suspend()) }
    mutating func cancel(_ completion: Completion) -> Transition { lift(lifecycle.cancel(completion)) }

    // MARK: - Preparing an attempt

    /// The session let the request start.
    mutating func admitted(attempt: Int) -> Transition {
        // Asked once: a second answer would prepare the attempt twice.
        guard !admitted else { return .ignored }
        guard isPreparing(attempt) else {
            // Admitted after it ended (a cancel got there first): the session must not wait for it.
            return lifecycle.completion == nil ? .ignored : Transition(action: .releaseAdmission)
        }
        admitted = true
        return Transition(action: .lifecycle(.prepare(attempt: attempt)))
    }

    /// The session refused the request (it is shutting down): the attempt fails with `failure`.
    mutating func refused(attempt: Int, _ failure: Failure) -> Transition {
        preparationFailed(attempt: attempt, failure)
    }

    /// The attempt's request is built; with `adapting`, adapters must have their say first.
    mutating func requestBuilt(attempt: Int, _ request: URLRequest, adapting: Bool) -> Transition {
        guard adapting else { return lift(lifecycle.prepared(attempt: attempt, request)) }
        guard isPreparing(attempt) else { return .ignored }
        return excursion(.adapters(attempt: attempt, request))
    }

    /// The adapters' result for the excursion `token`.
    mutating func adapted(_ token: ExcursionToken, _ result: Result<URLRequest, Failure>) -> Transition {
        guard case .adapters(let attempt, _)? = accept(token) else { return .ignored }
        switch result {
        case .success(let request): return lift(lifecycle.prepared(attempt: attempt, request))
        case .failure(let failure): return lift(lifecycle.preparationFailed(attempt: attempt, failure))
        }
    }

    /// Building (or admitting) the attempt's request failed; the failure goes to evaluation.
    mutating func preparationFailed(attempt: Int, _ failure: Failure) -> Transition {
        lift(lifecycle.preparationFailed(attempt: attempt, failure))
    }

    /// Whether an outcome of preparing `attempt` would still be taken (monitors hear only of those).
    func isPreparing(_ attempt: Int) -> Bool {
        lifecycle.preparingAttempt == attempt
    }

    // MARK: - Exchanges

    /// The engine started the exchange it was asked to start.
    mutating func transferStarted(attempt: Int, _ transfer: Transfer) -> Transition {
        lift(lifecycle.transferStarted(attempt: attempt, transfer))
    }

    /// The final head of exchange `number` passed its checks; with `askHandlers`, the
    /// response-head handlers decide before its body is taken.
    mutating func headArrived(exchange number: Int, askHandlers: Bool) -> Transition {
        guard let live = liveExchange(number) else { return .ignored }
        guard askHandlers else { return Transition(action: .acceptHead(exchange: number, live.transfer)) }
        return excursion(.responseHeadHandlers(exchange: number, live.transfer))
    }

    /// The response-head handlers' decision for the excursion `token`.
    mutating func responseHeadDecided(_ token: ExcursionToken, proceed: Bool) -> Transition {
        guard case .responseHeadHandlers(let number, _)? = accept(token), let live = liveExchange(number) else { return .ignored }
        return Transition(action: proceed ? .acceptHead(exchange: number, live.transfer) : .refuseHead(exchange: number, live.transfer))
    }

    /// Exchange `number`'s response is a redirect the rules and the policy let through, to `next`:
    /// the exchange ends by following it (unless it fails first).
    mutating func redirectFollowed(exchange number: Int, from request: URLRequest, to next: URLRequest) {
        guard liveExchange(number) != nil, ending == nil else { return }
        ending = .followed(next)
        if let url = next.url { redirectHistory.append(RedirectStep(url: url, method: next.method)) }
        // The upload lives outside the URLRequest: once a redirect turned the method into GET
        // (or a policy dropped the body), no later exchange of this attempt sends it.
        if next.method == .get || next.method == .head, request.method != next.method {
            redirectDroppedBody = true
        }
    }

    /// Exchange `number` must be sent again as `request` (a download whose partial body the server
    /// will not resume): it ends by following it, like a redirect that counts for nothing.
    mutating func restart(exchange number: Int, with request: URLRequest) {
        guard liveExchange(number) != nil, ending == nil else { return }
        ending = .followed(request)
    }

    /// Exchange `number` failed: the first failure is the one it ends with, and its transfer stops.
    mutating func exchangeFailed(exchange number: Int, _ failure: Failure) -> Transition {
        guard let live = liveExchange(number) else { return .ignored }
        if !exchangeHasFailed { ending = .failed(failure) }
        return Transition(action: .stopTransfer(live.transfer))
    }

    /// The transport finished exchange `number`, with `failure` if it (or a check of the finished
    /// body) found one; the exchange ends as decided, failed or followed, or else answered.
    mutating func transferCompleted(exchange number: Int, failure: Failure?) -> Transition {
        guard let live = liveExchange(number) else { return .ignored }
        if let failure, !exchangeHasFailed { ending = .failed(failure) }
        let end = ending ?? .answered
        ending = nil
        return lift(lifecycle.transferEnded(attempt: live.attempt, end))
    }

    /// An exchange that could not start ended as `end` (it never reached a transport).
    mutating func transferEnded(attempt: Int, _ end: ExchangeEnd) -> Transition {
        ending = nil
        return lift(lifecycle.transferEnded(attempt: attempt, end))
    }

    // MARK: - Evaluation and retries

    /// Validation gave the attempt's outcome: `failure`, or success; with `askRetriers`, the
    /// retriers decide whether a failed attempt is tried again.
    mutating func evaluated(attempt: Int, _ failure: Failure?, askRetriers: Bool) -> Transition {
        guard lifecycle.evaluatingAttempt == attempt else { return .ignored }
        guard let failure, askRetriers else { return Transition(action: .conclude(attempt: attempt, failure: failure)) }
        return excursion(.retriers(attempt: attempt, failure))
    }

    /// The retriers' verdict for the excursion `token`.
    mutating func retryDecided(_ token: ExcursionToken, _ verdict: RetryVerdict) -> Transition {
        guard case .retriers(let attempt, let failure)? = accept(token) else { return .ignored }
        switch verdict {
        case .conclude(let final):
            return Transition(action: .conclude(attempt: attempt, failure: final))
        case .retry(let delay):
            return lift(lifecycle.retry(attempt: attempt, after: delay, dueTo: failure))
        }
    }

    /// The retry delay is over: start the next attempt, or hold it while suspended.
    mutating func delayElapsed(attempt: Int) -> Transition {
        lift(lifecycle.delayElapsed(attempt: attempt))
    }

    /// The attempt is complete with `completion`; with `awaitingDelivery`, a consumer still has
    /// to take the end of the body first.
    mutating func finish(attempt: Int, _ completion: Completion, awaitingDelivery: Bool = false) -> Transition {
        lift(lifecycle.finish(attempt: attempt, completion, awaitingDelivery: awaitingDelivery))
    }

    /// The consumer took the end of the body.
    mutating func delivered() -> Transition { lift(lifecycle.delivered()) }

    // MARK: - Private

    /// Starts waiting for `excursion`, with a token no earlier excursion had.
    private mutating func excursion(_ excursion: Excursion) -> Transition {
        lastSerial += 1
        let token = ExcursionToken(kind: excursion.kind, serial: lastSerial)
        waiting = (token, excursion)
        return Transition(action: .runExcursion(excursion, token))
    }

    /// The excursion `token` names, if the machine still waits for it and the phase it belongs
    /// to is still on (a cancel, a newer attempt or a newer exchange makes it stale); it answers once.
    private mutating func accept(_ token: ExcursionToken) -> Excursion? {
        guard let excursion = waiting?.excursion, waiting?.token == token else { return nil }
        waiting = nil
        switch excursion {
        case .adapters(let attempt, _):
            return isPreparing(attempt) ? excursion : nil
        case .responseHeadHandlers(let number, _):
            return liveExchange(number) != nil ? excursion : nil
        case .retriers(let attempt, _):
            return lifecycle.evaluatingAttempt == attempt ? excursion : nil
        }
    }

    /// Passes a lifecycle transition on, updating what the machine owns around it.
    // Owned, like `RequestEngine.apply`'s transition, so its action moves into the new one.
    private mutating func lift(_ transition: __owned Lifecycle.Transition) -> Transition {
        let hook = transition.hook
        let action = transition.action
        var admitting: Int?
        switch action {
        case .prepare(let attempt):
            // A new attempt: redirects and dropped bodies of the last one no longer count.
            redirectHistory = []
            redirectDroppedBody = false
            if !admitted { admitting = attempt }
        case .startTransfer:
            ending = nil
        default:
            break
        }
        if !lifecycle.hasPhase {
            // The request ended (or only delivers its body): nothing it waited for is wanted any more.
            waiting = nil
        }
        if let admitting { return Transition(hook: hook, action: .admit(attempt: admitting)) }
        return Transition(hook: hook, action: .lifecycle(action))
    }
}

extension ExchangeMachine.Transition {
    init(action: ExchangeMachine.Action) {
        self.init(hook: nil, action: action)
    }
}
