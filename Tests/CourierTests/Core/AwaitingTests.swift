import Testing
import CourierTestSupport
import Foundation
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Awaiting a response: the task that starts a request hosts its event drains (one wake-up per
/// batch of transport events), and every other way of waiting still gets the same response. A lost
/// wake-up would leave a task suspended for ever, so the suite has a time limit.
@Suite(.hangLimit(.seconds(300))) struct AwaitingTests {
    @Test(arguments: TransportUnderTest.available)
    func twoSerializersAwaitedAtOnceBothGetTheResponse(transport: TransportUnderTest) async throws {
        try await withHeldResponse("{\"n\":1}", on: transport) { server, session, gate async throws in
            let request = session.request("held")
            // The first awaiter hosts the request's drains; the second finds the host taken and waits.
            async let data = request.serializingData().value
            async let text = request.serializingString().value
            #expect(await gate.waitUntilWaiting(count: 1))
            gate.open()
            #expect(try await data == Data("{\"n\":1}".utf8))
            #expect(try await text == "{\"n\":1}")
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func manyTasksAwaitingOneTaskShareOneResponse(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/one") { _ in MockResponse.ok("shared") }
            let session = makeSession(transport, server: server)
            let task = session.request("one").serializingString()
            let values = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<16 { group.addTask { try await task.value } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(values == Array(repeating: "shared", count: 16))
            #expect(server.requestCount == 1)
        }
    }

    /// The awaiting task is parked as the drain host when it is cancelled: the cancel runs on the
    /// cancelling thread, and the completion must still wake the parked task.
    @Test(arguments: TransportUnderTest.available)
    func cancellingTheAwaitingTaskWakesItWithCancelled(transport: TransportUnderTest) async throws {
        try await withHeldResponse("late", on: transport) { _, session, gate async throws in
            let waiting = Task { await session.request("held").serializingData().response }
            #expect(await gate.waitUntilWaiting(count: 1))
            waiting.cancel()
            let response = await waiting.value
            #expect(response.error?.kind == .cancelled)
            gate.open()
        }
    }

    /// Swift jobs on the request's executor (here: reading `state`) arrive while a task hosts its
    /// drains; the host hands them to the global queue and still receives the response.
    @Test(arguments: TransportUnderTest.available)
    func readingStateWhileAnotherTaskAwaitsTheResponse(transport: TransportUnderTest) async throws {
        try await withHeldResponse("body", on: transport) { _, session, gate async throws in
            let request = session.request("held")
            async let body = request.serializingString().value
            #expect(await gate.waitUntilWaiting(count: 1))
            var states: [RequestState] = []
            for _ in 0..<200 { states.append(await request.state) }
            #expect(states.allSatisfy { $0 == .resumed })
            gate.open()
            #expect(try await body == "body")
            #expect(await request.state == .finished)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRequestStartedBeforeItIsAwaitedStillAnswersTheAwaiter(transport: TransportUnderTest) async throws {
        try await withHeldResponse("started", on: transport) { _, session, gate async throws in
            let task = session.request("held").serializingString()
            task.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            gate.open()
            #expect(try await task.value == "started")
        }
    }

    /// Many requests at once, awaited and with callbacks mixed, each with its own body: every
    /// awaiter gets its own request's response (run under the thread sanitizer in CI).
    @Test(arguments: TransportUnderTest.available)
    func concurrentAwaitersEachGetTheirOwnResponse(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/n") { request in MockResponse.ok(request.query["i"] ?? "?") }
            let session = makeSession(transport, server: server)
            let count = 400
            let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<16 {
                    group.addTask {
                        var wrong = 0
                        for index in stride(from: worker, to: count, by: 16) {
                            let request = session.request("n", parameters: ["i": "\(index)"])
                            if index % 4 == 0 {
                                let text = await withCheckedContinuation { continuation in
                                    request.responseString { continuation.resume(returning: (try? $0.result.get()) ?? "") }
                                }
                                if text != "\(index)" { wrong += 1 }
                            } else if try await request.serializingString().value != "\(index)" {
                                wrong += 1
                            }
                        }
                        return wrong
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(mismatches == 0)
        }
    }

    /// A server whose `/held` answers `body` once `gate` opens, and a session on `transport` for it.
    private func withHeldResponse(
        _ body: String, on transport: TransportUnderTest,
        _ test: (TestServer, Session, Gate) async throws -> Void
    ) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok(body).waiting(for: gate) }
            try await test(server, makeSession(transport, server: server), gate)
        }
    }
}
