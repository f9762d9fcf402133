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
///
/// The responses are held until the transfers have ended: FoundationNetworking also traps
/// ("Trying to access a behaviour for a task that in not in the registry") when a cancel lands
/// within about a millisecond of a task's completion, a race of its own that no client-side measure
/// closes (research/linux-urlsession.md, 7z); a loaded machine widens that window until it hit in a
/// run of the suite here. Held responses keep every cancel well ahead of any completion.
@Suite struct URLSessionShutdownTests {
    @Test func transfersStartedJustBeforeShutdownEndCancelledWithoutATrap() async throws {
        try await withServer { server async throws in
            let gate = Gate()
            defer { gate.open() }
            server.route("/item") { _ in MockResponse.text("ok").waiting(for: gate) }
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
            let gate = Gate()
            defer { gate.open() }
            server.route("/item") { _ in MockResponse.text("ok").waiting(for: gate) }
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
