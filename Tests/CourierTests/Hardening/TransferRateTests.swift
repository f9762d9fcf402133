import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// A server that drips bytes slowly enough never to trip the idle timeout still fails once it
/// stays under the minimum transfer rate for a window.
@Suite struct TransferRateTests {
    @Test(arguments: TransportUnderTest.available)
    func slowDripTripsTheMinimumTransferRate(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // 100 bytes every 50 ms (2 KB/s) of a 10 MB body: never idle, far below 64 KB/s.
            server.route("/drip") { _ in
                MockResponse(status: 200).body(.pattern(count: 10_000_000, seed: 1)).throttle(bytes: 100, every: .milliseconds(50))
            }
            // The system's clock (URLSession's rate check runs on it): only the rate can end this
            // endless drip, so a slow machine only makes it end later.
            let session = makeSession(transport, server: server) {
                $0.minimumTransferRate = MinimumTransferRate(bytesPerSecond: 64 << 10, window: .seconds(1))
                $0.transportClock = .system
            }
            let response = await session.request("drip").serializingData().response
            #expect(response.error?.kind == .timedOut)
            #expect(response.error?.message.contains("minimum transfer rate") == true, "\(response.error.map { "\($0)" } ?? "")")
            try await ResponseLimitTests.expectDisconnect(server, path: "/drip", transport: transport)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func perRequestRateOverridesTheSession(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/drip") { _ in
                MockResponse(status: 200).body(.pattern(count: 10_000_000, seed: 2)).throttle(bytes: 100, every: .milliseconds(50))
            }
            server.route("/small") { _ in
                MockResponse(status: 200).body(.pattern(count: 3_000, seed: 3)).throttle(bytes: 1_000, every: .milliseconds(100))
            }
            let session = makeSession(transport, server: server) { $0.transportClock = .system }
            let slow = await session.request("drip")
                .minimumTransferRate(MinimumTransferRate(bytesPerSecond: 64 << 10, window: .seconds(1)))
                .serializingData().response
            #expect(slow.error?.kind == .timedOut)
            try await ResponseLimitTests.expectDisconnect(server, path: "/drip", transport: transport)
            // Off by default, and a request can turn a session's rate off.
            let rated = makeSession(transport, server: server) {
                $0.minimumTransferRate = MinimumTransferRate(bytesPerSecond: 1 << 30, window: .seconds(1))
            }
            let small = try await rated.request("small").minimumTransferRate(nil).serializingData().value
            #expect(small.count == 3_000)
        }
    }
}
