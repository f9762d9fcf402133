import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// `onHTTPResponse`: a hook on the final response head that runs before the body is taken and
/// can let it through or cancel the request (#26).
@Suite struct OnHTTPResponseTests {
    @Test(arguments: TransportUnderTest.available)
    func theHandlerSeesTheHeadBeforeAnyBodyByteAndTheBodyFollowsWhole(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/r", Resource(pattern: 1_000_000, seed: 9).pausing(afterBytes: 0, until: gate))
            let session = makeSession(transport, server: server)
            let seen = Locked<(Int, String?, Int64)?>(nil)
            let request = session.request("r")
            let data =
                try await request
                .onHTTPResponse { response in
                    // The server holds the whole body until the gate opens: none of it can be in yet.
                    seen.withLock { $0 = (response.statusCode, response.value(forHTTPHeaderField: "ETag"), response.expectedContentLength) }
                    gate.open()
                }
                .serializingData().value
            #expect(data == PatternBody.data(offset: 0, count: 1_000_000, seed: 9))
            let (status, _, length) = try #require(seen.withLock { $0 })
            #expect(status == 200)
            #expect(length == 1_000_000)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancelStopsTheRequestWithACancelledOutcomeAndTheResponseHead(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.text("not found", status: 404))
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            let response = await session.request("missing")
                .decideHTTPResponse { $0.statusCode == 404 ? .cancel : .allow }
                .serializingString().response
            #expect(response.error?.kind == .cancelled)
            #expect(response.response?.statusCode == 404)
            #expect(recorder.recorded.contains("exchangeEnded(cancelled)"))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anAsyncHandlerHoldsTheBodyUntilItDecides(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/big", Resource(pattern: 3_000_000, seed: 4))
            let session = makeSession(transport, server: server)
            let calls = Locked(0)
            let data = try await session.request("big")
                .decideHTTPResponse { _ in
                    for _ in 0..<100 { await Task.yield() }
                    calls.withLock { $0 += 1 }
                    return .allow
                }
                .onHTTPResponse { _, decide in
                    calls.withLock { $0 += 10 }
                    decide(.allow)
                }
                .serializingData().value
            #expect(data == PatternBody.data(offset: 0, count: 3_000_000, seed: 4))
            #expect(calls.withLock { $0 } == 11)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theFirstCancelWinsAndLaterHandlersAreNotAsked(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("x"))
            let session = makeSession(transport, server: server)
            let later = Locked(false)
            let response = await session.download("file")
                .decideHTTPResponse { _ in .cancel }
                .onHTTPResponse { _ in later.withLock { $0 = true } }
                .serializingDownloadedFileURL().response
            #expect(response.error?.kind == .cancelled)
            #expect(response.fileURL == nil)
            #expect(!later.withLock { $0 })
            #expect(session.temporaryFiles == [])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func redirectsAreFollowedWithoutAskingAndEveryRetryAsksAgain(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.redirect(to: "/there"), .status(503), .ok("done")])
            let statuses = Collected<Int>()
            let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: RetryPolicy(jitter: false))
            let text = try await session.request("here")
                .onHTTPResponse { statuses.append($0.statusCode) }
                .validate()
                .serializingString().value
            #expect(text == "done")
            #expect(statuses.all == [503, 200])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStreamsChunksWaitForTheDecision(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/s", Resource(pattern: 2_000_000, seed: 6))
            let session = makeSession(transport, server: server)
            var received = Data()
            let stream = session.streamRequest("s")
                .decideHTTPResponse { _ in
                    await Task.yield()
                    return .allow
                }
            for try await chunk in stream.streamingData() { received.append(chunk) }
            #expect(received == PatternBody.data(offset: 0, count: 2_000_000, seed: 6))
        }
    }
}
