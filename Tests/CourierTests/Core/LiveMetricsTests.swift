import Testing
import Foundation
@testable import Courier
import CourierTestServer

/// `request.metrics` while the transfer is still running: what is known so far, not nil.
@Suite struct LiveMetricsTests {
    @Test(arguments: TransportUnderTest.available)
    func metricsAreAvailableMidTransfer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size: Int64 = 1_000_000
            let pauseAt: Int64 = 200_000
            let gate = Gate()
            server.route("/slow", Resource(pattern: size, seed: 5).pausing(afterBytes: pauseAt, until: gate))
            let session = makeSession(transport, server: server)
            let request = session.request("slow")
            let task = Task { try await request.serializingData().value }
            var values = request.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < pauseAt {}
            let live = try #require(await request.metrics, "metrics exist while the body is arriving")
            #expect(live.httpVersion == "HTTP/1.1")
            #expect(live.timeToFirstByte != nil)
            #expect(live.bytesReceived >= pauseAt && live.bytesReceived < size, "\(live.bytesReceived)")
            #expect(live.transport == session.transportName)
            #expect(live.total > .zero)
            let later = try #require(await request.metrics)
            #expect(later.total >= live.total, "the total grows while the transfer runs")
            gate.open()
            let body = try await task.value
            #expect(body.count == Int(size))
            let final = try #require(await request.metrics)
            #expect(final.bytesReceived == size)
            if transport == .curl { #expect(final.httpVersion == "HTTP/1.1") }  // URLSession's figures have none
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func metricsAreNilBeforeTheFirstExchange(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("x"))
            let request = makeSession(transport, server: server).request("x")
            #expect(await request.metrics == nil)
            _ = try await request.serializingData().value
            #expect(await request.metrics != nil)
        }
    }
}
