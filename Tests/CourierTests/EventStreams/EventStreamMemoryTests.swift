import Testing
import CourierTestSupport
import Foundation
@testable import Courier
import CourierTestServer

/// An endless event stream read by a slow consumer keeps the process's memory bounded: the
/// transport stops reading while the consumer is behind, so nothing piles up. Process-wide
/// figures, so the test runs alone (`.ci/run` runs it with `COURIER_RESOURCE_TESTS=1`).
@Suite struct EventStreamMemoryTests {
    struct Tick: Decodable, Sendable {
        let sequence: Int
        let padding: String
    }

    @Test(.enabled(if: ResourceMeasurement.isolated, ResourceMeasurement.skipMessage))
    func anEndlessEventStreamReadSlowlyStaysWithinBoundedMemory() async throws {
        let transport: TransportUnderTest = TransportUnderTest.available.contains(.curl) ? .curl : .urlSession
        try await withServer { server async throws in
            // A 10 GB stream of the same ~1 KB event, generated while sending.
            let event = Data("id: 1\ndata: {\"sequence\":1,\"padding\":\"\(String(repeating: "x", count: 980))\"}\n\n".utf8)
            server.route("/endless") { _ in
                MockResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .repeating(event, count: 10 << 30))
            }
            let session = makeSession(transport, server: server)
            let stream = session.eventStream("endless", reconnection: .never)
            let before = ResourceMeasurement.residentBytes()
            var peak = before
            var count = 0
            let target = 256 << 10  // events: about 256 MB read
            for try await tick in stream.decodingEvents(of: Tick.self) {
                #expect(tick.sequence == 1)
                count += 1
                if count % 4096 == 0 {
                    peak = max(peak, ResourceMeasurement.residentBytes())
                    // Slower than the network: the server is always ahead and must be held back.
                    await Task.yield()
                }
                if count == target { break }
            }
            stream.cancel()
            let sent = server.bytesSent(path: "/endless")
            TestEnvironment.note(
                "endless event stream: \(count) events read, \(sent >> 20) MiB sent by the server, RSS \(before >> 20) → peak \(peak >> 20) MiB")
            #expect(count == target)
            #expect(peak - before < 64 << 20, "RSS grew by \((peak - before) >> 20) MiB")
            #expect(sent < Int64(count) * Int64(event.count) + (64 << 20), "the server was held back near the consumer")
        }
    }
}
