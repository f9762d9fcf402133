@_spi(Transport) @testable import Courier
import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// Pausing, backpressure and timeouts of CurlTransport.
@Suite("Curl transport flow control and timeouts")
struct CurlTransportFlowTests {
    @Test("suspend stops delivery on the same connection; resume finishes byte-exact")
    func suspendResume() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        // The idle timeout runs on a manual clock: only the time the test moves on counts.
        let clock = ManualTransportClock()
        let transport = try CurlTestSupport.transport(clock: .manual(clock))
        defer { transport.shutdown() }
        let size: Int64 = 3_000_000
        server.enqueue(MockResponse.status(200).body(.pattern(count: size, seed: 21)).throttle(bytes: 32 * 1024, every: .milliseconds(5)))
        // A 100 ms idle timeout, and a second passing while suspended, prove that time spent
        // suspended does not count as silence. The sink suspends itself at 300 kB, so the moment
        // does not depend on how fast this task is scheduled.
        let (sink, transfer, suspendedAt) = CurlTestSupport.startSuspending(
            TransportRequest(url: server.url("/slow"), idleTimeout: .milliseconds(100)), on: transport, after: 300_000)

        try await sink.wait { $0.body.count >= 300_000 || $0.isCompleted }
        let atSuspend = try #require(suspendedAt.withLock { $0 })
        // The observation window: the throttled server would send ~2 MB in this time.
        try await Task.sleep(for: .milliseconds(400))
        await clock.advance(by: .seconds(1))
        let afterWindow = sink.progress
        #expect(afterWindow.received == atSuspend)
        #expect(!afterWindow.completed)
        transfer.suspend()
        transfer.resume()
        transfer.resume()

        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.body == PatternBody.data(offset: 0, count: Int(size), seed: 21))
        #expect(server.connectionCount == 1)
        #expect(server.requestCount == 1)
    }

    @Test("suspend before the transfer starts holds it until resume")
    func suspendEarly() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("later"))
        let (sink, transfer) = CurlTestSupport.start(TransportRequest(url: server.url("/early")), on: transport)
        transfer.suspend()
        transfer.resume()
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(String(decoding: result.body, as: UTF8.self) == "later")
    }

    @Test("a sink that stops acknowledging stops receiving at the window; acknowledging continues")
    func backpressure() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let clock = ManualTransportClock()
        let transport = try CurlTestSupport.transport(clock: .manual(clock))
        defer { transport.shutdown() }
        let size: Int64 = 32 << 20
        let window = 256 * 1024
        server.enqueue(MockResponse.status(200).body(.pattern(count: size, seed: 4)))
        let sink = CurlRecordingSink(autoAcknowledge: false)
        let transfer = transport.startTransfer(
            TransportRequest(url: server.url("/big"), idleTimeout: .milliseconds(100), flowControlWindow: window), sink: sink)

        // Fills the window and stops there; waiting for acknowledgements is not silence (three
        // times the idle timeout pass on the manual clock meanwhile).
        try await sink.wait { $0.body.count > window - 64 * 1024 || $0.isCompleted }
        try await Task.sleep(for: .milliseconds(300))  // observation window
        await clock.advance(by: .milliseconds(300))
        let stalled = sink.snapshot
        #expect(stalled.body.count <= window)
        #expect(!stalled.isCompleted)
        #expect(server.bytesSent(path: "/big") < size)

        // Acknowledging half does not reopen it yet; the rest does.
        transfer.acknowledge(stalled.body.count / 2 - 1)
        transfer.acknowledge(stalled.body.count - (stalled.body.count / 2 - 1))
        try await sink.wait { $0.body.count > stalled.body.count + window / 2 || $0.isCompleted }
        #expect(sink.progress.received <= stalled.body.count + window)

        // From here on every chunk is acknowledged as it arrives.
        let acknowledger = Task {
            var acknowledged = stalled.body.count
            while !Task.isCancelled {
                let (received, completed) = sink.progress
                if received > acknowledged {
                    transfer.acknowledge(received - acknowledged)
                    acknowledged = received
                }
                if completed { return }
                let seen = acknowledged
                try? await sink.wait(timeout: .seconds(60)) { $0.received > seen || $0.isCompleted }
            }
        }
        // Each half window waits for the acknowledging task, so on a loaded machine the whole 32 MiB
        // took more than a minute (33,531,190 bytes at 60 s): a hang is a minute without a byte.
        let result = try await sink.completionWhileItProgresses()
        acknowledger.cancel()
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.body.count == Int(size))
        #expect(result.body == PatternBody.data(offset: 0, count: Int(size), seed: 4))
        #expect(server.connectionCount == 1)
    }

    @Test("a window smaller than one chunk still makes progress, one chunk at a time")
    func tinyWindow() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.status(200).body(.pattern(count: 200_000, seed: 8)))
        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/tiny"), flowControlWindow: 1), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.body == PatternBody.data(offset: 0, count: 200_000, seed: 8))
    }

    /// On a manual clock: 99 ms of silence after the last byte are not enough, 100 ms are.
    @Test("idle timeout of 100 ms fires on a stalled server and names itself")
    func idleTimeout() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let clock = ManualTransportClock()
        let transport = try CurlTestSupport.transport(clock: .manual(clock))
        defer { transport.shutdown() }
        server.enqueue(
            MockResponse.status(200).body(.pattern(count: 1_000_000, seed: 1))
                .effect(.stall, at: .responseBody(afterBytes: 10_000)))
        let (sink, _) = CurlTestSupport.start(TransportRequest(url: server.url("/stall"), idleTimeout: .milliseconds(100)), on: transport)
        try await sink.wait { $0.body.count >= 10_000 || $0.isCompleted }
        // A move of nothing: returns once the loop has run a pass after those bytes, which is
        // when it stamps their time as the transfer's last activity.
        await clock.advance(by: .zero)
        await clock.advance(by: .milliseconds(99))
        #expect(!sink.snapshot.isCompleted, "timed out after 99 ms of silence: \(String(describing: sink.snapshot.error))")
        await clock.advance(by: .milliseconds(1))
        #expect(sink.snapshot.isCompleted, "still running after 100 ms of silence")
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .timedOut)
        #expect(result.error?.message.contains("0.1 s (idle timeout)") == true)
        #expect(result.error?.url == server.url("/stall"))
        #expect(result.body.count == 10_000)
    }

    @Test("idle timeout counts while waiting for the response head")
    func idleTimeoutBeforeHead() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport(clock: .system)
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("late").effect(.stall, at: .afterRequest))
        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/slowhead"), idleTimeout: .milliseconds(150)), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .timedOut)
        #expect(result.head == nil)
    }

    /// On a manual clock, while bytes flow: not at 299 ms, at 300 ms.
    @Test("the deadline fires on an active but slow transfer")
    func deadline() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let clock = ManualTransportClock()
        let transport = try CurlTestSupport.transport(clock: .manual(clock))
        defer { transport.shutdown() }
        // The body pauses half way until the end of the test: a test task the loaded machine runs
        // late still finds the transfer running (as it once found it finished, 10 s later).
        let gate = Gate()
        defer { gate.open() }
        server.enqueue(
            MockResponse.status(200).body(.pattern(count: 10_000_000, seed: 2)).throttle(bytes: 10_000, every: .milliseconds(10))
                .pausing(afterBytes: 5_000_000, until: gate))
        let deadline = clock.now + .milliseconds(300)
        let (sink, _) = CurlTestSupport.start(
            TransportRequest(url: server.url("/deadline"), idleTimeout: .seconds(5), deadline: deadline), on: transport)
        try await sink.wait { $0.body.count > 0 || $0.isCompleted }
        await clock.advance(by: .milliseconds(299))
        #expect(!sink.snapshot.isCompleted, "ended before its deadline: \(String(describing: sink.snapshot.error))")
        await clock.advance(by: .milliseconds(1))
        #expect(sink.snapshot.isCompleted, "still running at its deadline")
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .timedOut)
        #expect(result.error?.message.contains("resource timeout") == true)
        #expect(result.error?.message.contains("0.3 s") == true)
        #expect(result.body.count > 0)
        #expect(result.body.count < 10_000_000)
    }

    @Test("an already-passed deadline fails without a response")
    func pastDeadline() async throws {
        let server = try TestServer()
        // The response is a trap: a request whose deadline has passed must not reach the server.
        defer { expectClean(server.shutdown(), unconsumedResponses: 1) }
        let transport = try CurlTestSupport.transport(clock: .system)
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("never needed"))
        let result = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/past"), deadline: .now - .seconds(1)), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .timedOut)
    }
}
