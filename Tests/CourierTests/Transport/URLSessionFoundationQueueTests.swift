import CourierLocking
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// FoundationNetworking runs the work of every URLSession of the process on one serial queue, and
/// a streamed body is read there, waiting for as long as its source takes. Courier's calls that
/// wait for that queue are made on the transport's Foundation queue, never on the caller's thread:
/// a caller on Swift's pool would hold one of its few threads, and with them all waiting nothing
/// that would end the read (the caller's cancel, the source's own task) could run.
@Suite struct URLSessionFoundationQueueTests {
    /// Opening a WebSocket on the URLSession transport while a streamed body's read holds the
    /// queue returns at once; the socket opens (or fails) once the queue is free. (A contention run
    /// of CI hung with both of the pool's threads waiting in `webSocketTask(with:)`.) From the
    /// moment the read blocks to the cancel that frees the queue everything runs on plain threads:
    /// the verdict depends on no thread of Swift's pool, and the hold, which keeps every other
    /// URLSession request of the test process waiting, lasts as long as the opening takes.
    @Test func openingAWebSocketWhileAStreamedBodyHoldsTheQueueDoesNotWait() async throws {
        guard TransportUnderTest.available.contains(.urlSession) else { return }
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            server.route("/ws") { _ in .webSocket(.echo) }
            let gate = ReadGate()
            defer { gate.release() }
            let session = makeSession(.urlSession, server: server)
            let transport = try #require(session.transport as? any WebSocketTaskTransport)
            let upload = session.upload(StalledInputStream(gate: gate, bytesBeforeHolding: 0), to: "up")
            let url = try #require(URL(string: server.url("/ws").absoluteString.replacingOccurrences(of: "http://", with: "ws://")))
            let socket = WebSocket(session: session, url: url, protocols: [], configuration: WebSocketConfiguration())
            let verdict = Locked(Bool?.none)
            // The source is first read when FoundationNetworking first reads the body, on its queue,
            // which from then on waits for the source: the socket is opened from then.
            gate.onHold.whenFired {
                let returned = DispatchSemaphore(value: 0)
                Thread {
                    socket.open(URLRequest(url: url), through: transport, timeout: .seconds(300))
                    returned.signal()
                }.start()
                // A margin only a call that waits for the held queue exceeds; then the upload is
                // cancelled either way, which frees the queue.
                let inTime = returned.wait(timeout: .now() + 120) == .success
                verdict.withLock { $0 = inTime }
                upload.cancel()
            }
            Task { _ = await upload.serializingString().response }
            #expect(await eventually(timeout: .seconds(300)) { verdict.withLock { $0 } != nil })
            #expect(verdict.withLock { $0 } == true, "opening the socket waited for FoundationNetworking's queue")
            // Once the queue is free, the socket's task is made and started: it opens, or fails to.
            #expect(await eventually { socket.state != .connecting }, "the socket never got its task")
            socket.cancel()
        }
    }

    /// Shutting the transport down while FoundationNetworking's queue is held returns at once: the
    /// flag that guards task creation is set on the Foundation queue, after the task being made
    /// there, not under a lock the caller would wait for while FoundationNetworking makes that
    /// task (a session's deinit may call it from a thread of Swift's pool). The request whose task
    /// was being made ends once the queue is free: cancelled by the invalidation, or answered.
    @Test func shuttingDownWhileATaskIsBeingMadeDoesNotWait() async throws {
        guard TransportUnderTest.available.contains(.urlSession) else { return }
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            server.route("/ping") { _ in .text("pong") }
            let gate = ReadGate()
            defer { gate.release() }
            let session = makeSession(.urlSession, server: server)
            let transport = try #require(session.transport as? URLSessionTransport)
            let upload = session.upload(StalledInputStream(gate: gate, bytesBeforeHolding: 0), to: "up")
            let sink = CurlRecordingSink()
            let verdict = Locked(Bool?.none)
            gate.onHold.whenFired {
                // The ping's task is made on the Foundation queue right after the marker, while
                // FoundationNetworking's queue waits for the upload's source.
                let marker = DispatchSemaphore(value: 0)
                transport.foundationQueue.async { marker.signal() }
                _ = transport.startTransfer(TransportRequest(url: server.url("/ping")), sink: sink)
                marker.wait()
                let returned = DispatchSemaphore(value: 0)
                Thread {
                    transport.shutdown()
                    returned.signal()
                }.start()
                // A margin only a shutdown that waits for the held queue exceeds; then the upload is
                // cancelled either way, which frees the queue.
                let inTime = returned.wait(timeout: .now() + 120) == .success
                verdict.withLock { $0 = inTime }
                upload.cancel()
            }
            Task { _ = await upload.serializingString().response }
            #expect(await eventually(timeout: .seconds(300)) { verdict.withLock { $0 } != nil })
            #expect(verdict.withLock { $0 } == true, "shutting down waited for FoundationNetworking's queue")
            // The ping's task was made before the invalidation, which cancels it unless its answer
            // came first: either way it ends.
            let ping = try await sink.completion(timeout: .seconds(120))
            if let error = ping.error {
                #expect(error.kind == .cancelled, "\(error)")
            } else {
                #expect(ping.head?.statusCode == 200 && ping.body == Data("pong".utf8))
            }
        }
    }
}
