import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Per-request event monitors and interceptors, composed with the session's (#26).
@Suite struct PerRequestMonitorTests {
    /// Records `label:event` into a shared log, to show which monitor heard what, in which order.
    final class LabelledMonitor: EventMonitor {
        let label: String
        let log: Collected<String>
        init(_ label: String, log: Collected<String>) {
            self.label = label
            self.log = log
        }
        func requestDidCreate(_ request: any Request) { log.append("\(label):created") }
        func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) { log.append("\(label):exchange") }
        func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
            log.append("\(label):exchangeEnded")
        }
        func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
            log.append("\(label):finished")
        }
        func request(_ request: any Request, didSerialize result: Result<any Sendable, CourierError>, using serializer: String) {
            log.append("\(label):serialized")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func requestMonitorsHearTheWholeLifeAfterTheSessions(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.ok("one"), .ok("two")])
            let log = Collected<String>()
            let session = makeSession(transport, server: server, monitors: [LabelledMonitor("s", log: log)])
            _ = try await session.request("one").eventMonitors([LabelledMonitor("r", log: log)]).serializingString().value
            #expect(
                log.all == [
                    "s:created", "r:created", "s:exchange", "r:exchange", "s:exchangeEnded", "r:exchangeEnded",
                    "s:finished", "r:finished", "s:serialized", "r:serialized",
                ])
            // Another request of the same session is not heard by the first one's monitor.
            let before = log.all.count
            _ = try await session.request("two").serializingString().value
            #expect(log.all.dropFirst(before).allSatisfy { $0.hasPrefix("s:") })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRequestMonitorWorksWithoutSessionMonitorsAndOnEveryRequestKind(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.dispatcher = { _ in .ok("x") }
            let session = makeSession(transport, server: server)
            let recorder = EventRecorder()
            _ = try await session.download("d").eventMonitors([recorder]).serializingData().value
            _ = try await session.upload(Data("u".utf8), to: "u").eventMonitors([recorder]).serializingData().value
            for try await _ in session.streamRequest("s").eventMonitors([recorder]).streamingData() {}
            #expect(recorder.recorded.filter { $0 == "created" }.count == 3)
            #expect(recorder.recorded.filter { $0 == "finished(ok)" }.count == 3)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aPerRequestInterceptorComposesWithTheSessionsForUploadsDownloadsAndStreams(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.dispatcher = { _ in .ok("x") }
            let session = makeSession(transport, server: server, interceptor: Interceptor(adapters: [ChainAdapter(label: "session")]))
            let mine = Interceptor(adapters: [ChainAdapter(label: "request")])
            _ = try await session.upload(Data("u".utf8), to: "u", interceptor: mine).serializingData().value
            _ = try await session.download("d", interceptor: mine).serializingData().value
            for try await _ in session.streamRequest("s", interceptor: mine).streamingData() {}
            for _ in 0..<3 {
                #expect(try await server.takeRequest().headers["X-Chain"] == "session,request")
            }
        }
    }
}
