import CourierSupport
import Testing
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

extension Pipeline {
    /// `RetryPolicy` driving real requests on every transport, with delays recorded by a frozen clock.
    @Suite("Pipeline: RetryPolicy") struct RetryBehaviourTests {
        @Test(arguments: TransportUnderTest.available)
        func retriesUntilSuccessWithExponentialBackoff(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(500), .status(500), .ok("finally")])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: RetryPolicy(retryLimit: 2, jitter: false))
                let request = session.request("flaky").validate()
                let text = try await request.serializingString().value
                #expect(text == "finally")
                #expect(await request.retryCount == 2)
                #expect(server.requestCount == 3)
                #expect(clock.recorded == [.milliseconds(500), .seconds(1)])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func givesUpAtTheLimitWithTheLastError(transport: TransportUnderTest) async throws {
            // "not reached" stays queued: the retry limit stops the request first.
            try await withServer(unconsumedResponses: 1) { server async throws in
                server.enqueue([.status(500), .status(500), .ok("not reached")])
                let clock = FrozenClock()
                let session = makeSession(
                    transport, server: server, clock: clock,
                    interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffBase: 3, exponentialBackoffScale: 0.2, jitter: false))
                let request = session.request("flaky").validate()
                let response = await request.serializingString().response
                #expect(response.error?.kind == .validationFailed)
                #expect(response.error?.responseCode == 500)
                #expect(response.response?.statusCode == 500)
                #expect(await request.retryCount == 1)
                #expect(server.requestCount == 2)
                #expect(clock.recorded == [.milliseconds(200)])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func jitteredDelaysStayWithinTheBackoff(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(502), .status(504), .status(504), .ok("ok")])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: RetryPolicy(retryLimit: 3))
                _ = try await session.request("jitter").validate().serializingData().value
                let bounds: [Duration] = [.milliseconds(500), .seconds(1), .seconds(2)]
                #expect(clock.recorded.count == 3)
                for (delay, bound) in zip(clock.recorded, bounds) {
                    #expect(delay >= .zero && delay <= bound)
                }
            }
        }

        @Test(arguments: TransportUnderTest.available, [429, 503])
        func retryAfterSecondsIsHonouredAndCapped(transport: TransportUnderTest, status: Int) async throws {
            try await withServer { server async throws in
                server.enqueue([
                    MockResponse.status(status).header("Retry-After", "7"),
                    MockResponse.status(status).header("Retry-After", "86400"),
                    .ok("ok"),
                ])
                let clock = FrozenClock()
                let session = makeSession(
                    transport, server: server, clock: clock,
                    interceptor: RetryPolicy(jitter: true, maximumRetryAfter: .seconds(30)))
                let request = session.request("busy").validate()
                _ = try await request.serializingData().value
                #expect(clock.recorded == [.seconds(7), .seconds(30)])
                #expect(await request.retryCount == 2)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func retryAfterHTTPDateIsMeasuredFromTheResponseDate(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                // A server clock an hour behind the client's: the delay still comes out right.
                let serverNow = Date().addingTimeInterval(-3600).rounded()
                server.enqueue([
                    MockResponse.status(503)
                        .header("Date", HTTPDate.format(serverNow))
                        .header("Retry-After", HTTPDate.format(serverNow.addingTimeInterval(12))),
                    .ok("ok"),
                ])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: RetryPolicy())
                _ = try await session.request("dated").validate().serializingData().value
                #expect(clock.recorded == [.seconds(12)])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func retryAfterHTTPDateWithoutADateHeaderUsesNow(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let now = Date(timeIntervalSince1970: 1_700_000_000)
                server.enqueue([MockResponse.status(429).header("Retry-After", "Tuesday, 14-Nov-23 22:14:05 GMT"), .ok("ok")])
                var policy = RetryPolicy()
                policy.now = { now }  // 22:13:20
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: policy)
                _ = try await session.request("obsolete-date").validate().serializingData().value
                #expect(clock.recorded == [.seconds(45)])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func postIsNotRetriedByDefault(transport: TransportUnderTest) async throws {
            // "not reached" stays queued: a POST is not retried.
            try await withServer(unconsumedResponses: 1) { server async throws in
                server.enqueue([.status(503), .ok("not reached")])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: RetryPolicy())
                let request = session.request("orders", method: .post, parameters: ["item": "42"], encoder: .json).validate()
                let response = await request.serializingData().response
                #expect(response.error?.responseCode == 503)
                #expect(await request.retryCount == 0)
                #expect(server.requestCount == 1)
                #expect(clock.recorded.isEmpty)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func postIsRetriedWhenAllowedWithTheSameBody(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([.status(503), .ok("created")])
                let policy = RetryPolicy(jitter: false, retryableHTTPMethods: RetryPolicy.defaultRetryableHTTPMethods.union([.post]))
                let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: policy)
                let request = session.request("orders", method: .post, parameters: ["item": "42"], encoder: .json).validate()
                #expect(try await request.serializingString().value == "created")
                let first = try await server.takeRequest()
                let second = try await server.takeRequest()
                #expect(first.method == "POST" && second.method == "POST")
                #expect(first.bodyText == #"{"item":"42"}"#)
                #expect(second.bodyText == first.bodyText)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func refusedConnectionsAreRetried(transport: TransportUnderTest) async throws {
            let port = try closedPort()
            let clock = FrozenClock()
            var configuration = SessionConfiguration.testing
            configuration.transport = transport.choice
            configuration.retryClock = clock
            let session = Session(configuration: configuration, interceptor: RetryPolicy(jitter: false), callbackQueue: testCallbackQueue)
            let request = session.request("http://127.0.0.1:\(port)/refused")
            let response = await request.serializingData().response
            #expect(response.error?.kind == .cannotConnect)
            #expect(await request.retryCount == 2)
            #expect(clock.recorded == [.milliseconds(500), .seconds(1)])
        }

        @Test(arguments: TransportUnderTest.available)
        func aResetConnectionIsRetried(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([MockResponse.ok("lost").effect(.reset, at: .afterRequest), .ok("recovered")])
                let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: RetryPolicy())
                let request = session.request("reset")
                #expect(try await request.serializingString().value == "recovered")
                #expect(await request.retryCount == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aTruncatedBodyIsRetried(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue([MockResponse.ok("0123456789").truncated(afterBytes: 4), .ok("0123456789")])
                let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: RetryPolicy())
                let request = session.request("truncated")
                #expect(try await request.serializingString().value == "0123456789")
                #expect(await request.retryCount == 1)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aCancelledRequestIsNeverRetried(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                server.enqueue(MockResponse.status(503).waiting(for: gate))
                let log = Collected<String>()
                let interceptor = Interceptor(retriers: [LabelledRetrier(label: "asked", log: log), RetryPolicy()])
                let clock = FrozenClock()
                let session = makeSession(transport, server: server, clock: clock, interceptor: interceptor)
                let request = session.request("held").validate()
                let task = request.serializingData()
                task.resume()
                #expect(await gate.waitUntilWaiting(count: 1))
                request.cancel()
                let response = await task.response
                gate.open()
                #expect(response.error?.kind == .cancelled)
                #expect(log.all.isEmpty)
                #expect(await request.retryCount == 0)
                #expect(server.requestCount == 1)
                #expect(clock.recorded.isEmpty)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aCancelDuringTheDelayEndsTheRequest(transport: TransportUnderTest) async throws {
            // "not reached" stays queued: the cancel ends the retry delay before the second attempt.
            try await withServer(unconsumedResponses: 1) { server async throws in
                server.enqueue([.status(503), .ok("not reached")])
                let decided = CountdownLatch(target: 1)
                let slow = ClosureRetrier { _, _, _ in
                    decided.arrive()
                    return .retryWithDelay(.seconds(3600))
                }
                // A real clock: the hour-long delay is interrupted by the cancel, not waited out.
                let session = makeSession(transport, server: server, interceptor: Interceptor(retriers: [slow]))
                let request = session.request("later").validate()
                let task = request.serializingData()
                task.resume()
                #expect(await decided.wait())
                request.cancel()
                let response = await task.response
                #expect(response.error?.kind == .cancelled)
                #expect(server.requestCount == 1)
            }
        }
    }
}

extension Date {
    /// The date with its fractional seconds dropped (HTTP-dates have whole seconds).
    fileprivate func rounded() -> Date {
        Date(timeIntervalSince1970: timeIntervalSince1970.rounded(.down))
    }
}
