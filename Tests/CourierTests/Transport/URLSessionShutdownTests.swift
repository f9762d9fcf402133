import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// A URLSession transport shut down while transfers wait to create their task: FoundationNetworking
/// traps ("Session invalidated") on a task made from an invalidated session, so those transfers
/// must end as cancelled instead. A session dropped right after cancelling a request does exactly this.
@Suite struct URLSessionShutdownTests {
    @Test func transfersStartedJustBeforeShutdownEndCancelledWithoutATrap() async throws {
        try await withServer { server async throws in
            server.route("/item") { _ in MockResponse.text("ok") }
            for _ in 0..<50 {
                let transport = URLSessionTransport(configuration: TransportConfiguration(), sessionConfiguration: .ephemeral)
                let sinks = (0..<4).map { _ in CurlRecordingSink() }
                for sink in sinks {
                    sink.attach(transport.startTransfer(TransportRequest(url: server.baseURL.appendingPathComponent("item")), sink: sink))
                }
                // Queued on the delegate queue behind the transfers' starts, or ahead of some of them.
                transport.shutdown()
                for sink in sinks {
                    let snapshot = try await sink.completion()
                    #expect(snapshot.completions == 1)
                    #expect(snapshot.error == nil || snapshot.error?.isCancelled == true)
                }
            }
        }
    }

    @Test func droppingASessionRightAfterCancellingARequestDoesNotTrap() async throws {
        try await withServer { server async throws in
            server.route("/item") { _ in MockResponse.text("ok") }
            for _ in 0..<50 {
                var session: Session? = makeSession(.urlSession, server: server)
                let request = session?.request("item")
                let task = request?.serializingString()
                task?.resume()
                request?.cancel()
                _ = await task?.result
                session = nil
            }
        }
    }
}
