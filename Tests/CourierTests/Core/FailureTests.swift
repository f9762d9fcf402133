import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Network failures arrive as readable `CourierError`s, never as crashes or silent successes.
@Suite struct FailureTests {
    @Test(arguments: TransportUnderTest.available)
    func refusedConnection(transport: TransportUnderTest) async throws {
        let port = try closedPort()
        let session = makeSession(transport)
        let error = await session.request("http://127.0.0.1:\(port)/x").serializingData().response.error
        #expect(error?.kind == .cannotConnect)
        #expect(error?.url?.port == port)
    }

    @Test(arguments: TransportUnderTest.available)
    func hundredMillisecondTimeout(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            // A route, not a queued response: on a loaded machine the 100 ms can run out before the
            // request reaches the server, which then has nothing to answer and nothing left over.
            server.route("/slow") { _ in MockResponse.ok("too late").waiting(for: gate) }
            // The system's clock: only the timeout can end the request, so firing late costs time,
            // never the outcome (and this is the real-time path of both transports' timers).
            let session = makeSession(transport, server: server) { $0.transportClock = .system }
            // The server holds the response until the gate opens, which happens only after the
            // request has ended: only the 100 ms timeout can have ended it.
            let error = await session.request("slow", timeout: 0.1).serializingData().response.error
            gate.open()
            #expect(error?.kind == .timedOut)
            #expect(error?.message.contains("0.1") == true)
        }
    }

    /// `requestTimeout` is an idle timeout: a body that takes longer than it in all, but is never
    /// silent that long, arrives whole; a response that stalls times out. On a manual clock (see
    /// ``ManualTransportClock``): 3 s pass in all while the 2 s timeout runs, 1.5 s at a time,
    /// each time once bytes have arrived; then the stalled response gets the time it takes.
    @Test(arguments: TransportUnderTest.available)
    func sessionRequestTimeoutIsAnIdleTimeout(transport: TransportUnderTest) async throws {
        let piece = Data(repeating: 0x61, count: 20_000)
        let (first, second) = (ScriptedReplyServer.Pause(), ScriptedReplyServer.Pause())
        let server = try ScriptedReplyServer([
            .readHead, .write(Data("HTTP/1.1 200 OK\r\nContent-Length: 60000\r\n\r\n".utf8)),
            .write(piece), .pause(first), .write(piece), .pause(second), .write(piece),
        ])
        defer { server.stop() }
        let clock = ManualTransportClock()
        let session = makeSession(transport) {
            $0.requestTimeout = 2
            $0.transportClock = .manual(clock)
        }
        let request = session.request(server.url)
        let received = ReceivedBytes(request)
        request.resume()
        let dripped = Task { await request.serializingData().response }
        #expect(await received.wait(for: 20_000))
        await clock.advance(by: .milliseconds(1500))
        first.release()
        #expect(await received.wait(for: 40_000))
        await clock.advance(by: .milliseconds(1500))
        second.release()
        let response = await dripped.value
        #expect(response.value?.count == 60_000, "\(response.error.map { "\($0)" } ?? "")")

        try await withServer { server async throws in
            let gate = Gate()
            // A route, not a queued response: the manual clock can pass 2 s before a loaded machine
            // got the request to the server, which then has nothing to answer and nothing left over.
            server.route("/stall") { _ in MockResponse.ok("stalls").waiting(for: gate) }
            let session = makeSession(transport, server: server) {
                $0.requestTimeout = 2
                $0.transportClock = .manual(clock)
            }
            let stalled = await clock.advancing(by: .seconds(2)) { await session.request("stall").serializingData().response }
            gate.open()
            #expect(stalled.error?.kind == .timedOut)
            #expect(stalled.error?.message.contains("2.0 s") == true, "names the timeout: \(stalled.error.map { "\($0)" } ?? "")")
        }
    }

    /// `resourceTimeout` limits the whole request, however busy it is: the time passes in 0.1 s
    /// moves of a manual clock while the body flows (then pauses, so that only the deadline can
    /// end the request), and the request ends at the 0.3 s deadline with the idle timeout far off.
    @Test(arguments: TransportUnderTest.available)
    func resourceTimeoutLimitsTheWholeRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(
                MockResponse(status: 200).body(.pattern(count: 2_000_000, seed: 1)).throttle(bytes: 20_000, every: .milliseconds(20))
                    .pausing(afterBytes: 1_000_000, until: gate))
            let clock = ManualTransportClock()
            let session = makeSession(transport, server: server) {
                $0.resourceTimeout = 0.3
                $0.transportClock = .manual(clock)
            }
            let request = session.request("drip")
            let received = ReceivedBytes(request)
            let response = Task { await request.serializingData().response }
            #expect(await received.wait(for: 1))
            let error = await clock.advancing(by: .milliseconds(100)) { await response.value.error }
            gate.open()
            #expect(error?.kind == .timedOut)
            #expect(error?.message.contains("resource timeout") == true, "\(error.map { "\($0)" } ?? "")")
            #expect(received.value < 2_000_000)
        }
    }

    /// The same limit holds for a request started by adding a completion handler (Alamofire's
    /// style), which starts once the chain expression ends instead of through `resume()`.
    @Test(arguments: TransportUnderTest.available)
    func resourceTimeoutLimitsARequestStartedByItsCompletionHandler(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 2)).pausing(afterBytes: 1_000, until: gate))
            let clock = ManualTransportClock()
            let session = makeSession(transport, server: server) {
                $0.resourceTimeout = 0.3
                $0.transportClock = .manual(clock)
            }
            let request = session.request("stalled")
            let received = ReceivedBytes(request)
            let (responses, delivered) = AsyncStream.makeStream(of: CourierError?.self)
            request.responseData { delivered.yield($0.error) }
            #expect(await received.wait(for: 1))
            let error = await clock.advancing(by: .milliseconds(100)) {
                var iterator = responses.makeAsyncIterator()
                return await iterator.next() ?? nil
            }
            gate.open()
            #expect(error?.kind == .timedOut)
            #expect(error?.message.contains("resource timeout") == true, "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func truncatedBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 3)).truncated(afterBytes: 40_000))
            let session = makeSession(transport, server: server)
            let response = await session.request("cut").serializingData().response
            #expect(response.error?.kind == .connectionLost)
            #expect(response.value == nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func truncatedChunkedBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(
                MockResponse(status: 200).body(.pattern(count: 100_000, seed: 3)).chunked(chunkSize: 4096)
                    .effect(.close, at: .responseBody(afterBytes: 50_000)))
            let session = makeSession(transport, server: server)
            let error = await session.request("cut").serializingData().response.error
            #expect(error?.kind == .connectionLost)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func resetMidBodyIsALostConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 1_000_000, seed: 3)).effect(.reset, at: .responseBody(afterBytes: 300_000)))
            let session = makeSession(transport, server: server)
            let error = await session.request("reset").serializingData().response.error
            #expect(error?.kind == .connectionLost)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func closeBeforeAnyResponseIsAnError(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("x").effect(.close, at: .afterRequest))
            let session = makeSession(transport, server: server)
            let error = await session.request("empty").serializingData().response.error
            #expect(error != nil)
            #expect(error?.isTransportError == true)
        }
    }

    @Test func errorsDescribeThemselves() {
        let error = CourierError(.timedOut, "No data for 0.1 s.", responseCode: nil, url: URL(string: "http://a.test/x"))
        #expect(error.description == "timedOut: No data for 0.1 s. (http://a.test/x)")
        #expect(error.kind.description == "timedOut")
        #expect(CourierError(wrapping: URLError(.timedOut)).kind == .timedOut)
        #expect(CourierError(wrapping: URLError(.cannotConnectToHost)).kind == .cannotConnect)
        #expect(CourierError(wrapping: URLError(.unknown)).kind == .connectionLost)
        #expect(CourierError(wrapping: CancellationError()).isCancelled)
    }
}
