import Testing
import Foundation
@testable import Courier

/// The event-stream lifecycle as event → action tables, without I/O. Times are on the stream's
/// clock: a connection accepted at `t` and ended at `t + d` stayed open for `d`.
struct EventStreamLifecycleTests {
    typealias Machine = EventStreamLifecycle
    static let lost = CourierError(.connectionLost, "lost")
    static let unavailable = CourierError(.validationFailed, "503", responseCode: 503)
    static let notFound = CourierError(.validationFailed, "404", responseCode: 404)
    static let tooLarge = CourierError(.responseTooLarge, "big")
    static let cancelled = CourierError(.cancelled, "cancelled")
    static let exact = EventStreamReconnection(jitter: 0)

    /// One step: an event at a time on the stream's clock (with the stream's `retry:` so far),
    /// and the action and state it must lead to.
    struct Step {
        let event: Machine.Event
        let time: Duration
        let retry: Duration?
        let action: Machine.Action
        let state: Machine.State

        init(_ event: Machine.Event, at time: Duration = .zero, retry: Duration? = nil, _ action: Machine.Action, _ state: Machine.State) {
            self.event = event
            self.time = time
            self.retry = retry
            self.action = action
            self.state = state
        }
    }

    /// Runs `steps` from a fresh machine; each step's action and state must be as given.
    func run(_ policy: EventStreamReconnection, method: HTTPMethod = .get, _ steps: [Step], sourceLocation: SourceLocation = #_sourceLocation) {
        var machine = Machine(policy: policy, method: method)
        for (index, step) in steps.enumerated() {
            let got = machine.handle(step.event, at: step.time, serverRetry: step.retry)
            #expect(got == step.action, "step \(index): \(step.event)", sourceLocation: sourceLocation)
            #expect(machine.state == step.state, "step \(index): \(step.event)", sourceLocation: sourceLocation)
        }
    }

    static func seconds(_ value: Double) -> Duration { .milliseconds(Int(value * 1000)) }

    @Test func aCleanEndReconnectsAfterTheDefaultDelayThenTheServersRetry() {
        // Both connections stay open past the stable time (10 s), so neither counts as a failure.
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), at: .seconds(0), .none, .open(since: .seconds(0), failures: 0)),
                Step(.connectionEnded(nil), at: .seconds(60), .reconnect(delay: .seconds(3), failures: 0, reason: nil), .waiting(failures: 0)),
                Step(.delayElapsed, at: .seconds(63), .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), at: .seconds(63), .none, .open(since: .seconds(63), failures: 0)),
                Step(
                    .connectionEnded(Self.lost), at: .seconds(80), retry: .milliseconds(750),
                    .reconnect(delay: .milliseconds(750), failures: 0, reason: Self.lost), .waiting(failures: 0)),
                Step(.delayElapsed, .connect, .connecting(failures: 0)),
                Step(.judged(.stop), .finish(nil), .finished(nil)),
                Step(.delayElapsed, .none, .finished(nil)),
            ])
    }

    @Test func failuresBeforeTheStreamOpensBackOffAndAStableConnectionResetsTheCount() {
        var policy = EventStreamReconnection(jitter: 0)
        policy.defaultDelay = .seconds(1)
        policy.maximumDelay = .seconds(5)
        run(
            policy,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.connectionEnded(Self.lost), .reconnect(delay: .seconds(1), failures: 1, reason: Self.lost), .waiting(failures: 1)),
                Step(.delayElapsed, .connect, .connecting(failures: 1)),
                Step(
                    .judged(.retryable(Self.unavailable)), .reconnect(delay: .seconds(2), failures: 2, reason: Self.unavailable),
                    .waiting(failures: 2)),
                Step(.delayElapsed, .connect, .connecting(failures: 2)),
                Step(.connectionEnded(Self.lost), .reconnect(delay: .seconds(4), failures: 3, reason: Self.lost), .waiting(failures: 3)),
                Step(.delayElapsed, .connect, .connecting(failures: 3)),
                Step(.connectionEnded(Self.lost), .reconnect(delay: .seconds(5), failures: 4, reason: Self.lost), .waiting(failures: 4)),
                Step(.delayElapsed, at: .seconds(100), .connect, .connecting(failures: 4)),
                Step(.judged(.accepted), at: .seconds(100), .none, .open(since: .seconds(100), failures: 4)),
                Step(
                    .connectionEnded(Self.lost), at: .seconds(110), .reconnect(delay: .seconds(1), failures: 0, reason: Self.lost),
                    .waiting(failures: 0)),
            ])
    }

    /// The storm of issue 36: a server that answers `retry: 0`, sends an event and closes, again and
    /// again. Each connection ends right after it opened, so each is a failure: the delay starts at
    /// the floor (never 0) and doubles up to the cap instead of staying at the server's 0 ms.
    @Test func connectionsThatEndRightAfterTheyOpenBackOffFromTheFloor() {
        var steps = [Step(.start, .connect, .connecting(failures: 0))]
        var now = Duration.zero
        let expected: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16), .seconds(30), .seconds(30)]
        for (index, delay) in expected.enumerated() {
            steps.append(Step(.judged(.accepted), at: now, .none, .open(since: now, failures: index)))
            now += .milliseconds(5)
            steps.append(
                Step(
                    .connectionEnded(nil), at: now, retry: .zero, .reconnect(delay: delay, failures: index + 1, reason: nil),
                    .waiting(failures: index + 1)))
            now += delay
            steps.append(Step(.delayElapsed, at: now, .connect, .connecting(failures: index + 1)))
        }
        // A connection that finally stays open 10 s resets the count: back to the floor.
        steps.append(Step(.judged(.accepted), at: now, .none, .open(since: now, failures: expected.count)))
        steps.append(
            Step(
                .connectionEnded(nil), at: now + .seconds(10), retry: .zero, .reconnect(delay: .milliseconds(500), failures: 0, reason: nil),
                .waiting(failures: 0)))
        run(Self.exact, steps)
    }

    @Test func aConnectionJustShortOfTheStableTimeIsStillAFailure() {
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), at: .seconds(5), .none, .open(since: .seconds(5), failures: 0)),
                Step(
                    .connectionEnded(Self.lost), at: Self.seconds(14.999), .reconnect(delay: .seconds(3), failures: 1, reason: Self.lost),
                    .waiting(failures: 1)),
                Step(.delayElapsed, at: .seconds(18), .connect, .connecting(failures: 1)),
                Step(.judged(.accepted), at: .seconds(18), .none, .open(since: .seconds(18), failures: 1)),
                Step(
                    .connectionEnded(Self.lost), at: .seconds(28), .reconnect(delay: .seconds(3), failures: 0, reason: Self.lost),
                    .waiting(failures: 0)),
            ])
    }

    @Test func aZeroStableTimeResetsAfterEveryAcceptedConnectionAboveTheFloor() {
        var policy = Self.exact
        policy.stableConnectionDuration = .zero
        run(
            policy,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), retry: .zero, .reconnect(delay: .milliseconds(500), failures: 0, reason: nil), .waiting(failures: 0)),
                Step(.delayElapsed, .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), retry: .zero, .reconnect(delay: .milliseconds(500), failures: 0, reason: nil), .waiting(failures: 0)),
            ])
    }

    @Test func quickEndsCountTowardsTheFailureLimit() {
        var limited = Self.exact
        limited.maximumConsecutiveFailures = 2
        run(
            limited,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), .reconnect(delay: .seconds(3), failures: 1, reason: nil), .waiting(failures: 1)),
                Step(.delayElapsed, .connect, .connecting(failures: 1)),
                Step(.judged(.accepted), .none, .open(since: .zero, failures: 1)),
                Step(.connectionEnded(Self.lost), .reconnect(delay: .seconds(6), failures: 2, reason: Self.lost), .waiting(failures: 2)),
                Step(.delayElapsed, .connect, .connecting(failures: 2)),
                Step(.judged(.accepted), .none, .open(since: .zero, failures: 2)),
                // The third in a row ends the stream, cleanly since the connection ended cleanly.
                Step(.connectionEnded(nil), .finish(nil), .finished(nil)),
            ])
    }

    @Test func whatEndsTheStreamForGood() {
        // A fatal verdict, an error no attempt would fix, cancellation while waiting.
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.judged(.fatal(Self.notFound)), .finish(Self.notFound), .finished(Self.notFound)),
            ])
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(Self.tooLarge), .finish(Self.tooLarge), .finished(Self.tooLarge)),
            ])
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), .reconnect(delay: .seconds(3), failures: 1, reason: nil), .waiting(failures: 1)),
                Step(.cancelled(Self.cancelled), .finish(Self.cancelled), .finished(Self.cancelled)),
                Step(.delayElapsed, .none, .finished(Self.cancelled)),
            ])
        // The stream's own failure (an event past the limit) ends it, open or not.
        run(
            Self.exact,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.failed(Self.tooLarge), .finish(Self.tooLarge), .finished(Self.tooLarge)),
            ])
        // Reconnection off: the first end is the last, clean or not.
        run(
            .never,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), .finish(nil), .finished(nil)),
            ])
        run(
            .never,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.connectionEnded(Self.lost), .finish(Self.lost), .finished(Self.lost)),
            ])
        // Too many failures in a row.
        var limited = EventStreamReconnection(jitter: 0)
        limited.maximumConsecutiveFailures = 1
        run(
            limited,
            [
                Step(.start, .connect, .connecting(failures: 0)),
                Step(.connectionEnded(Self.lost), .reconnect(delay: .seconds(3), failures: 1, reason: Self.lost), .waiting(failures: 1)),
                Step(.delayElapsed, .connect, .connecting(failures: 1)),
                Step(.connectionEnded(Self.lost), .finish(Self.lost), .finished(Self.lost)),
            ])
    }

    @Test func aNonIdempotentStreamIsResentOnlyWhenAllowed() {
        run(
            Self.exact, method: .post,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), .finish(nil), .finished(nil)),
            ])
        var resending = EventStreamReconnection(jitter: 0)
        resending.resendsNonIdempotentRequests = true
        run(
            resending, method: .post,
            [
                Step(.start, .connect, .connecting(failures: 0)), Step(.judged(.accepted), .none, .open(since: .zero, failures: 0)),
                Step(.connectionEnded(nil), at: .seconds(10), .reconnect(delay: .seconds(3), failures: 0, reason: nil), .waiting(failures: 0)),
            ])
    }

    @Test func theServersRetryIsCappedAndFloored() {
        let machine = Machine(policy: EventStreamReconnection(), method: .get)
        #expect(machine.delay(failures: 0, serverRetry: .seconds(3600)) == .seconds(30))
        #expect(machine.delay(failures: 40, serverRetry: nil) == .seconds(30))
        #expect(machine.delay(failures: 1, serverRetry: .milliseconds(800)) == .milliseconds(800))
        // Below the 500 ms floor, whether the server or the policy asks for it.
        #expect(machine.delay(failures: 0, serverRetry: .zero) == .milliseconds(500))
        #expect(machine.delay(failures: 1, serverRetry: .milliseconds(10)) == .milliseconds(500))
        #expect(machine.delay(failures: 2, serverRetry: .zero) == .seconds(1))
        var quick = EventStreamReconnection()
        quick.defaultDelay = .zero
        #expect(Machine(policy: quick, method: .get).delay(failures: 0, serverRetry: nil) == .milliseconds(500))
        // The floor is the policy's: lowered on purpose, it is what applies; it wins over the cap.
        quick.minimumDelay = .milliseconds(20)
        #expect(Machine(policy: quick, method: .get).delay(failures: 0, serverRetry: .zero) == .milliseconds(20))
        quick.minimumDelay = .seconds(60)
        #expect(Machine(policy: quick, method: .get).delay(failures: 5, serverRetry: .zero) == .seconds(60))
    }

    @Test func theDefaultsAreDocumented() {
        let policy = EventStreamReconnection.automatic
        #expect(policy.defaultDelay == .seconds(3))
        #expect(policy.minimumDelay == .milliseconds(500))
        #expect(policy.maximumDelay == .seconds(30))
        #expect(policy.stableConnectionDuration == .seconds(10))
        #expect(policy.maximumConsecutiveFailures == nil)
    }
}
