import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The `delivering` part of the request lifecycle and the stream's delivery machine, as
/// event → action tables without I/O (#26: an explicit cancel before the end is delivered wins).
@Suite struct DeliveryLifecycleTests {
    typealias Lifecycle = RequestLifecycleTests.Lifecycle

    /// The request's lifecycle up to evaluation of attempt 1.
    private static var toEvaluation: [(inout Lifecycle, RequestLifecycleTests.FakeTransfer) -> Lifecycle.Transition] {
        [
            { l, _ in l.resume() },
            { l, _ in l.prepared(attempt: 1, RequestLifecycleTests.request) },
            { l, t in l.transferStarted(attempt: 1, t) },
            { l, _ in l.transferEnded(attempt: 1, .answered) },
        ]
    }

    @Test func aStreamFinishesOnlyOnceItsConsumerTookTheEnd() {
        let steps = RequestLifecycleTests.run(
            Self.toEvaluation + [
                { l, _ in l.finish(attempt: 1, "ok", awaitingDelivery: true) },
                { l, _ in l.suspend() },
                { l, _ in l.resume() },
                { l, _ in l.delivered() },
                { l, _ in l.delivered() },
                { l, _ in l.cancel("cancelled") },
            ])
        #expect(
            Array(steps.suffix(6)) == [
                "awaitDelivery(ok) → resumed",
                "none → resumed",
                "none → resumed",
                "finish(ok) → finished",
                "none → finished",
                "none → finished",
            ])
    }

    @Test func aCancelWhileDeliveringWinsOverTheTransfersOutcome() {
        let steps = RequestLifecycleTests.run(
            Self.toEvaluation + [
                { l, _ in l.finish(attempt: 1, "ok", awaitingDelivery: true) },
                { l, _ in l.cancel("cancelled") },
                { l, _ in l.delivered() },
            ])
        #expect(
            Array(steps.suffix(3)) == [
                "awaitDelivery(ok) → resumed",
                "willCancel + cancel(no transfer, cancelled) → cancelled",
                "none → cancelled",
            ])
    }

    @Test func aCancelWhileTransferringCarriesTheTransferSoItsExchangeCanBeReported() {
        let steps = RequestLifecycleTests.run(
            Array(Self.toEvaluation.prefix(3)) + [
                { l, _ in l.cancel("cancelled") },
                { l, _ in l.transferEnded(attempt: 1, .failed("late")) },
            ])
        #expect(
            Array(steps.suffix(2)) == [
                "willCancel + cancel(transfer, cancelled) → cancelled",
                "none → cancelled",
            ])
    }

    // MARK: - StreamDelivery

    typealias Delivery = StreamDelivery<String, String, String>

    static func describe(_ actions: [Delivery.Action]) -> String {
        actions.map { action in
            switch action {
            case .hand(let chunk, let waiter): "hand(\(chunk) → \(waiter))"
            case .release(let chunks): "release(\(chunks.joined(separator: ",")))"
            case .end(let waiter, let completion): "end(\(waiter), \(completion))"
            case .reachedEnd: "reachedEnd"
            }
        }.joined(separator: " ")
    }

    static func run(_ events: [(inout Delivery) -> [Delivery.Action]]) -> [String] {
        var delivery = Delivery()
        return events.map { describe($0(&delivery)) }
    }

    @Test func chunksThenTheProvisionalEndThenTheFinalEnd() {
        let steps = Self.run([
            { $0.push("a") },
            { $0.next("w1") },
            { $0.next("w2") },
            { $0.push("b") },
            { $0.push("c") },
            { $0.transferEnded("ok") },
            { $0.next("w3") },
            { $0.next("w4") },
            { $0.finish("ok", cancelled: false) },
        ])
        #expect(
            steps == [
                "", "hand(a → w1)", "", "hand(b → w2)", "", "", "hand(c → w3)", "reachedEnd", "end(w4, ok)",
            ])
    }

    @Test func aWaitingConsumerReachesTheEndAsTheTransferEnds() {
        let steps = Self.run([
            { $0.next("w1") },
            { $0.transferEnded("ok") },
            { $0.transferEnded("again") },
            { $0.finish("ok", cancelled: false) },
            { $0.next("w2") },
        ])
        #expect(steps == ["", "reachedEnd", "", "end(w1, ok)", "end(w2, ok)"])
    }

    @Test func aCancelRequestStopsChunksAtOnceAndTheConsumerWaitsForTheCancellation() {
        let steps = Self.run([
            { $0.push("a") },
            { $0.push("b") },
            { $0.transferEnded("ok") },
            { $0.requestCancel() },
            { $0.next("w1") },
            { $0.push("late") },
            { $0.finish("cancelled", cancelled: true) },
            { $0.next("w2") },
        ])
        #expect(steps == ["", "", "", "release(a,b)", "", "release(late)", "end(w1, cancelled)", "end(w2, cancelled)"])
    }

    @Test func aFinalCancellationDropsWhatNobodyTook() {
        let steps = Self.run([
            { $0.push("a") },
            { $0.finish("cancelled", cancelled: true) },
            { $0.next("w1") },
            { $0.requestCancel() },
        ])
        #expect(steps == ["", "release(a)", "end(w1, cancelled)", ""])
    }

    @Test func aNewResponseDropsTheChunksOfThePreviousOne() {
        var delivery = Delivery()
        _ = delivery.push("old")
        #expect(Self.describe(delivery.reset()) == "release(old)")
        let first = delivery.attachConsumer()
        let second = delivery.attachConsumer()
        #expect(first && !second)
        #expect(delivery.delivered == 0)
    }
}
