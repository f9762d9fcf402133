import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The exchange machine as event → action tables, without I/O: admission, exchange numbers,
/// redirects, retries, the three excursions and how the request ended.
@Suite struct ExchangeMachineTests {
    final class FakeTransfer {}
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }
    typealias Machine = ExchangeMachine<FakeTransfer, Failure, String>

    static let boom = Failure(description: "boom")
    static let request = URLRequest(url: URL(string: "http://example.test/a")!)
    static let redirect = URLRequest(url: URL(string: "http://example.test/b")!)

    static func describe(_ excursion: Machine.Excursion) -> String {
        switch excursion {
        case .adapters(let attempt, let request): "adapters(\(attempt), \(request.url?.path ?? ""))"
        case .responseHeadHandlers(let exchange, _): "headHandlers(#\(exchange))"
        case .retriers(let attempt, let failure): "retriers(\(attempt), \(failure))"
        }
    }

    /// A readable summary of a transition, so tables compare plain strings.
    static func describe(_ transition: Machine.Transition) -> String {
        let hook = transition.hook.map { "\($0) + " } ?? ""
        let action: String
        switch transition.action {
        case .lifecycle(let decided): action = describe(decided)
        case .admit(let attempt): action = "admit(\(attempt))"
        case .releaseAdmission: action = "releaseAdmission"
        case .runExcursion(let excursion, _): action = "run \(describe(excursion))"
        case .stopTransfer: action = "stopTransfer"
        case .acceptHead(let exchange, _): action = "acceptHead(#\(exchange))"
        case .refuseHead(let exchange, _): action = "refuseHead(#\(exchange))"
        case .conclude(let attempt, let failure): action = "conclude(\(attempt)\(failure.map { ", \($0)" } ?? ""))"
        }
        return hook + action
    }

    /// A lifecycle action the machine passed on.
    static func describe(_ action: Machine.LifecycleAction) -> String {
        switch action {
        case .none: "none"
        case .prepare(let attempt): "prepare(\(attempt))"
        case .startTransfer(let attempt, let exchange, let request): "start(\(attempt), #\(exchange), \(request.url?.path ?? ""))"
        case .suspendTransfer: "suspendTransfer"
        case .resumeTransfer: "resumeTransfer"
        case .evaluate(let attempt, let failure): "evaluate(\(attempt)\(failure.map { ", \($0)" } ?? ""))"
        case .scheduleRetry(let attempt, let delay, let failure): "retry(\(attempt), \(delay), \(failure))"
        case .cancel(let transfer, let completion): "cancel(\(transfer == nil ? "no transfer" : "transfer"), \(completion))"
        case .discardTransfer: "discard"
        case .finish(let completion): "finish(\(completion))"
        case .awaitDelivery(let completion): "awaitDelivery(\(completion))"
        }
    }

    /// Feeds events to one machine, keeping the excursion tokens it hands out.
    final class Driver {
        var machine = Machine()
        let transfer = FakeTransfer()
        var tokens: [Machine.ExcursionToken] = []

        /// The token of the last excursion the machine started.
        var token: Machine.ExcursionToken { tokens[tokens.count - 1] }

        /// One event: the transition it made and the public state after it.
        @discardableResult
        func callAsFunction(_ event: (inout Machine, FakeTransfer) -> Machine.Transition) -> String {
            var machine = self.machine
            let transition = event(&machine, transfer)
            self.machine = machine
            if case .runExcursion(_, let token) = transition.action { tokens.append(token) }
            return "\(ExchangeMachineTests.describe(transition)) → \(machine.publicState)"
        }

        /// Where a table starts: each stage is reached through the ones before it.
        enum Stage: Int {
            /// Resumed: the session is asked to admit attempt 1.
            case resumed
            /// Admitted, attempt 1's request built, its adapters running.
            case adapting
            /// Admitted, attempt 1's request built without adapters, exchange 1 started.
            case transferring
            /// Exchange 1 failed with ``ExchangeMachineTests/boom``: attempt 1 is evaluated.
            case failed
            /// The evaluation kept the failure and asked the retriers.
            case askingRetriers
        }

        init() {}

        /// A driver brought to `stage`.
        convenience init(at stage: Stage) {
            self.init()
            advance(to: stage)
        }

        /// Feeds the events that bring a new machine to `stage`.
        func advance(to stage: Stage) {
            self { m, _ in m.resume() }
            if stage == .adapting {
                self { m, _ in m.admitted(attempt: 1) }
                self { m, _ in m.requestBuilt(attempt: 1, ExchangeMachineTests.request, adapting: true) }
                return
            }
            guard stage.rawValue >= Stage.transferring.rawValue else { return }
            self { m, _ in m.admitted(attempt: 1) }
            self { m, _ in m.requestBuilt(attempt: 1, ExchangeMachineTests.request, adapting: false) }
            self { m, t in m.transferStarted(attempt: 1, t) }
            guard stage.rawValue >= Stage.failed.rawValue else { return }
            self { m, _ in m.transferEnded(attempt: 1, .failed(ExchangeMachineTests.boom)) }
            guard stage.rawValue >= Stage.askingRetriers.rawValue else { return }
            self { m, _ in m.evaluated(attempt: 1, ExchangeMachineTests.boom, askRetriers: true) }
        }
    }

    // MARK: - Admission

    @Test func admissionIsAskedOnceForAllAttempts() {
        let d = Driver()
        var steps = [
            d { m, _ in m.resume() },
            d { m, _ in m.admitted(attempt: 1) },
            d { m, _ in m.requestBuilt(attempt: 1, Self.request, adapting: false) },
            d { m, t in m.transferStarted(attempt: 1, t) },
            d { m, _ in m.transferEnded(attempt: 1, .failed(Self.boom)) },
            d { m, _ in m.evaluated(attempt: 1, Self.boom, askRetriers: true) },
        ]
        let token = d.token
        steps += [
            d { m, _ in m.retryDecided(token, .retry(after: .seconds(1))) },
            d { m, _ in m.delayElapsed(attempt: 1) },
            d { m, _ in m.requestBuilt(attempt: 2, Self.request, adapting: false) },
        ]
        #expect(
            steps == [
                "willResume + admit(1) → resumed",
                "prepare(1) → resumed",
                "start(1, #1, /a) → resumed",
                "none → resumed",
                "evaluate(1, boom) → resumed",
                "run retriers(1, boom) → resumed",
                "retry(1, 1.0 seconds, boom) → resumed",
                "prepare(2) → resumed",
                "start(2, #2, /a) → resumed",
            ])
        #expect(d.machine.admitted)
    }

    @Test func refusedAdmissionFailsTheAttemptLikeAPreparationFailure() {
        let d = Driver()
        let refusal = Failure(description: "shutting down")
        let steps = [
            d { m, _ in m.resume() },
            d { m, _ in m.refused(attempt: 1, refusal) },
            d { m, _ in m.evaluated(attempt: 1, refusal, askRetriers: false) },
            d { m, _ in m.finish(attempt: 1, "refused") },
        ]
        #expect(
            steps == [
                "willResume + admit(1) → resumed",
                "evaluate(1, shutting down) → resumed",
                "conclude(1, shutting down) → resumed",
                "finish(refused) → finished",
            ])
        #expect(!d.machine.admitted)
        #expect(d.machine.completion == "refused")
    }

    @Test func lateAdmissionAfterCancelGivesTheSlotBack() {
        let d = Driver()
        let steps = [
            d { m, _ in m.resume() },
            d { m, _ in m.cancel("cancelled") },
            d { m, _ in m.admitted(attempt: 1) },
        ]
        #expect(
            steps == [
                "willResume + admit(1) → resumed",
                "willCancel + cancel(no transfer, cancelled) → cancelled",
                "releaseAdmission → cancelled",
            ])
        #expect(!d.machine.admitted)
        // An admission for an attempt that is not preparing, while the request runs, is only stale.
        let running = Driver()
        running { m, _ in m.resume() }
        #expect(running { m, _ in m.admitted(attempt: 2) } == "none → resumed")
    }

    // MARK: - Redirects

    static func head(_ status: Int, from url: String, to location: String) -> ResponseHead {
        ResponseHead(statusCode: status, fields: [(name: "Location", value: location)], url: URL(string: url)!, httpVersion: "HTTP/1.1")
    }

    /// Asks the redirect rules about `head` with the machine's history, and records what they let through.
    static func follow(
        _ d: Driver, _ head: ResponseHead, after request: URLRequest, exchange: Int, limit: Int = 10
    ) -> Result<URLRequest, CourierError>? {
        let result = RedirectRules.nextRequest(
            after: request, response: head, original: Self.request, history: d.machine.redirectHistory, limit: limit)
        if case .success(let next)? = result { d.machine.redirectFollowed(exchange: exchange, from: request, to: next) }
        return result
    }

    @Test func followedRedirectStartsTheNextExchangeOfTheSameAttempt() throws {
        let d = Driver(at: .transferring)
        let next = try #require(try Self.follow(d, Self.head(302, from: "http://example.test/a", to: "/b"), after: Self.request, exchange: 1)?.get())
        let steps = [
            d { m, _ in m.transferEnded(attempt: 1, .followed(next)) },
            d { m, t in m.transferStarted(attempt: 1, t) },
        ]
        #expect(steps == ["start(1, #2, /b) → resumed", "none → resumed"])
        #expect(d.machine.redirectHistory == [RedirectStep(url: URL(string: "http://example.test/b")!, method: .get)])
        #expect(!d.machine.redirectDroppedBody)
        // The first exchange's late events are stale; the second one's are live.
        #expect(d.machine.liveExchange(1) == nil)
        #expect(d.machine.liveExchange(2)?.attempt == 1)
    }

    @Test func redirect303DropsTheBodyAnd307KeepsIt() throws {
        var post = Self.request
        post.method = .post
        let d = Driver(at: .transferring)
        let kept = try #require(try Self.follow(d, Self.head(307, from: "http://example.test/a", to: "/b"), after: post, exchange: 1)?.get())
        #expect(kept.method == .post)
        #expect(!d.machine.redirectDroppedBody)
        d { m, _ in m.transferCompleted(exchange: 1, failure: nil) }
        d { m, t in m.transferStarted(attempt: 1, t) }
        let next = try #require(try Self.follow(d, Self.head(303, from: "http://example.test/b", to: "/c"), after: kept, exchange: 2)?.get())
        #expect(next.method == .get)
        #expect(d.machine.redirectDroppedBody)
        // A new attempt starts with the body and no redirects.
        d { m, _ in m.transferEnded(attempt: 1, .failed(Self.boom)) }
        d { m, _ in m.evaluated(attempt: 1, Self.boom, askRetriers: true) }
        let token = d.token
        d { m, _ in m.retryDecided(token, .retry(after: .zero)) }
        #expect(d { m, _ in m.delayElapsed(attempt: 1) } == "prepare(2) → resumed")
        #expect(!d.machine.redirectDroppedBody)
        #expect(d.machine.redirectHistory.isEmpty)
    }

    @Test func redirectLoopAndLimitAreDecidedOnTheMachinesHistory() throws {
        let d = Driver(at: .transferring)
        let toB = try #require(try Self.follow(d, Self.head(302, from: "http://example.test/a", to: "/b"), after: Self.request, exchange: 1)?.get())
        d { m, _ in m.transferEnded(attempt: 1, .followed(toB)) }
        d { m, t in m.transferStarted(attempt: 1, t) }
        let toC = try #require(try Self.follow(d, Self.head(302, from: "http://example.test/b", to: "/c"), after: toB, exchange: 2)?.get())
        d { m, _ in m.transferEnded(attempt: 1, .followed(toC)) }
        d { m, t in m.transferStarted(attempt: 1, t) }
        // Back to /b: a loop.
        let loop = Self.follow(d, Self.head(302, from: "http://example.test/c", to: "/b"), after: toC, exchange: 3)
        guard case .failure(let loopError)? = loop else {
            Issue.record("expected a loop, got \(String(describing: loop))")
            return
        }
        #expect(loopError.kind == .tooManyRedirects)
        #expect(loopError.message.contains("loop"))
        // Two redirects followed: a limit of two stops the third.
        let limited = Self.follow(d, Self.head(302, from: "http://example.test/c", to: "/d"), after: toC, exchange: 3, limit: 2)
        guard case .failure(let limitError)? = limited else {
            Issue.record("expected the limit, got \(String(describing: limited))")
            return
        }
        #expect(limitError.kind == .tooManyRedirects)
        #expect(limitError.message.contains("Stopped after 2 redirects"))
        #expect(d.machine.redirectHistory.count == 2)
        // The failure ends the exchange like any other.
        #expect(d { m, _ in m.transferEnded(attempt: 1, .failed(Self.boom)) } == "evaluate(1, boom) → resumed")
    }

    @Test func redirectOfAStaleExchangeIsNotRecorded() {
        let d = Driver(at: .transferring)
        d.machine.redirectFollowed(exchange: 7, from: Self.request, to: Self.redirect)
        #expect(d.machine.redirectHistory.isEmpty)
    }

    // MARK: - Retries

    @Test func retryDecidedThenDelayThenNextAttempt() {
        let d = Driver(at: .askingRetriers)
        let token = d.token
        let steps = [
            d { m, _ in m.retryDecided(token, .retry(after: .seconds(2))) },
            d { m, _ in m.delayElapsed(attempt: 1) },
            d { m, _ in m.admitted(attempt: 2) },
            d { m, _ in m.requestBuilt(attempt: 2, Self.request, adapting: false) },
            d { m, t in m.transferStarted(attempt: 2, t) },
            d { m, _ in m.transferEnded(attempt: 2, .answered) },
            d { m, _ in m.evaluated(attempt: 2, nil, askRetriers: true) },
            d { m, _ in m.finish(attempt: 2, "ok") },
        ]
        #expect(
            steps == [
                "retry(1, 2.0 seconds, boom) → resumed",
                "prepare(2) → resumed",
                // Admission is asked once: another answer changes nothing.
                "none → resumed",
                "start(2, #2, /a) → resumed",
                "none → resumed",
                "evaluate(2) → resumed",
                // A success never goes to the retriers.
                "conclude(2) → resumed",
                "finish(ok) → finished",
            ])
    }

    @Test func retryWhileSuspendedWaitsForResume() {
        let d = Driver(at: .askingRetriers)
        let token = d.token
        let steps = [
            d { m, _ in m.suspend() },
            d { m, _ in m.retryDecided(token, .retry(after: .seconds(1))) },
            d { m, _ in m.delayElapsed(attempt: 1) },
            d { m, _ in m.resume() },
        ]
        #expect(
            steps == [
                "willSuspend + none → suspended",
                "retry(1, 1.0 seconds, boom) → suspended",
                "none → suspended",
                "willResume + prepare(2) → resumed",
            ])
    }

    @Test func retriersConcludingEndTheAttemptWithTheirFailure() {
        let d = Driver(at: .askingRetriers)
        let token = d.token
        let steps = [
            d { m, _ in m.retryDecided(token, .conclude(Failure(description: "replaced"))) },
            d { m, _ in m.finish(attempt: 1, "failed: replaced") },
        ]
        #expect(steps == ["conclude(1, replaced) → resumed", "finish(failed: replaced) → finished"])
    }

    // MARK: - Excursions: one pattern, stale results ignored

    @Test func adaptersResultIsTakenOnce() {
        let d = Driver()
        d { m, _ in m.resume() }
        d { m, _ in m.admitted(attempt: 1) }
        var steps = [d { m, _ in m.requestBuilt(attempt: 1, Self.request, adapting: true) }]
        let token = d.token
        #expect(token.kind == .adapters)
        steps += [
            d { m, _ in m.adapted(token, .success(Self.redirect)) },
            d { m, _ in m.adapted(token, .success(Self.request)) },
        ]
        #expect(steps == ["run adapters(1, /a) → resumed", "start(1, #1, /b) → resumed", "none → resumed"])
    }

    @Test func adaptersFailureFailsTheAttempt() {
        let d = Driver(at: .adapting)
        let token = d.token
        #expect(d { m, _ in m.adapted(token, .failure(Self.boom)) } == "evaluate(1, boom) → resumed")
    }

    @Test func adaptersResultAfterCancelIsIgnored() {
        let d = Driver(at: .adapting)
        let token = d.token
        let steps = [
            d { m, _ in m.cancel("cancelled") },
            d { m, _ in m.adapted(token, .success(Self.request)) },
        ]
        #expect(steps == ["willCancel + cancel(no transfer, cancelled) → cancelled", "none → cancelled"])
        #expect(d.machine.pending == nil)
    }

    @Test func adaptersResultWhileSuspendedWaitsForResume() {
        let d = Driver(at: .adapting)
        let token = d.token
        let steps = [
            d { m, _ in m.suspend() },
            d { m, _ in m.adapted(token, .success(Self.request)) },
            d { m, _ in m.resume() },
        ]
        #expect(steps == ["willSuspend + none → suspended", "none → suspended", "willResume + start(1, #1, /a) → resumed"])
    }

    @Test func adaptersResultOfAnOlderAttemptIsIgnored() {
        let d = Driver(at: .adapting)
        let first = d.token
        d { m, _ in m.adapted(first, .failure(Self.boom)) }
        d { m, _ in m.evaluated(attempt: 1, Self.boom, askRetriers: true) }
        let retriers = d.token
        d { m, _ in m.retryDecided(retriers, .retry(after: .zero)) }
        d { m, _ in m.delayElapsed(attempt: 1) }
        d { m, _ in m.requestBuilt(attempt: 2, Self.request, adapting: true) }
        let second = d.token
        let steps = [
            d { m, _ in m.adapted(first, .success(Self.redirect)) },
            d { m, _ in m.adapted(second, .success(Self.request)) },
        ]
        #expect(first != second)
        #expect(steps == ["none → resumed", "start(2, #1, /a) → resumed"])
    }

    @Test func responseHeadWithoutHandlersIsAcceptedAtOnce() {
        let d = Driver(at: .transferring)
        #expect(d { m, _ in m.headArrived(exchange: 1, askHandlers: false) } == "acceptHead(#1) → resumed")
        #expect(!d.machine.holdsEvents(of: 1))
        // A head of an exchange that is not live goes nowhere.
        #expect(d { m, _ in m.headArrived(exchange: 2, askHandlers: true) } == "none → resumed")
    }

    @Test func responseHeadHandlersHoldTheExchangeUntilTheyDecide() {
        let d = Driver(at: .transferring)
        let asked = d { m, _ in m.headArrived(exchange: 1, askHandlers: true) }
        let token = d.token
        #expect(asked == "run headHandlers(#1) → resumed")
        #expect(d.machine.holdsEvents(of: 1))
        let steps = [
            d { m, _ in m.responseHeadDecided(token, proceed: true) },
            d { m, _ in m.responseHeadDecided(token, proceed: false) },
        ]
        #expect(steps == ["acceptHead(#1) → resumed", "none → resumed"])
        #expect(!d.machine.holdsEvents(of: 1))
    }

    @Test func responseHeadHandlersRefusing() {
        let d = Driver(at: .transferring)
        d { m, _ in m.headArrived(exchange: 1, askHandlers: true) }
        let token = d.token
        #expect(d { m, _ in m.responseHeadDecided(token, proceed: false) } == "refuseHead(#1) → resumed")
    }

    @Test func responseHeadDecisionAfterCancelIsIgnored() {
        let d = Driver(at: .transferring)
        d { m, _ in m.headArrived(exchange: 1, askHandlers: true) }
        let token = d.token
        let steps = [
            d { m, _ in m.cancel("cancelled") },
            d { m, _ in m.responseHeadDecided(token, proceed: true) },
        ]
        #expect(steps == ["willCancel + cancel(transfer, cancelled) → cancelled", "none → cancelled"])
        #expect(!d.machine.holdsEvents(of: 1))
    }

    @Test func responseHeadDecisionForAnExchangeNoLongerLiveIsIgnored() {
        let d = Driver(at: .transferring)
        d { m, _ in m.headArrived(exchange: 1, askHandlers: true) }
        let token = d.token
        // The exchange ended anyway (a timeout, say) and a retry started a newer one.
        d { m, _ in m.transferEnded(attempt: 1, .failed(Self.boom)) }
        d { m, _ in m.evaluated(attempt: 1, Self.boom, askRetriers: true) }
        let retriers = d.token
        d { m, _ in m.retryDecided(retriers, .retry(after: .zero)) }
        d { m, _ in m.delayElapsed(attempt: 1) }
        d { m, _ in m.requestBuilt(attempt: 2, Self.request, adapting: false) }
        d { m, t in m.transferStarted(attempt: 2, t) }
        #expect(d { m, _ in m.responseHeadDecided(token, proceed: true) } == "none → resumed")
    }

    @Test func retriersVerdictAfterCancelIsIgnored() {
        let d = Driver(at: .askingRetriers)
        let token = d.token
        let steps = [
            d { m, _ in m.cancel("cancelled") },
            d { m, _ in m.retryDecided(token, .retry(after: .seconds(1))) },
            d { m, _ in m.retryDecided(token, .conclude(Self.boom)) },
        ]
        #expect(steps == ["willCancel + cancel(no transfer, cancelled) → cancelled", "none → cancelled", "none → cancelled"])
    }

    @Test func retriersVerdictOfAnOlderAttemptIsIgnored() {
        let d = Driver(at: .askingRetriers)
        let first = d.token
        d { m, _ in m.retryDecided(first, .retry(after: .zero)) }
        d { m, _ in m.delayElapsed(attempt: 1) }
        d { m, _ in m.requestBuilt(attempt: 2, Self.request, adapting: false) }
        d { m, t in m.transferStarted(attempt: 2, t) }
        d { m, _ in m.transferEnded(attempt: 2, .failed(Self.boom)) }
        d { m, _ in m.evaluated(attempt: 2, Self.boom, askRetriers: true) }
        let second = d.token
        let steps = [
            d { m, _ in m.retryDecided(first, .retry(after: .seconds(1))) },
            d { m, _ in m.retryDecided(second, .conclude(Self.boom)) },
        ]
        #expect(steps == ["none → resumed", "conclude(2, boom) → resumed"])
    }

    // MARK: - Cancel in every phase

    @Test func cancelInEveryPhase() {
        func cancelled(after setUp: (Driver) -> Void) -> String {
            let d = Driver()
            setUp(d)
            let line = d { m, _ in m.cancel("cancelled") }
            #expect(d.machine.completion == "cancelled")
            #expect(d.machine.pending == nil)
            #expect(d { m, _ in m.cancel("again") } == "none → cancelled")
            return line
        }
        let lines = [
            cancelled { _ in },
            cancelled { d in d { m, _ in m.resume() } },
            cancelled { d in
                d.advance(to: .adapting)
            },
            cancelled { d in d.advance(to: .transferring) },
            cancelled { d in
                d.advance(to: .transferring)
                d { m, _ in m.headArrived(exchange: 1, askHandlers: true) }
            },
            cancelled { d in
                d.advance(to: .failed)
            },
            cancelled { d in
                d.advance(to: .askingRetriers)
            },
            cancelled { d in
                d.advance(to: .askingRetriers)
                let token = d.token
                d { m, _ in m.retryDecided(token, .retry(after: .seconds(1))) }
            },
            cancelled { d in
                d.advance(to: .transferring)
                d { m, _ in m.suspend() }
            },
            cancelled { d in
                d.advance(to: .transferring)
                d { m, _ in m.transferEnded(attempt: 1, .answered) }
                d { m, _ in m.finish(attempt: 1, "ok", awaitingDelivery: true) }
            },
        ]
        #expect(
            lines == [
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // initialized
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // admitting
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // adapters
                "willCancel + cancel(transfer, cancelled) → cancelled",  // transferring
                "willCancel + cancel(transfer, cancelled) → cancelled",  // head handlers
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // evaluating
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // retriers
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // delaying
                "willCancel + cancel(transfer, cancelled) → cancelled",  // suspended transfer
                "willCancel + cancel(no transfer, cancelled) → cancelled",  // delivering
            ])
    }

    // MARK: - How an exchange ended

    @Test func exchangeEndsAsItsFirstFailureSaysAndStopsItsTransfer() {
        let d = Driver(at: .transferring)
        let steps = [
            d { m, _ in m.exchangeFailed(exchange: 1, Failure(description: "too large")) },
            d { m, _ in m.exchangeFailed(exchange: 1, Failure(description: "second")) },
            d { m, _ in m.transferCompleted(exchange: 1, failure: Failure(description: "transport")) },
        ]
        #expect(steps == ["stopTransfer → resumed", "stopTransfer → resumed", "evaluate(1, too large) → resumed"])
    }

    @Test func exchangeEndsAnsweredOrWithTheTransportsFailure() {
        let answered = Driver(at: .transferring)
        #expect(!answered.machine.exchangeIsEnding)
        #expect(answered { m, _ in m.transferCompleted(exchange: 1, failure: nil) } == "evaluate(1) → resumed")
        let failed = Driver(at: .transferring)
        #expect(failed { m, _ in m.transferCompleted(exchange: 1, failure: Self.boom) } == "evaluate(1, boom) → resumed")
    }

    @Test func exchangeEndsFollowingItsRedirectUnlessItFailsFirst() {
        let followed = Driver(at: .transferring)
        followed.machine.redirectFollowed(exchange: 1, from: Self.request, to: Self.redirect)
        #expect(followed.machine.exchangeIsEnding)
        #expect(!followed.machine.exchangeHasFailed)
        #expect(followed { m, _ in m.transferCompleted(exchange: 1, failure: nil) } == "start(1, #2, /b) → resumed")
        // The next exchange starts with no ending of its own.
        followed { m, t in m.transferStarted(attempt: 1, t) }
        #expect(!followed.machine.exchangeIsEnding)
        // A transport failure after the redirect's head ends the exchange as failed.
        let failed = Driver(at: .transferring)
        failed.machine.redirectFollowed(exchange: 1, from: Self.request, to: Self.redirect)
        #expect(failed { m, _ in m.transferCompleted(exchange: 1, failure: Self.boom) } == "evaluate(1, boom) → resumed")
    }

    @Test func restartedExchangeIsSentAgainWithoutCountingAsARedirect() {
        let d = Driver(at: .transferring)
        d.machine.restart(exchange: 1, with: Self.request)
        #expect(d { m, _ in m.transferCompleted(exchange: 1, failure: nil) } == "start(1, #2, /a) → resumed")
        #expect(d.machine.redirectHistory.isEmpty)
    }

    @Test func endOfAStaleExchangeIsIgnored() {
        let d = Driver(at: .transferring)
        d { m, _ in m.cancel("cancelled") }
        let steps = [
            d { m, _ in m.exchangeFailed(exchange: 1, Self.boom) },
            d { m, _ in m.transferCompleted(exchange: 1, failure: nil) },
        ]
        #expect(steps == ["none → cancelled", "none → cancelled"])
    }

    // MARK: - How the request ended

    @Test func howTheRequestEndedIsCarriedByTheTransitionThatEndsIt() {
        // Answered.
        let answered = Driver(at: .transferring)
        answered { m, _ in m.transferEnded(attempt: 1, .answered) }
        answered { m, _ in m.evaluated(attempt: 1, nil, askRetriers: true) }
        #expect(answered { m, _ in m.finish(attempt: 1, "ok") } == "finish(ok) → finished")
        #expect(answered.machine.completion == "ok")
        // Failed, no retriers.
        let failed = Driver(at: .failed)
        #expect(failed { m, _ in m.evaluated(attempt: 1, Self.boom, askRetriers: false) } == "conclude(1, boom) → resumed")
        #expect(failed { m, _ in m.finish(attempt: 1, "failed: boom") } == "finish(failed: boom) → finished")
        #expect(failed.machine.completion == "failed: boom")
        // Delivered to a consumer at its own pace, then finished.
        let streamed = Driver(at: .transferring)
        streamed { m, _ in m.transferEnded(attempt: 1, .answered) }
        #expect(streamed { m, _ in m.finish(attempt: 1, "ok", awaitingDelivery: true) } == "awaitDelivery(ok) → resumed")
        #expect(streamed.machine.completion == nil)
        #expect(streamed { m, _ in m.delivered() } == "finish(ok) → finished")
        #expect(streamed.machine.completion == "ok")
        // Cancelled: the cancellation is the outcome, a late finish changes nothing.
        let cancelled = Driver(at: .transferring)
        cancelled { m, _ in m.cancel("cancelled") }
        #expect(cancelled { m, _ in m.transferEnded(attempt: 1, .answered) } == "none → cancelled")
        #expect(cancelled { m, _ in m.finish(attempt: 1, "late") } == "none → cancelled")
        #expect(cancelled.machine.completion == "cancelled")
    }

    /// The engine's machine stays small enough to copy inline. A copy of a large value of these
    /// generic types goes through their value witnesses, several times per transport event: with
    /// the completion as a struct of five fields and the retry's delay in the action, an HTTP/2
    /// request made 56 such calls against the previous main's 22 (issue 38, PROFILES.md). Rare,
    /// large payloads are indirect instead.
    @Test func theEngineMachineCopiesInline() {
        let word = MemoryLayout<Int>.size
        #expect(MemoryLayout<RequestCompletion>.size == word)
        #expect(MemoryLayout<RequestEngine.Machine.LifecycleAction>.size <= 4 * word)
        #expect(MemoryLayout<RequestEngine.Machine.Action>.size <= 4 * word)
        #expect(MemoryLayout<RequestEngine.Machine.Transition>.size <= 5 * word)
        #expect(MemoryLayout<RequestEngine.Lifecycle.State>.size <= 3 * word)
    }
}
