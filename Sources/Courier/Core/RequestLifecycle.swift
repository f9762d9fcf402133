import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one state machine of a request's life: every public verb and every asynchronous
/// outcome is an event here, and the caller performs the returned ``Transition`` afterwards.
///
/// Pure value type, no I/O: ``ExchangeMachine`` wraps one (the request engine talks to that
/// machine, which adds admission, redirects, excursions and how each exchange ends) and alone
/// tracks the phase and the attempt; the tests drive it as event → transition tables. `Transfer` is the handle of a running exchange,
/// `Failure` what makes an attempt fail, and `Completion` the final outcome handed to response
/// handlers. An attempt's failure travels in the events and phases that follow it (`transferEnded`,
/// `evaluating`, `evaluate`), and how the request ended is the `cancelled` or `finished` state's
/// completion: nothing beside the machine records an outcome. A request whose consumer takes the
/// body at its own pace (a stream) passes through `delivering` first: the transfer's outcome is
/// known but not yet handed over, and an explicit cancel still makes the request cancelled.
struct RequestLifecycle<Transfer: AnyObject, Failure, Completion> {
    /// What a running or suspended request is doing.
    enum Phase {
        /// The next attempt has not started (a request suspended before it began, or between attempts).
        case idle(attempt: Int)
        /// Building and adapting the `URLRequest` of an attempt.
        case preparing(attempt: Int)
        /// Prepared (or redirected) and waiting to be sent.
        case ready(attempt: Int, URLRequest)
        /// An exchange is on the network.
        case transferring(attempt: Int, Transfer)
        /// The attempt ended, with `failure` unless it got a response; validators and retriers are deciding.
        case evaluating(attempt: Int, failure: Failure?)
        /// Waiting before the next attempt.
        case delaying(attempt: Int)
    }

    /// The lifecycle state; `running` and `suspended` carry the phase they are in.
    enum State {
        case initialized
        case running(Phase)
        case suspended(Phase)
        /// The transfer ended with this outcome; the consumer is still taking the body. Ends with
        /// ``delivered()`` (→ `finished`) or ``cancel(_:)`` (→ `cancelled`).
        case delivering(Completion)
        case cancelled(Completion)
        case finished(Completion)
    }

    /// How an exchange ended, as the engine reports it in ``transferEnded(attempt:_:)``.
    enum ExchangeEnd {
        /// A response arrived and is the attempt's answer.
        case answered
        /// The response is a redirect (or a restart) to follow with this request.
        case followed(URLRequest)
        /// The exchange failed.
        case failed(Failure)
    }

    /// A user hook to call before acting.
    enum Hook: Equatable {
        case willResume, willSuspend, willCancel
    }

    /// Work the engine must do after the state changed.
    enum Action {
        case none
        /// Build and adapt the `URLRequest` for this attempt, then send ``Event/prepared``.
        case prepare(attempt: Int)
        /// Start exchange number `exchange` (counted over the whole request) with this request,
        /// then send ``Event/transferStarted``.
        case startTransfer(attempt: Int, exchange: Int, URLRequest)
        case suspendTransfer(Transfer)
        case resumeTransfer(Transfer)
        /// Validate the outcome (`failure` when the attempt already failed) and ask retriers,
        /// then send ``retry(attempt:after:)`` or ``finish(attempt:_:)``.
        case evaluate(attempt: Int, failure: Failure?)
        /// Wait `delay`, then send ``Event/delayElapsed``; the retry is due to `dueTo`. Indirect
        /// (boxed, and rare) so that the action stays small enough to copy inline rather than
        /// through value witnesses.
        indirect case scheduleRetry(attempt: Int, delay: Duration, dueTo: Failure)
        /// Cancel the exchange (if any) and complete with the cancellation.
        case cancel(Transfer?, Completion)
        /// Stop an exchange nobody owns any more.
        case discardTransfer(Transfer)
        /// Complete: run response handlers with this outcome.
        case finish(Completion)
        /// Hand the end of the body, with this outcome, to the consumer; send ``delivered()``
        /// once it took the last of it.
        case awaitDelivery(Completion)
    }

    /// What an event did: an optional hook to call first, then an action.
    struct Transition {
        var hook: Hook?
        var action: Action
        static var ignored: Transition { Transition(hook: nil, action: .none) }
    }

    private(set) var state: State = .initialized
    /// The number of the last exchange started (0 before the first).
    private(set) var exchangeNumber = 0

    /// The public view of the state.
    var publicState: RequestState {
        switch state {
        case .initialized: .initialized
        case .running, .delivering: .resumed
        case .suspended: .suspended
        case .cancelled: .cancelled
        case .finished: .finished
        }
    }

    /// The outcome, once the request has completed or been cancelled.
    var completion: Completion? {
        switch state {
        case .cancelled(let completion), .finished(let completion): completion
        default: nil
        }
    }

    // The queries below read the state where it lies, binding only the small payloads they return:
    // the engine asks them several times per transport event, and a copy of the whole phase (its
    // request, or the completion) goes through the generic type's value witnesses.

    /// The attempt and transfer of the exchange on the network (running or suspended), if any.
    var transferInFlight: (attempt: Int, transfer: Transfer)? {
        switch state {
        case .running(.transferring(let attempt, let transfer)), .suspended(.transferring(let attempt, let transfer)):
            (attempt, transfer)
        default:
            nil
        }
    }

    /// The attempt being prepared (running or suspended), if any.
    var preparingAttempt: Int? {
        switch state {
        case .running(.preparing(let attempt)), .suspended(.preparing(let attempt)): attempt
        default: nil
        }
    }

    /// The attempt being evaluated (running or suspended), if any.
    var evaluatingAttempt: Int? {
        switch state {
        case .running(.evaluating(let attempt, _)), .suspended(.evaluating(let attempt, _)): attempt
        default: nil
        }
    }

    /// Whether the request is running or suspended (it has a phase).
    var hasPhase: Bool {
        switch state {
        case .running, .suspended: true
        default: false
        }
    }

    // MARK: - User verbs

    /// The automatic start that follows adding a response handler: it starts a request that is
    /// still `initialized` and leaves alone one the caller already resumed, suspended or
    /// cancelled. Start-or-not is decided here, in one transition, whatever order the caller's
    /// verbs and the deferred start reach the request in.
    mutating func startAutomatically() -> Transition {
        guard case .initialized = state else { return .ignored }
        return resume()
    }

    mutating func resume() -> Transition {
        switch state {
        case .initialized:
            state = .running(.preparing(attempt: 1))
            return Transition(hook: .willResume, action: .prepare(attempt: 1))
        case .suspended(let phase):
            switch phase {
            case .idle(let attempt):
                state = .running(.preparing(attempt: attempt))
                return Transition(hook: .willResume, action: .prepare(attempt: attempt))
            case .ready(let attempt, let request):
                state = .running(phase)
                return Transition(hook: .willResume, action: startTransfer(attempt: attempt, request))
            case .transferring(_, let transfer):
                state = .running(phase)
                return Transition(hook: .willResume, action: .resumeTransfer(transfer))
            case .preparing, .evaluating, .delaying:
                state = .running(phase)
                return Transition(hook: .willResume, action: .none)
            }
        case .running, .delivering, .cancelled, .finished:
            return .ignored
        }
    }

    mutating func suspend() -> Transition {
        switch state {
        case .initialized:
            state = .suspended(.idle(attempt: 1))
            return Transition(hook: .willSuspend, action: .none)
        case .running(let phase):
            state = .suspended(phase)
            if case .transferring(_, let transfer) = phase {
                return Transition(hook: .willSuspend, action: .suspendTransfer(transfer))
            }
            return Transition(hook: .willSuspend, action: .none)
        case .suspended, .delivering, .cancelled, .finished:
            return .ignored
        }
    }

    mutating func cancel(_ completion: Completion) -> Transition {
        switch state {
        case .initialized:
            state = .cancelled(completion)
            return Transition(hook: .willCancel, action: .cancel(nil, completion))
        case .running(let phase), .suspended(let phase):
            state = .cancelled(completion)
            if case .transferring(_, let transfer) = phase {
                return Transition(hook: .willCancel, action: .cancel(transfer, completion))
            }
            return Transition(hook: .willCancel, action: .cancel(nil, completion))
        case .delivering:
            // The consumer has not taken the end yet: the cancel wins over the transfer's outcome.
            state = .cancelled(completion)
            return Transition(hook: .willCancel, action: .cancel(nil, completion))
        case .cancelled, .finished:
            return .ignored
        }
    }

    // MARK: - Outcomes of the engine's work

    /// The attempt's request is built and adapted.
    mutating func prepared(attempt: Int, _ request: URLRequest) -> Transition {
        switch state {
        case .running(.preparing(let current)) where current == attempt:
            state = .running(.ready(attempt: attempt, request))
            return Transition(action: startTransfer(attempt: attempt, request))
        case .suspended(.preparing(let current)) where current == attempt:
            state = .suspended(.ready(attempt: attempt, request))
            return .ignored
        default:
            // A cancel can land while adapters run; their result then has nowhere to go.
            return .ignored
        }
    }

    /// Building or adapting the request failed; the failure goes to evaluation like a transport error.
    mutating func preparationFailed(attempt: Int, _ failure: Failure) -> Transition {
        switch state {
        case .running(.preparing(let current)) where current == attempt:
            state = .running(.evaluating(attempt: attempt, failure: failure))
            return Transition(action: .evaluate(attempt: attempt, failure: failure))
        case .suspended(.preparing(let current)) where current == attempt:
            state = .suspended(.evaluating(attempt: attempt, failure: failure))
            return Transition(action: .evaluate(attempt: attempt, failure: failure))
        default:
            return .ignored
        }
    }

    /// The engine started the exchange it was asked to start.
    mutating func transferStarted(attempt: Int, _ transfer: Transfer) -> Transition {
        switch state {
        case .running(.ready(let current, _)) where current == attempt:
            state = .running(.transferring(attempt: attempt, transfer))
            return .ignored
        default:
            // Unreachable while the engine starts transfers synchronously after `.startTransfer`;
            // if it ever is reached, the exchange has no owner and must stop.
            return Transition(action: .discardTransfer(transfer))
        }
    }

    /// The exchange ended as `end` says.
    mutating func transferEnded(attempt: Int, _ end: ExchangeEnd) -> Transition {
        let failure: Failure?
        switch end {
        case .answered: failure = nil
        case .failed(let error): failure = error
        case .followed(let redirect):
            switch state {
            case .running(.transferring(let current, _)) where current == attempt:
                state = .running(.ready(attempt: attempt, redirect))
                return Transition(action: startTransfer(attempt: attempt, redirect))
            case .suspended(.transferring(let current, _)) where current == attempt:
                state = .suspended(.ready(attempt: attempt, redirect))
                return .ignored
            default:
                return .ignored
            }
        }
        switch state {
        case .running(.transferring(let current, _)) where current == attempt:
            state = .running(.evaluating(attempt: attempt, failure: failure))
            return Transition(action: .evaluate(attempt: attempt, failure: failure))
        case .suspended(.transferring(let current, _)) where current == attempt:
            state = .suspended(.evaluating(attempt: attempt, failure: failure))
            return Transition(action: .evaluate(attempt: attempt, failure: failure))
        default:
            // Events of a cancelled exchange can still arrive; they are stale.
            return .ignored
        }
    }

    /// Evaluation decided to try again after `delay`, because of `cause`.
    mutating func retry(attempt: Int, after delay: Duration, dueTo cause: Failure) -> Transition {
        switch state {
        case .running(.evaluating(let current, _)) where current == attempt:
            state = .running(.delaying(attempt: attempt))
            return Transition(action: .scheduleRetry(attempt: attempt, delay: delay, dueTo: cause))
        case .suspended(.evaluating(let current, _)) where current == attempt:
            state = .suspended(.delaying(attempt: attempt))
            return Transition(action: .scheduleRetry(attempt: attempt, delay: delay, dueTo: cause))
        default:
            return .ignored
        }
    }

    /// The retry delay is over: start the next attempt, or hold it while suspended.
    mutating func delayElapsed(attempt: Int) -> Transition {
        switch state {
        case .running(.delaying(let current)) where current == attempt:
            state = .running(.preparing(attempt: attempt + 1))
            return Transition(action: .prepare(attempt: attempt + 1))
        case .suspended(.delaying(let current)) where current == attempt:
            state = .suspended(.idle(attempt: attempt + 1))
            return .ignored
        default:
            return .ignored
        }
    }

    /// Evaluation decided the request is complete; with `awaitingDelivery`, a consumer still has
    /// to take the end of the body before the request is finished.
    mutating func finish(attempt: Int, _ completion: Completion, awaitingDelivery: Bool = false) -> Transition {
        switch state {
        case .running(.evaluating(let current, _)) where current == attempt,
            .suspended(.evaluating(let current, _)) where current == attempt:
            if awaitingDelivery {
                state = .delivering(completion)
                return Transition(action: .awaitDelivery(completion))
            }
            state = .finished(completion)
            return Transition(action: .finish(completion))
        default:
            return .ignored
        }
    }

    /// The consumer took the end of the body: the request is finished with the transfer's outcome.
    mutating func delivered() -> Transition {
        guard case .delivering(let completion) = state else { return .ignored }
        state = .finished(completion)
        return Transition(action: .finish(completion))
    }

    /// The action that starts the next exchange, numbered.
    private mutating func startTransfer(attempt: Int, _ request: URLRequest) -> Action {
        exchangeNumber += 1
        return .startTransfer(attempt: attempt, exchange: exchangeNumber, request)
    }
}

extension RequestLifecycle.Transition {
    init(action: RequestLifecycle.Action) {
        self.init(hook: nil, action: action)
    }
}
