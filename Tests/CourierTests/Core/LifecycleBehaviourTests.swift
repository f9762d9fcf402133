import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// The request lifecycle as users observe it: hooks, monitor events, state, cancellation.
@Suite struct LifecycleBehaviourTests {
    @Test(arguments: TransportUnderTest.available)
    func eventOrderOnSuccess(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("hello"))
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            let hooks = Collected<String>()
            let request = session.request("a").onWillResume { _ in hooks.append("willResume") }
            _ = try await request.serializingString().value
            #expect(hooks.all == ["willResume"])
            #expect(
                recorder.recorded == [
                    "created", "resumed", "adapted(1)", "exchange(/a)", "response(200)", "exchangeEnded(ok)", "finished(ok)", "serialized",
                ])
            #expect(await request.state == .finished)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func eventOrderWhenCancelledInFlight(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse.ok("never seen").waiting(for: gate))
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            let hooks = Collected<String>()
            let request = session.request("held")
                .onWillResume { _ in hooks.append("willResume") }
                .onWillCancel { _ in hooks.append("willCancel") }
            let task = request.serializingString()
            task.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            request.cancel()
            let response = await task.response
            gate.open()
            #expect(response.error?.kind == .cancelled)
            #expect(hooks.all == ["willResume", "willCancel"])
            #expect(
                recorder.recorded == [
                    "created", "resumed", "adapted(1)", "exchange(/held)", "cancelled", "exchangeEnded(cancelled)",
                    "finished(cancelled)", "serialized",
                ])
            #expect(await request.state == .cancelled)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func repeatedVerbsProduceOneEventEach(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            // A route rather than one scripted response: URLSession's pause restarts an exchange that had no head yet.
            server.route("/x") { _ in MockResponse.ok("x").waiting(for: gate) }
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            let counts = Collected<String>()
            let request = session.request("x")
                .onWillResume { _ in counts.append("resume") }
                .onWillSuspend { _ in counts.append("suspend") }
                .onWillCancel { _ in counts.append("cancel") }
            for _ in 0..<100 { request.resume() }
            #expect(await gate.waitUntilWaiting(count: 1))
            for _ in 0..<100 { request.suspend() }
            #expect(await request.state == .suspended)
            for _ in 0..<100 { request.resume() }
            #expect(await request.state == .resumed)
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<100 { group.addTask { request.cancel() } }
            }
            #expect(await request.state == .cancelled)
            gate.open()
            let response = await request.serializingData().response
            #expect(response.error?.kind == .cancelled)
            #expect(counts.all == ["resume", "suspend", "resume", "cancel"])
            #expect(
                recorder.recorded.filter { ["resumed", "suspended", "cancelled"].contains($0) } == ["resumed", "suspended", "resumed", "cancelled"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func nothingIsSentUntilAHandlerResumeOrAwait(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("1"))
            server.enqueue(.ok("2"))
            let session = makeSession(transport, server: server)
            let idle = session.request("idle")
            let task = idle.serializingString()
            #expect(await idle.state == .initialized)
            let started = session.request("started").resume()
            let first = try await server.takeRequest()
            #expect(first.path == "/started")
            #expect(try await task.value == "2")
            #expect(await started.state != .initialized)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingTheAwaitingTaskCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse.ok("late").waiting(for: gate))
            let session = makeSession(transport, server: server)
            let request = session.request("slow")
            let waiter = Task { try await request.serializingString().value }
            #expect(await gate.waitUntilWaiting(count: 1))
            waiter.cancel()
            let result = await waiter.result
            gate.open()
            #expect((result.error as? CourierError)?.kind == .cancelled)
            #expect(await request.state == .cancelled)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func optingOutOfAutomaticCancellationKeepsTheRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse.ok("kept").waiting(for: gate))
            let session = makeSession(transport, server: server)
            let request = session.request("slow")
            let waiter = Task { try await request.serializingString(automaticallyCancelling: false).value }
            #expect(await gate.waitUntilWaiting(count: 1))
            waiter.cancel()
            gate.open()
            #expect(try await waiter.value == "kept")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aTaskCancelledBeforeAwaitingNeverSends(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server)
            let request = session.request("never")
            let waiter = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return await request.serializingString().response
            }
            let response = await waiter.value
            #expect(response.error?.kind == .cancelled)
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingFinishedRequestsChangesNothing(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("done"))
            let session = makeSession(transport, server: server)
            let request = session.request("done")
            #expect(try await request.serializingString().value == "done")
            request.cancel().suspend().resume()
            #expect(await request.state == .finished)
            #expect(await request.error == nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancelAllRequestsCancelsEveryUnfinishedRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            for _ in 0..<3 { server.enqueue(MockResponse.ok("x").waiting(for: gate)) }
            let session = makeSession(transport, server: server)
            let requests = (0..<3).map { session.request("r\($0)").resume() }
            let idle = session.request("idle")
            #expect(await gate.waitUntilWaiting(count: 3))
            session.cancelAllRequests()
            for request in requests + [idle] {
                let response = await request.serializingData().response
                #expect(response.error?.kind == .cancelled)
            }
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func suspendedRequestsReceiveNoBytesUntilResumed(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size: Int64 = 3_000_000
            let gate = Gate()
            server.route("/big", Resource(pattern: size, seed: 7, etag: "\"v1\"").pausing(afterBytes: size / 3, until: gate))
            let session = makeSession(transport, server: server)
            let request = session.request("big")
            let received = Locked<Int64>(0)
            request.onDownloadProgress(queue: testCallbackQueue) { value in received.withLock { $0 = value.completedUnitCount } }
            let task = request.serializingData()
            var values = request.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < size / 3 {}
            request.suspend()
            #expect(await request.state == .suspended)
            gate.open()
            // A window in which the server would send the rest: nothing may arrive while suspended.
            try await Task.sleep(for: .milliseconds(300))
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            #expect(received.withLock { $0 } == size / 3)
            request.resume()
            let data = try await task.value
            #expect(data == PatternBody.data(offset: 0, count: Int(size), seed: 7))
        }
    }
}
