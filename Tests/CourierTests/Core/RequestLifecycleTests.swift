import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The request lifecycle as event → transition tables, without I/O.
@Suite struct RequestLifecycleTests {
    final class FakeTransfer {}
    typealias Lifecycle = RequestLifecycle<FakeTransfer, String, String>

    /// A readable summary of a transition, so tables compare plain strings.
    static func describe(_ transition: Lifecycle.Transition) -> String {
        let hook = transition.hook.map { "\($0) + " } ?? ""
        switch transition.action {
        case .none: return hook + "none"
        case .prepare(let attempt): return hook + "prepare(\(attempt))"
        case .startTransfer(let attempt, _, let request): return hook + "start(\(attempt), \(request.url?.path ?? ""))"
        case .suspendTransfer: return hook + "suspendTransfer"
        case .resumeTransfer: return hook + "resumeTransfer"
        case .evaluate(let attempt, let failure): return hook + "evaluate(\(attempt)\(failure.map { ", \($0)" } ?? ""))"
        case .scheduleRetry(let attempt, let delay, _): return hook + "retry(\(attempt), \(delay))"
        case .cancel(let transfer, let completion): return hook + "cancel(\(transfer == nil ? "no transfer" : "transfer"), \(completion))"
        case .discardTransfer: return hook + "discard"
        case .finish(let completion): return hook + "finish(\(completion))"
        case .awaitDelivery(let completion): return hook + "awaitDelivery(\(completion))"
        }
    }

    static let request = URLRequest(url: URL(string: "http://example.test/a")!)
    static let redirect = URLRequest(url: URL(string: "http://example.test/b")!)

    /// Steps through `events`, returning each transition and the public state after it.
    static func run(_ events: [(inout Lifecycle, FakeTransfer) -> Lifecycle.Transition]) -> [String] {
        var lifecycle = Lifecycle()
        let transfer = FakeTransfer()
        return events.map { event in
            let transition = event(&lifecycle, transfer)
            return "\(describe(transition)) → \(lifecycle.publicState)"
        }
    }

    @Test func successPath() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
            { l, _ in l.finish(attempt: 1, "ok") },
        ])
        #expect(
            steps == [
                "willResume + prepare(1) → resumed",
                "start(1, /a) → resumed",
                "none → resumed",
                "evaluate(1) → resumed",
                "finish(ok) → finished",
            ])
    }

    @Test func repeatedVerbsAreIdempotent() {
        var lifecycle = Lifecycle()
        let resumes = (0..<100).map { _ in Self.describe(lifecycle.resume()) }
        #expect(resumes.first == "willResume + prepare(1)")
        #expect(resumes.dropFirst().allSatisfy { $0 == "none" })
        let suspends = (0..<100).map { _ in Self.describe(lifecycle.suspend()) }
        #expect(suspends.first == "willSuspend + none")
        #expect(suspends.dropFirst().allSatisfy { $0 == "none" })
        let cancels = (0..<100).map { _ in Self.describe(lifecycle.cancel("cancelled")) }
        #expect(cancels.first == "willCancel + cancel(no transfer, cancelled)")
        #expect(cancels.dropFirst().allSatisfy { $0 == "none" })
        #expect(lifecycle.publicState == .cancelled)
    }

    @Test func suspendAndResumeWhileTransferring() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.suspend() },
            { l, _ in l.resume() },
        ])
        #expect(steps.suffix(2) == ["willSuspend + suspendTransfer → suspended", "willResume + resumeTransfer → resumed"])
    }

    @Test func suspendedBeforeStartStartsOnResume() {
        let steps = Self.run([
            { l, _ in l.suspend() },
            { l, _ in l.resume() },
        ])
        #expect(steps == ["willSuspend + none → suspended", "willResume + prepare(1) → resumed"])
    }

    @Test func preparationFinishingWhileSuspendedWaitsForResume() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.suspend() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, _ in l.resume() },
        ])
        #expect(
            steps == [
                "willResume + prepare(1) → resumed",
                "willSuspend + none → suspended",
                "none → suspended",
                "willResume + start(1, /a) → resumed",
            ])
    }

    @Test func cancelWhileTransferringCancelsTheTransferAndIgnoresItsEnd() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.cancel("cancelled") },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
            { l, _ in l.finish(attempt: 1, "late") },
            { l, _ in l.resume() },
        ])
        #expect(
            steps == [
                "willResume + prepare(1) → resumed",
                "start(1, /a) → resumed",
                "none → resumed",
                "willCancel + cancel(transfer, cancelled) → cancelled",
                "none → cancelled",
                "none → cancelled",
                "none → cancelled",
            ])
    }

    @Test func cancelBeforeResumeNeverStarts() {
        let steps = Self.run([
            { l, _ in l.cancel("cancelled") },
            { l, _ in l.resume() },
        ])
        #expect(steps == ["willCancel + cancel(no transfer, cancelled) → cancelled", "none → cancelled"])
    }

    @Test func redirectStartsTheNextExchangeInTheSameAttempt() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .followed(Self.redirect)) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
        ])
        #expect(steps.suffix(3) == ["start(1, /b) → resumed", "none → resumed", "evaluate(1) → resumed"])
    }

    @Test func redirectWhileSuspendedWaitsForResume() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.suspend() },
            { l, _ in l.transferEnded(attempt: 1, .followed(Self.redirect)) },
            { l, _ in l.resume() },
        ])
        #expect(steps.suffix(2) == ["none → suspended", "willResume + start(1, /b) → resumed"])
    }

    @Test func retryPath() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
            { l, _ in l.retry(attempt: 1, after: .milliseconds(5), dueTo: "503") },
            { l, _ in l.delayElapsed(attempt: 1) },
            { l, _ in l.prepared(attempt: 2, Self.request) },
        ])
        #expect(
            steps.suffix(3) == [
                "retry(1, 0.005 seconds) → resumed",
                "prepare(2) → resumed",
                "start(2, /a) → resumed",
            ])
    }

    @Test func retryDelayEndingWhileSuspendedHoldsTheNextAttempt() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
            { l, _ in l.retry(attempt: 1, after: .zero, dueTo: "503") },
            { l, _ in l.suspend() },
            { l, _ in l.delayElapsed(attempt: 1) },
            { l, _ in l.resume() },
        ])
        #expect(steps.suffix(3) == ["willSuspend + none → suspended", "none → suspended", "willResume + prepare(2) → resumed"])
    }

    @Test func staleEventsFromAnEarlierAttemptAreIgnored() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 2, .answered) },
            { l, _ in l.prepared(attempt: 3, Self.request) },
            { l, _ in l.finish(attempt: 1, "early") },
        ])
        #expect(steps.suffix(3) == ["none → resumed", "none → resumed", "none → resumed"])
    }

    @Test func preparationFailureIsEvaluatedLikeATransportError() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.preparationFailed(attempt: 1, "invalid URL") },
            { l, _ in l.finish(attempt: 1, "invalid URL") },
        ])
        #expect(steps.suffix(2) == ["evaluate(1, invalid URL) → resumed", "finish(invalid URL) → finished"])
    }

    @Test func anExchangeFailureTravelsToEvaluation() {
        let steps = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .failed("reset")) },
            { l, _ in l.retry(attempt: 1, after: .seconds(1), dueTo: "503") },
            { l, _ in l.delayElapsed(attempt: 1) },
            { l, _ in l.prepared(attempt: 2, Self.request) },
            { l, t in l.transferStarted(attempt: 2, t) },
            { l, _ in l.transferEnded(attempt: 2, .answered) },
            { l, _ in l.finish(attempt: 2, "ok") },
        ])
        #expect(
            steps.suffix(7) == [
                "evaluate(1, reset) → resumed", "retry(1, 1.0 seconds) → resumed", "prepare(2) → resumed",
                "start(2, /a) → resumed", "none → resumed", "evaluate(2) → resumed", "finish(ok) → finished",
            ])
    }

    @Test func aFailureWhileSuspendedIsEvaluatedAndARedirectWaits() {
        let failed = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.suspend() },
            { l, _ in l.transferEnded(attempt: 1, .failed("timed out")) },
        ])
        #expect(failed.suffix(2) == ["willSuspend + suspendTransfer → suspended", "evaluate(1, timed out) → suspended"])
        let redirected = Self.run([
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, Self.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.suspend() },
            { l, _ in l.transferEnded(attempt: 1, .followed(Self.redirect)) },
            { l, _ in l.resume() },
        ])
        #expect(redirected.suffix(2) == ["none → suspended", "willResume + start(1, /b) → resumed"])
    }

    /// The start that follows adding a response handler, against every verb the caller may send first.
    @Test func theAutomaticStartNeverOverridesTheCaller() {
        #expect(Self.run([{ l, _ in l.startAutomatically() }]) == ["willResume + prepare(1) → resumed"])
        #expect(
            Self.run([{ l, _ in l.suspend() }, { l, _ in l.startAutomatically() }])
                == ["willSuspend + none → suspended", "none → suspended"])
        #expect(
            Self.run([{ l, _ in l.cancel("c") }, { l, _ in l.startAutomatically() }])
                == ["willCancel + cancel(no transfer, c) → cancelled", "none → cancelled"])
        #expect(
            Self.run([{ l, _ in l.resume() }, { l, _ in l.startAutomatically() }])
                == ["willResume + prepare(1) → resumed", "none → resumed"])
        // A caller's later resume still starts a request it suspended before the automatic start.
        #expect(
            Self.run([{ l, _ in l.suspend() }, { l, _ in l.startAutomatically() }, { l, _ in l.resume() }]).last
                == "willResume + prepare(1) → resumed")
    }

    @Test func finishedRequestsIgnoreEverything() {
        var lifecycle = Lifecycle()
        _ = lifecycle.resume()
        _ = lifecycle.preparationFailed(attempt: 1, "invalid URL")
        _ = lifecycle.finish(attempt: 1, "done")
        let transitions = [lifecycle.resume(), lifecycle.suspend(), lifecycle.cancel("c"), lifecycle.delayElapsed(attempt: 1)]
        #expect(transitions.map(Self.describe) == ["none", "none", "none", "none"])
        #expect(lifecycle.completion == "done")
        #expect(lifecycle.publicState == .finished)
    }

    @Test func anUnexpectedTransferIsDiscarded() {
        var lifecycle = Lifecycle()
        let transition = lifecycle.transferStarted(attempt: 1, FakeTransfer())
        #expect(Self.describe(transition) == "discard")
    }
}
