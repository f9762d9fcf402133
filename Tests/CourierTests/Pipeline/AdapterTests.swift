import Testing
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

extension Pipeline {
    /// Adapters and retriers as the engine runs them: order, re-runs, and errors.
    @Suite("Pipeline: Adapters") struct AdapterTests {
        @Test(arguments: TransportUnderTest.available)
        func sessionAdaptersRunBeforeRequestAdaptersInOrder(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue(.ok("ok"))
                let sessionInterceptor = Interceptor(adapters: [ChainAdapter(label: "s1"), ChainAdapter(label: "s2")])
                let requestInterceptor = Interceptor(adapters: [ChainAdapter(label: "r1"), ChainAdapter(label: "r2")])
                let session = makeSession(transport, server: server, interceptor: sessionInterceptor)
                _ = try await session.request("chain", interceptor: requestInterceptor).serializingData().value
                let recorded = try await server.takeRequest()
                #expect(recorded.headers["X-Chain"] == "s1,s2,r1,r2")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func adaptersRunAgainOnEveryRetryFromTheBuiltRequest(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(500), .status(503), .ok("third time")])
                let attempts = Atomic(0)
                let counting = ClosureAdapter { request, _ in
                    var adapted = request
                    adapted.setValue(String(attempts.add(1, ordering: .relaxed).newValue), forHTTPHeaderField: "X-Attempt")
                    return adapted
                }
                let interceptor = Interceptor(
                    adapters: [ChainAdapter(label: "a"), counting],
                    retriers: [RetryPolicy(jitter: false)])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: interceptor)
                let request = session.request("again")
                let text = try await request.validate().serializingString().value
                #expect(text == "third time")
                #expect(await request.retryCount == 2)
                var seen: [(String?, String?)] = []
                for _ in 0..<3 {
                    let recorded = try await server.takeRequest()
                    seen.append((recorded.headers["X-Attempt"], recorded.headers["X-Chain"]))
                }
                // Each attempt starts from the built request, so the chain never accumulates.
                #expect(seen.map(\.0) == ["1", "2", "3"])
                #expect(seen.map(\.1) == ["a", "a", "a"])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func adapterErrorArrivesThroughTheResponseAndRetriersAreAsked(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let log = Collected<String>()
                let failing = ClosureAdapter { _, _ in throw TestFailure(reason: "no signature key") }
                let interceptor = Interceptor(adapters: [failing], retriers: [LabelledRetrier(label: "retrier", log: log)])
                let session = makeSession(transport, server: server, interceptor: interceptor)
                let response = await session.request("never").serializingData().response
                let error = try #require(response.error)
                #expect(error.kind == .adaptationFailed)
                #expect(error.underlyingError as? TestFailure == TestFailure(reason: "no signature key"))
                #expect(log.all == ["retrier:adaptationFailed"])
                #expect(server.requestCount == 0)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func adapterErrorDuringARetryStillCompletesEveryHandler(transport: TransportUnderTest) async throws {
            // "unreachable" stays queued: the adapter fails the retry before it is sent.
            try await withServer(unconsumedResponses: 1) { server async throws in
                server.enqueue([.status(503), .ok("unreachable")])
                let calls = Atomic(0)
                let failsSecondTime = ClosureAdapter { request, _ in
                    if calls.add(1, ordering: .relaxed).newValue == 2 { throw TestFailure(reason: "second") }
                    return request
                }
                let session = makeSession(
                    transport, server: server, clock: FrozenClock(),
                    interceptor: Interceptor(adapters: [failsSecondTime], retriers: [RetryPolicy(jitter: false)]))
                let request = session.request("flaky").validate()
                async let data = request.serializingData().response
                async let text = request.serializingString().response
                let (first, second) = await (data, text)
                #expect(first.error?.kind == .adaptationFailed)
                #expect(second.error?.kind == .adaptationFailed)
                #expect(await request.retryCount == 1)
                #expect(server.requestCount == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func sessionRetriersAreAskedFirstAndTheFirstDecisionWins(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(500), .ok("ok")])
                let log = Collected<String>()
                let sessionInterceptor = Interceptor(retriers: [
                    LabelledRetrier(label: "s1", log: log),
                    LabelledRetrier(label: "s2", log: log),
                ])
                let requestInterceptor = Interceptor(retriers: [
                    LabelledRetrier(label: "r1", log: log, decision: .retry),
                    LabelledRetrier(label: "r2", log: log, decision: .retry),
                ])
                let session = makeSession(transport, server: server, interceptor: sessionInterceptor)
                let request = session.request("order", interceptor: requestInterceptor)
                _ = try await request.validate().serializingData().value
                #expect(log.all == ["s1:validationFailed", "s2:validationFailed", "r1:validationFailed"])
                #expect(await request.retryCount == 1)
            }
        }

        @Test func compositeInterceptorStopsAtTheFirstDecisiveRetrier() async throws {
            let log = Collected<String>()
            let replacement = TestFailure(reason: "replaced")
            let interceptor = Interceptor(retriers: [
                LabelledRetrier(label: "a", log: log),
                LabelledRetrier(label: "b", log: log, decision: .doNotRetryWithError(replacement)),
                LabelledRetrier(label: "c", log: log, decision: .retry),
            ])
            let session = Session(configuration: .default)
            let request = session.request("http://127.0.0.1:9/unused")
            let decision = await interceptor.retry(request, for: session, dueTo: CourierError(.timedOut, "slow"))
            guard case .doNotRetryWithError(let error) = decision else {
                Issue.record("expected doNotRetryWithError, got \(decision)")
                return
            }
            #expect(error as? TestFailure == replacement)
            #expect(log.all == ["a:timedOut", "b:timedOut"])
        }
    }
}
