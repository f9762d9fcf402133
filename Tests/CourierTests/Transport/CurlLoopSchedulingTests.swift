@_spi(Transport) @testable import Courier
import CourierSupport
import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// A curl loop's thread runs as a batch thread (no preemption of the thread that woke it) while its
/// transport carries more than one transfer, and as an ordinary thread otherwise.
@Suite("Curl loop threads' scheduling policy")
struct CurlLoopSchedulingTests {
    /// One row of the policy's table: the thread's state, the transport's transfer count, the transition.
    struct Row: Sendable, CustomTestStringConvertible {
        let yielding: Bool
        let transfers: Int
        let action: CurlLoopScheduling.Action

        var testDescription: String { "\(yielding ? "batch" : "ordinary") thread, \(transfers) transfers → \(action)" }
    }

    @Test(
        "the transport's transfer count moves the loop thread's policy",
        arguments: [
            Row(yielding: false, transfers: 0, action: .none),
            Row(yielding: false, transfers: 1, action: .none),
            Row(yielding: false, transfers: 2, action: .yieldOnWake),
            Row(yielding: false, transfers: 256, action: .yieldOnWake),
            Row(yielding: true, transfers: 2, action: .none),
            Row(yielding: true, transfers: 32, action: .none),
            Row(yielding: true, transfers: 1, action: .preemptOnWake),
            Row(yielding: true, transfers: 0, action: .preemptOnWake),
        ])
    func table(_ row: Row) {
        #expect(CurlLoopScheduling.action(yielding: row.yielding, transfers: row.transfers) == row.action)
    }

    @Test("with the trick off, or without glibc, the policy never changes")
    func offNeverAsksTheKernel() {
        var scheduling = CurlLoopScheduling(enabled: false)
        let asked = scheduling.update(transfers: 32)
        #expect(!asked)
        #expect(!scheduling.yielding)
    }

    #if canImport(Glibc)
    /// Through a real transport and the kernel's own report of the loop thread's policy: a loop
    /// thread becomes a batch thread once the transport carries three transfers, and ordinary again
    /// once they ended.
    @Test(
        "a loop thread is a batch thread while its transport carries several transfers, and ordinary after",
        .hangLimit(.seconds(300)),
        .enabled(if: FastPaths.isOnOrSaySo(.loopyield), "the loop-thread policy is off (COURIER_FAST_PATHS)"))
    func policyFollowsTheTransfersInFlight() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.dispatcher = { _ in MockResponse.ok("held").waiting(for: gate) }
        // One connection per host: one loop, which carries all three transfers.
        let transport = try CurlTestSupport.transport(maximumConnectionsPerHost: 1)
        defer { transport.shutdown() }
        let (first, _) = CurlTestSupport.start(TransportRequest(url: server.url("/1")), on: transport)
        #expect(await eventually { server.requestCount >= 1 })
        #expect(transport.loopThreadsYieldOnWake == [false], "a lone transfer made the loop thread a batch thread")
        let others = (2...3).map { CurlTestSupport.start(TransportRequest(url: server.url("/\($0)")), on: transport).0 }
        #expect(await eventually { transport.loopThreadsYieldOnWake == [true] }, "three transfers did not make the loop thread a batch thread")
        gate.open()
        for sink in [first] + others {
            #expect(await eventually { sink.snapshot.isCompleted })
            #expect(sink.snapshot.error == nil)
        }
        #expect(await eventually { transport.loopThreadsYieldOnWake == [false] }, "the loop thread stayed a batch thread with no transfer")
    }
    #endif
}
