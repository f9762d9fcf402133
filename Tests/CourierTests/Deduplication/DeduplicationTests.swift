import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Identical in-flight requests share one transfer, with reference-counted cancellation.
@Suite struct DeduplicationTests {
    struct Feed: Decodable, Sendable, Equatable { let items: [Int] }
    static let feedJSON = #"{"items":[1,2,3]}"#

    func dedupingSession(_ transport: TransportUnderTest, _ server: TestServer) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.cookies = .none
        configuration.maximumConnectionsPerHost = 16
        return Session(configuration: configuration, baseURL: server.baseURL, deduplication: .safeMethods, callbackQueue: testCallbackQueue)
    }

    @Test(arguments: TransportUnderTest.available)
    func hundredCallersOneRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/feed") { _ in MockResponse.json(Self.feedJSON).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let results = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        let request = session.request("feed")
                        switch index % 3 {
                        case 0: return String(decoding: try await request.serializingData().value, as: UTF8.self)
                        case 1: return try await request.serializingString().value
                        default: return try await request.serializingDecodable(Feed.self).value == Feed(items: [1, 2, 3]) ? Self.feedJSON : "wrong"
                        }
                    }
                }
                #expect(await gate.waitUntilWaiting(count: 1))
                // Let every caller reach the deduplicator before the response is released.
                while session.deduplicator.statistics.joined < 99 { await Task.yield() }
                gate.open()
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
            #expect(results.count == 100)
            #expect(Set(results) == [Self.feedJSON])
            #expect(server.requestCount(path: "/feed") == 1)
            #expect(session.deduplicator.statistics == .init(transfers: 1, joined: 99))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingAllButOneKeepsTheTransfer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/feed") { _ in MockResponse.json(Self.feedJSON).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let requests = (0..<100).map { _ in session.request("feed") }
            let tasks = requests.map { $0.serializingString() }
            tasks.forEach { $0.resume() }
            while session.deduplicator.statistics.joined < 99 { await Task.yield() }
            #expect(await gate.waitUntilWaiting(count: 1))
            requests.dropLast().forEach { $0.cancel() }
            for task in tasks.dropLast() {
                #expect(await task.result.error?.kind == .cancelled)
            }
            gate.open()
            #expect(try await tasks.last?.value == Self.feedJSON)
            #expect(server.requestCount(path: "/feed") == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingEveryCallerClosesTheConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/feed") { _ in MockResponse.json(Self.feedJSON).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let requests = (0..<100).map { _ in session.request("feed") }
            let tasks = requests.map { $0.serializingString() }
            tasks.forEach { $0.resume() }
            while session.deduplicator.statistics.joined < 99 { await Task.yield() }
            #expect(await gate.waitUntilWaiting(count: 1))
            requests.forEach { $0.cancel() }
            for task in tasks { #expect(await task.result.error?.kind == .cancelled) }
            try await server.waitForClientDisconnect(path: "/feed")
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func differentRequestsAreNotCollapsed(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.dispatcher = { request in MockResponse.ok(request.headers["X-Variant"] ?? request.bodyText).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let tasks = [
                session.request("a", headers: ["X-Variant": "1"]).serializingString(),
                session.request("a", headers: ["X-Variant": "2"]).serializingString(),
                session.request("a", method: .post, parameters: ["k": "v"], encoder: .json).serializingString(),
                session.request("a", method: .post, parameters: ["k": "v"], encoder: .json).serializingString(),
                session.request("a", headers: ["X-Variant": "1", "X-Request-ID": "abc"]).serializingString(),
            ]
            tasks.forEach { $0.resume() }
            #expect(await gate.waitUntilWaiting(count: 4))
            gate.open()
            var values: [String] = []
            for task in tasks { values.append(try await task.value) }
            #expect(values == ["1", "2", #"{"k":"v"}"#, #"{"k":"v"}"#, "1"])
            #expect(server.requestCount == 4)
            #expect(session.deduplicator.statistics.joined == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aLateJoinerGetsEveryByteAndTheProgressSoFar(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size = 1_000_000
            let gate = Gate()
            server.route("/big", Resource(pattern: Int64(size), seed: 3).pausing(afterBytes: 200_000, until: gate))
            let session = dedupingSession(transport, server)
            let first = session.request("big")
            let firstTask = first.serializingData()
            var values = first.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < 200_000 {}
            let late = session.request("big")
            let lateStream = late.downloadProgress
            while session.deduplicator.statistics.joined < 1 { await Task.yield() }
            gate.open()
            var lateValues: [TransferProgress] = []
            for await value in lateStream { lateValues.append(value) }
            let expected = PatternBody.data(offset: 0, count: size, seed: 3)
            #expect(try await late.serializingData().value == expected)
            #expect(try await firstTask.value == expected)
            // The head comes first (0 bytes), then everything received so far in one piece.
            #expect(lateValues.count >= 2)
            #expect((lateValues.dropFirst().first?.completedUnitCount ?? 0) >= 200_000)
            #expect(lateValues.last == .finished(Int64(size)))
            #expect(server.requestCount(path: "/big") == 1, "\(session.deduplicator.statistics) \(server.recordedRequests.map(\.headers))")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func failuresReachEveryCallerAndLaterRequestsStartOver(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 1)).truncated(afterBytes: 1_000).waiting(for: gate))
            server.enqueue(.ok("second"))
            let session = dedupingSession(transport, server)
            let tasks = (0..<5).map { _ in session.request("flaky").serializingString() }
            tasks.forEach { $0.resume() }
            while session.deduplicator.statistics.joined < 4 { await Task.yield() }
            gate.open()
            for task in tasks { #expect(await task.result.error?.kind == .connectionLost) }
            #expect(try await session.request("flaky").serializingString().value == "second")
            #expect(session.deduplicator.statistics.transfers == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func oneCallerSuspendingDoesNotStallTheOthers(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/feed") { _ in MockResponse.json(Self.feedJSON).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let paused = session.request("feed")
            let pausedTask = paused.serializingString()
            pausedTask.resume()
            let other = session.request("feed").serializingString()
            other.resume()
            while session.deduplicator.statistics.joined < 1 { await Task.yield() }
            paused.suspend()
            #expect(await paused.state == .suspended)
            gate.open()
            #expect(try await other.value == Self.feedJSON)
            #expect(await paused.state == .suspended)
            paused.resume()
            #expect(try await pausedTask.value == Self.feedJSON)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRequestCanOptOut(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/feed") { _ in MockResponse.json(Self.feedJSON).waiting(for: gate) }
            let session = dedupingSession(transport, server)
            let shared = session.request("feed").serializingString()
            let own = session.request("feed").deduplication(.disabled).serializingString()
            shared.resume()
            own.resume()
            #expect(await gate.waitUntilWaiting(count: 2))
            gate.open()
            _ = try await (shared.value, own.value)
            #expect(server.requestCount(path: "/feed") == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func stressWithRandomCancels(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.dispatcher = { request in
                MockResponse.ok("body of \(request.path)").headersDelay(.milliseconds(Int.random(in: 0...3)))
            }
            let session = dedupingSession(transport, server)
            let outcomes = Collected<String>()
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<5_000 {
                    let key = index % 50
                    group.addTask {
                        let request = session.request("k\(key)")
                        let task = request.serializingString()
                        if Int.random(in: 0..<4) == 0 {
                            task.resume()
                            if Bool.random() { await Task.yield() }
                            request.cancel()
                        }
                        switch await task.result {
                        case .success(let text): outcomes.append(text == "body of /k\(key)" ? "ok" : "wrong: \(text)")
                        case .failure(let error): outcomes.append(error.isCancelled ? "cancelled" : "wrong: \(error)")
                        }
                    }
                }
            }
            let all = outcomes.all
            #expect(all.filter { $0.hasPrefix("wrong") }.prefix(3) == [])
            #expect(all.count == 5_000)
            #expect(all.filter { $0 == "ok" }.count >= 3_000)
        }
    }

    /// Callers arriving on many threads at the same moment must find the transfer the first one
    /// created: it is born with its first caller, and joining happens under the deduplicator's lock.
    /// (It was once visible without a caller for an instant, and a racing caller replaced it.)
    /// The transport only counts starts: what is under test is who starts a transfer, not the network.
    @Test func simultaneousCallersNeverStartASecondTransfer() {
        let transport = StartCountingTransport()
        let deduplicator = Deduplicator(policy: .safeMethods)
        let rounds = 20_000, callers = 16
        for round in 0..<rounds {
            let request = TransportRequest(url: URL(string: "http://127.0.0.1:9/race/\(round)")!)
            DispatchQueue.concurrentPerform(iterations: callers) { _ in
                _ = deduplicator.startTransfer(request, sink: DiscardingSink(), transport: transport)
            }
        }
        #expect(transport.starts == rounds)
        #expect(deduplicator.statistics == .init(transfers: rounds, joined: rounds * (callers - 1)))
    }
}

/// A transport whose transfers never progress; it only counts how many were started.
private final class StartCountingTransport: Transport {
    private let count = Locked(0)
    var starts: Int { count.withLock { $0 } }
    var capabilities: TransportCapabilities { TransportCapabilities(name: "counting", pausesInPlace: true, appliesBackpressure: true) }
    func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        count.withLock { $0 += 1 }
        return IdleTransfer()
    }
    func shutdown() {}
}

private final class IdleTransfer: TransportTransfer {
    func suspend() {}
    func resume() {}
    func cancel() {}
    func acknowledge(_ bytes: Int) {}
}

private final class DiscardingSink: TransportEventSink {
    func receive(_ event: TransportEvent) {}
}
