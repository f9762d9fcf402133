import Courier
@testable import CourierMetrics
import CourierTestServer
import Foundation
import Metrics
import MetricsTestKit
import Testing

/// CourierMetrics: OpenTelemetry's `http.client.request.duration` and active requests (#40).
@Suite struct MetricsMonitorTests {
    private func dimensions(_ recorder: TestRecorder) -> [String: String] {
        Dictionary(recorder.dimensions, uniquingKeysWith: { _, last in last })
    }

    @Test(arguments: TransportUnderTest.available)
    func everyExchangeRecordsItsDurationWithTheConventionsAttributes(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.status(503), .ok("done")])
            let metrics = TestMetrics()
            let retry = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, jitter: false)
            let session = transport.session(server, interceptor: retry, monitors: [MetricsMonitor(factory: metrics)])
            #expect(try await session.request("a").validate().serializingString().value == "done")

            let recorders = metrics.recorders(label: "http.client.request.duration")
            let byStatus = Dictionary(
                recorders.map { (dimensions($0)["http.response.status_code"] ?? "none", $0) }, uniquingKeysWith: { first, _ in first })
            let failed = try #require(byStatus["503"])
            let succeeded = try #require(byStatus["200"])
            #expect(failed.values.count == 1)
            #expect(succeeded.values.count == 1)
            #expect(succeeded.values.allSatisfy { $0 > 0 && $0 < 60 })  // seconds, not nanoseconds
            let port = String(server.baseURL.port ?? 0)
            var expected = [
                "http.request.method": "GET", "server.address": "127.0.0.1", "server.port": port, "url.scheme": "http",
                "http.response.status_code": "200",
            ]
            // Where the transport knows it: curl does, URLSession on Linux does not report it.
            if transport == .curl { expected["network.protocol.version"] = "1.1" }
            #expect(dimensions(succeeded) == expected)
            #expect(dimensions(failed)["error.type"] == "503")
            // Every exchange that became active ended.
            for meter in metrics.meters where meter.label == "http.client.active_requests" {
                #expect(meter.lastValue == 0)
                #expect(meter.values.contains(1))
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aConnectionFailureRecordsItsKindAsTheErrorType(transport: TransportUnderTest) async throws {
        let closed = try TestServer()
        _ = closed.shutdown()
        let metrics = TestMetrics()
        var configuration = SessionConfiguration()
        configuration.transport = transport == .curl ? .curl : .urlSession(.ephemeral)
        let session = Session(configuration: configuration, baseURL: closed.baseURL, eventMonitors: [MetricsMonitor(factory: metrics)])
        await #expect(throws: CourierError.self) { try await session.request("a").serializingString().value }
        let recorder = try #require(metrics.recorders(label: "http.client.request.duration").first)
        #expect(dimensions(recorder)["error.type"] == "cannotConnect")
        #expect(dimensions(recorder)["http.response.status_code"] == nil)
    }

    @Test func anUnknownMethodIsOther() {
        #expect(MetricsMonitor.knownMethod("PURGE") == "_OTHER")
        #expect(MetricsMonitor.knownMethod("PATCH") == "PATCH")
    }
}
