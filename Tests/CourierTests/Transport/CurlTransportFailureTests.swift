@_spi(Transport) @testable import Courier
import CourierTestServer
import Foundation
import Synchronization
import Testing
import CourierTestSupport
import CourierLocking

/// Network failures, cancellation and shutdown of CurlTransport.
@Suite("Curl transport failures and cancellation")
struct CurlTransportFailureTests {
    @Test("connection refused is .cannotConnect with curl's text and code")
    func refused() async throws {
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let url = URL(string: "http://127.0.0.1:\(try CurlTestSupport.closedPort())/")!
        let result = try await CurlTestSupport.run(TransportRequest(url: url), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .cannotConnect)
        #expect(result.error?.url == url)
        #expect((result.error?.underlyingError as? CurlError)?.code == 7)
        #expect(result.head == nil)
    }

    @Test("an unresolvable host is .cannotFindHost")
    func unresolvable() async throws {
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let result = try await CurlTestSupport.run(TransportRequest(url: URL(string: "http://courier-test.invalid/")!), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .cannotFindHost)
        #expect(result.error?.message.contains("courier-test.invalid") == true)
    }

    @Test("a reset mid-body and a truncated body are .connectionLost after the head")
    func brokenBodies() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue([
            MockResponse.status(200).body(.pattern(count: 1_000_000, seed: 6)).effect(.reset, at: .responseBody(afterBytes: 200_000)),
            MockResponse.status(200).body(.pattern(count: 100_000, seed: 6)).truncated(afterBytes: 50_000),
            MockResponse.status(200).body(.pattern(count: 100_000, seed: 6)).chunked(chunkSize: 1000).truncated(afterBytes: 50_000),
        ])
        for path in ["/reset", "/truncated", "/truncated-chunked"] {
            let result = try await CurlTestSupport.run(TransportRequest(url: server.url(path)), on: transport)
            CurlTestSupport.expectContract(result)
            #expect(result.head?.statusCode == 200, "\(path)")
            #expect(result.error?.kind == .connectionLost, "\(path): \(String(describing: result.error))")
            #expect(result.body.count < 1_000_000)
        }
        #expect(server.requestCount == 3)
    }

    @Test("a connection closed before any response is .connectionLost")
    func emptyReply() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("never").effect(.close, at: .afterRequest))
        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/empty")), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .connectionLost)
        #expect(result.head == nil)
    }

    @Test("cancel right after start completes once with .cancelled")
    func cancelImmediately() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let gate = Gate()
        server.dispatcher = { _ in MockResponse.ok("x").waiting(for: gate) }
        for _ in 0..<20 {
            let (sink, transfer) = CurlTestSupport.start(TransportRequest(url: server.url("/c")), on: transport)
            transfer.cancel()
            transfer.cancel()
            let result = try await sink.completion()
            CurlTestSupport.expectContract(result)
            #expect(result.error?.kind == .cancelled)
            transfer.cancel()
            transfer.suspend()
            transfer.resume()
            transfer.acknowledge(10)
        }
        gate.open()
    }

    @Test("cancel mid-body stops the transfer and closes its connection")
    func cancelMidBody() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let gate = Gate()
        server.enqueue([
            MockResponse.status(200).body(.pattern(count: 50_000_000, seed: 3)).pausing(afterBytes: 100_000, until: gate),
            MockResponse.ok("next"),
        ])
        // No idle timeout: on a loaded machine the default 60 s could end it before the cancel does.
        let (sink, transfer) = CurlTestSupport.start(TransportRequest(url: server.url("/long"), idleTimeout: nil), on: transport)
        try await sink.wait { $0.body.count >= 100_000 || $0.isCompleted }
        transfer.cancel()
        let result = try await sink.completion()
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .cancelled)
        #expect(result.error?.url == server.url("/long"))
        #expect(result.body.count == 100_000)
        try await server.waitForClientDisconnect(path: "/long")
        gate.open()

        let next = try await CurlTestSupport.run(TransportRequest(url: server.url("/next")), on: transport)
        #expect(next.error == nil)
        #expect(server.connectionCount == 2)
    }

    @Test("cancel racing completion: a storm of tiny requests each completes exactly once")
    func cancellationStorm() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.dispatcher = { _ in MockResponse.ok("tiny") }
        let total = 2_000
        let batch = 50
        let outcomes = Locked<[String: Int]>([:])
        var generator = SystemRandomNumberGenerator()
        let lateCancels = DispatchGroup()
        var allSinks: [CurlRecordingSink] = []
        for start in stride(from: 0, to: total, by: batch) {
            var sinks: [CurlRecordingSink] = []
            for index in start..<start + batch {
                let slot = Locked<(any TransportTransfer)?>(nil)
                let cancelInSink = { @Sendable in slot.withLock { $0 }?.cancel() }
                let moment = Int.random(in: 0..<5, using: &generator)
                let sink = CurlRecordingSink { event in
                    switch (moment, event) {
                    case (1, .response):
                        cancelInSink()  // on the loop thread, just before a tiny body completes
                    case (2, .completed):
                        lateCancels.enter()
                        DispatchQueue.global().async {  // races the loop finishing up
                            cancelInSink()
                            lateCancels.leave()
                        }
                    default:
                        break
                    }
                }
                let (_, transfer) = CurlTestSupport.start(TransportRequest(url: server.url("/storm/\(index)")), on: transport, sink: sink)
                slot.withLock { $0 = transfer }
                sinks.append(sink)
                allSinks.append(sink)
                switch moment {
                case 0:
                    transfer.cancel()
                case 3:
                    // Around a tiny request's round trip here: before, during and after completion.
                    let delay = Int.random(in: 0..<3_000, using: &generator)
                    lateCancels.enter()
                    DispatchQueue.global().asyncAfter(deadline: .now() + .microseconds(delay)) {
                        transfer.cancel()
                        lateCancels.leave()
                    }
                default:
                    break  // 1 and 2 cancel from the sink; 4 never cancels
                }
            }
            for sink in sinks {
                let result = try await sink.completion(timeout: .seconds(60))
                #expect(result.violations.isEmpty, "\(result.violations)")
                let outcome = result.error.map { "\($0.kind)" } ?? "ok"
                outcomes.withLock { $0[outcome, default: 0] += 1 }
                if result.error == nil { #expect(String(decoding: result.body, as: UTF8.self) == "tiny") }
            }
        }
        // Wait for the late cancels to be queued, then for one more request: the loop handles
        // commands in order, so by its completion every late cancel has been handled.
        await withCheckedContinuation { continuation in lateCancels.notify(queue: .global()) { continuation.resume() } }
        server.dispatcher = { _ in MockResponse.ok("tiny") }
        _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/storm/last")), on: transport)
        for sink in allSinks {
            let result = sink.snapshot
            #expect(result.completions == 1)
            #expect(result.violations.isEmpty, "\(result.violations)")
        }
        let counts = outcomes.withLock { $0 }
        #expect(counts.values.reduce(0, +) == total)
        #expect(Set(counts.keys).isSubset(of: ["ok", "cancelled"]), "\(counts)")
        #expect((counts["cancelled"] ?? 0) > 0)
    }

    @Test("shutdown with transfers in flight completes each once and rejects later requests")
    func shutdownInFlight() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        let gate = Gate()
        server.enqueue(Array(repeating: MockResponse.ok("held").waiting(for: gate), count: 4))
        // Stalls after the first bytes, so it is still in flight at shutdown however slowly this test runs.
        server.enqueue(MockResponse.status(200).body(.pattern(count: 10_000_000, seed: 1)).effect(.stall, at: .responseBody(afterBytes: 10_000)))
        // No idle timeout: on a loaded machine the default 60 s could end them before shutdown does.
        let held = (0..<4).map { CurlTestSupport.start(TransportRequest(url: server.url("/held/\($0)"), idleTimeout: nil), on: transport).0 }
        #expect(await gate.waitUntilWaiting(count: 4))
        let (streaming, _) = CurlTestSupport.start(TransportRequest(url: server.url("/stream"), idleTimeout: nil), on: transport)
        try await streaming.wait { $0.body.count > 0 }

        transport.shutdown()
        // shutdown() returned after joining the loop: every completion was already delivered.
        for sink in held + [streaming] {
            let result = sink.snapshot
            CurlTestSupport.expectContract(result)
            #expect(result.error?.kind == .cancelled)
        }
        transport.shutdown()

        let late = CurlRecordingSink()
        let transfer = transport.startTransfer(TransportRequest(url: server.url("/late")), sink: late)
        #expect(late.snapshot.completions == 1)
        #expect(late.snapshot.error?.kind == .sessionInvalidated)
        transfer.cancel()
        #expect(late.snapshot.completions == 1)
        gate.open()
    }

    @Test("500 transports created and shut down leak no threads or file descriptors")
    func noLeaks() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.dispatcher = { _ in MockResponse.ok("leak check") }
        func count(_ directory: String) -> Int { (try? FileManager.default.contentsOfDirectory(atPath: directory).count) ?? -1 }
        func loopThreads() -> Int {
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
            return tasks.filter { task in
                let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
                return name.hasPrefix("courier-curl")
            }.count
        }
        // Warm up lazily created process-wide state (libcurl, the test server's threads).
        for _ in 0..<3 {
            let transport = try CurlTestSupport.transport()
            _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/warm")), on: transport)
            transport.shutdown()
        }
        let loopThreadsBefore = loopThreads()
        let threadsBefore = count("/proc/self/task")
        let descriptorsBefore = count("/proc/self/fd")
        for index in 0..<500 {
            let transport = try CurlTestSupport.transport()
            if index % 10 == 0 {
                _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/leak")), on: transport)
            }
            if index % 2 == 0 { transport.shutdown() }  // the others are shut down by deinit
        }
        // This test's own sockets, wherever it runs: none is left connected to its server.
        #expect(await eventually { SocketCensus.connections(toPort: server.port) == 0 }, "sockets to the test's server left open")
        // The process's totals are the test's own only with it alone (`COURIER_RESOURCE_TESTS=1`, a
        // step of `.ci/run`); a leak would be one loop thread and two descriptors per transport
        // (hundreds), far above these margins.
        if TestEnvironment.measuresAlone() {
            #expect(loopThreads() - loopThreadsBefore < 50)
            #expect(count("/proc/self/task") - threadsBefore < 100)
            #expect(count("/proc/self/fd") - descriptorsBefore < 200)
        }
    }

    @Test("HTTPS to a closed port with a custom trust store fails cleanly, and bad trust files are rejected")
    func trustStore() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/ca-\(UUID().uuidString).pem")
        #expect(throws: CourierError.self) { _ = try CurlTestSupport.transport(trusting: [missing]) }
        let notPEM = try CurlTestSupport.temporaryFile(Data("not a certificate".utf8))
        defer { try? FileManager.default.removeItem(at: notPEM) }
        do {
            _ = try CurlTestSupport.transport(trusting: [notPEM])
            Issue.record("a non-PEM trust file was accepted")
        } catch let error as CourierError {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains("no PEM certificate"))
        }
    }
}
