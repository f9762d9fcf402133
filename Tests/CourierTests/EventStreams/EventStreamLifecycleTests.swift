import Testing
import Foundation
@testable import Courier

/// The event-stream lifecycle as event → action tables, without I/O.
struct EventStreamLifecycleTests {
    typealias Machine = EventStreamLifecycle
    static let lost = CourierError(.connectionLost, "lost")
    static let unavailable = CourierError(.validationFailed, "503", responseCode: 503)
    static let notFound = CourierError(.validationFailed, "404", responseCode: 404)
    static let tooLarge = CourierError(.responseTooLarge, "big")
    static let cancelled = CourierError(.cancelled, "cancelled")
    static let exact = EventStreamReconnection(jitter: 0)

    /// Runs `steps` from a fresh machine; each step's action and state must be as given.
    func run(
        _ policy: EventStreamReconnection, method: HTTPMethod = .get,
        _ steps: [(Machine.Event, Duration?, Machine.Action, Machine.State)], sourceLocation: SourceLocation = #_sourceLocation
    ) {
        var machine = Machine(policy: policy, method: method)
        for (index, (event, retry, action, state)) in steps.enumerated() {
            let got = machine.handle(event, serverRetry: retry)
            #expect(got == action, "step \(index): \(event)", sourceLocation: sourceLocation)
            #expect(machine.state == state, "step \(index): \(event)", sourceLocation: sourceLocation)
        }
    }

    @Test func aCleanEndReconnectsAfterTheDefaultDelayThenTheServersRetry() {
        run(
            Self.exact,
            [
                (.start, nil, .connect, .connecting(failures: 0)),
                (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(nil), nil, .reconnect(delay: .seconds(3), failures: 0, reason: nil), .waiting(failures: 0)),
                (.delayElapsed, nil, .connect, .connecting(failures: 0)),
                (.judged(.accepted), nil, .none, .open),
                (
                    .connectionEnded(Self.lost), .milliseconds(250), .reconnect(delay: .milliseconds(250), failures: 0, reason: Self.lost),
                    .waiting(failures: 0)
                ),
                (.delayElapsed, nil, .connect, .connecting(failures: 0)),
                (.judged(.stop), nil, .finish(nil), .finished(nil)),
                (.delayElapsed, nil, .none, .finished(nil)),
            ])
    }

    @Test func failuresBeforeTheStreamOpensBackOffAndAnOpenStreamResetsTheCount() {
        var policy = EventStreamReconnection(jitter: 0)
        policy.defaultDelay = .seconds(1)
        policy.maximumDelay = .seconds(5)
        run(
            policy,
            [
                (.start, nil, .connect, .connecting(failures: 0)),
                (.connectionEnded(Self.lost), nil, .reconnect(delay: .seconds(1), failures: 1, reason: Self.lost), .waiting(failures: 1)),
                (.delayElapsed, nil, .connect, .connecting(failures: 1)),
                (
                    .judged(.retryable(Self.unavailable)), nil, .reconnect(delay: .seconds(2), failures: 2, reason: Self.unavailable),
                    .waiting(failures: 2)
                ),
                (.delayElapsed, nil, .connect, .connecting(failures: 2)),
                (.connectionEnded(Self.lost), nil, .reconnect(delay: .seconds(4), failures: 3, reason: Self.lost), .waiting(failures: 3)),
                (.delayElapsed, nil, .connect, .connecting(failures: 3)),
                (.connectionEnded(Self.lost), nil, .reconnect(delay: .seconds(5), failures: 4, reason: Self.lost), .waiting(failures: 4)),
                (.delayElapsed, nil, .connect, .connecting(failures: 4)),
                (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(Self.lost), nil, .reconnect(delay: .seconds(1), failures: 0, reason: Self.lost), .waiting(failures: 0)),
            ])
    }

    @Test func whatEndsTheStreamForGood() {
        // A fatal verdict, an error no attempt would fix, cancellation while waiting.
        run(
            Self.exact,
            [
                (.start, nil, .connect, .connecting(failures: 0)),
                (.judged(.fatal(Self.notFound)), nil, .finish(Self.notFound), .finished(Self.notFound)),
            ])
        run(
            Self.exact,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(Self.tooLarge), nil, .finish(Self.tooLarge), .finished(Self.tooLarge)),
            ])
        run(
            Self.exact,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(nil), nil, .reconnect(delay: .seconds(3), failures: 0, reason: nil), .waiting(failures: 0)),
                (.cancelled(Self.cancelled), nil, .finish(Self.cancelled), .finished(Self.cancelled)),
                (.delayElapsed, nil, .none, .finished(Self.cancelled)),
            ])
        // The stream's own failure (an event past the limit) ends it, open or not.
        run(
            Self.exact,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.failed(Self.tooLarge), nil, .finish(Self.tooLarge), .finished(Self.tooLarge)),
            ])
        // Reconnection off: the first end is the last, clean or not.
        run(
            .never,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(nil), nil, .finish(nil), .finished(nil)),
            ])
        run(
            .never,
            [
                (.start, nil, .connect, .connecting(failures: 0)),
                (.connectionEnded(Self.lost), nil, .finish(Self.lost), .finished(Self.lost)),
            ])
        // Too many failures in a row.
        var limited = EventStreamReconnection(jitter: 0)
        limited.maximumConsecutiveFailures = 1
        run(
            limited,
            [
                (.start, nil, .connect, .connecting(failures: 0)),
                (.connectionEnded(Self.lost), nil, .reconnect(delay: .seconds(3), failures: 1, reason: Self.lost), .waiting(failures: 1)),
                (.delayElapsed, nil, .connect, .connecting(failures: 1)),
                (.connectionEnded(Self.lost), nil, .finish(Self.lost), .finished(Self.lost)),
            ])
    }

    @Test func aNonIdempotentStreamIsResentOnlyWhenAllowed() {
        run(
            Self.exact, method: .post,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(nil), nil, .finish(nil), .finished(nil)),
            ])
        var resending = EventStreamReconnection(jitter: 0)
        resending.resendsNonIdempotentRequests = true
        run(
            resending, method: .post,
            [
                (.start, nil, .connect, .connecting(failures: 0)), (.judged(.accepted), nil, .none, .open),
                (.connectionEnded(nil), nil, .reconnect(delay: .seconds(3), failures: 0, reason: nil), .waiting(failures: 0)),
            ])
    }

    @Test func theServersRetryIsCappedToo() {
        let machine = Machine(policy: EventStreamReconnection(), method: .get)
        #expect(machine.delay(failures: 0, serverRetry: .seconds(3600)) == .seconds(30))
        #expect(machine.delay(failures: 40, serverRetry: nil) == .seconds(30))
        #expect(machine.delay(failures: 1, serverRetry: .milliseconds(10)) == .milliseconds(10))
    }
}
