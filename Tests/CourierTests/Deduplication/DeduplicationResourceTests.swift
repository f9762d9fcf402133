import Testing
import Foundation
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking
import CourierTestSupport

/// Shared transfers are released when their last caller has its answer, a dropped session frees
/// everything, and streams never join a shared transfer.
@Suite struct DeduplicationResourceTests {
    static let bodySize = 100_000

    func session(_ transport: TransportUnderTest, _ server: TestServer, deduplication: DeduplicationPolicy) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.cookies = .none
        return Session(
            configuration: configuration, baseURL: server.baseURL, deduplication: deduplication,
            callbackQueue: testCallbackQueue)
    }

    /// Weak references to requests, checked once they should all be gone.
    final class WeakRequests: Sendable {
        private final class Reference: Sendable {
            weak let request: (any Request)?
            init(_ request: any Request) { self.request = request }
        }
        private let references = Locked<[Reference]>([])

        func add(_ request: any Request) {
            references.withLock { $0.append(Reference(request)) }
        }

        var alive: Int { references.withLock { $0.filter { $0.request != nil }.count } }
    }

    @Test(arguments: TransportUnderTest.available)
    func finishedSharedTransfersReleaseTheirRequests(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/item", Resource(pattern: Int64(Self.bodySize), seed: 7))
            let session = session(transport, server, deduplication: .safeMethods)
            let requests = WeakRequests()
            for _ in 0..<200 {
                let request = session.request("item")
                requests.add(request)
                let data = try await request.serializingData().value
                #expect(data.count == Self.bodySize)
            }
            #expect(session.deduplicator.statistics.transfers == 200)
            #expect(session.deduplicator.transfersInFlight == 0)
            // The last request's executor may still be returning from its final drain.
            #expect(await eventually(timeout: .seconds(60)) { requests.alive == 0 }, "finished requests are still referenced: \(requests.alive)")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func droppingASessionWithDeduplicationFreesIt(transport: TransportUnderTest) async throws {
        weak var weakSession: Session?
        try await withServer { server async throws in
            server.route("/item", Resource(pattern: Int64(Self.bodySize), seed: 7))
            var session: Session? = session(transport, server, deduplication: .safeMethods)
            weakSession = session
            for _ in 0..<20 {
                _ = try await session?.request("item").serializingData().value
            }
            // Two callers sharing one transfer, and one that cancels half way.
            if let session {
                async let first = session.request("item").serializingData().value
                async let second = session.request("item").serializingData().value
                _ = try await (first, second)
                let cancelled = session.request("item")
                let task = cancelled.serializingData()
                task.resume()
                cancelled.cancel()
                _ = await task.result
            }
            session = nil
        }
        #expect(await eventually(timeout: .seconds(60)) { weakSession == nil }, "the session was not freed")
    }

    @Test(arguments: TransportUnderTest.available)
    func streamsNeverJoinASharedTransfer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/events") { _ in MockResponse.text("one stream").waiting(for: gate) }
            let session = session(transport, server, deduplication: .safeMethods)
            let first = session.streamRequest("events").streamingData()
            let second = session.streamRequest("events").streamingData()
            async let a = first.reduce(into: Data()) { $0.append($1) }
            async let b = second.reduce(into: Data()) { $0.append($1) }
            #expect(await gate.waitUntilWaiting(count: 2))
            gate.open()
            let (bodyA, bodyB) = try await (a, b)
            #expect(String(decoding: bodyA, as: UTF8.self) == "one stream")
            #expect(String(decoding: bodyB, as: UTF8.self) == "one stream")
            #expect(server.requestCount(path: "/events") == 2)
            #expect(session.deduplicator.statistics == .init(transfers: 0, joined: 0))
        }
    }

    /// A slow stream consumer in a deduplicating session still holds the server back (curl
    /// applies backpressure; URLSession on Linux cannot, see `DataStreamTests`).
    @Test func aSlowStreamInADeduplicatingSessionKeepsItsBackpressure() async throws {
        guard TransportUnderTest.available.contains(.curl) else { return }
        try await withServer { server async throws in
            let size: Int64 = 64 << 20
            server.route("/big", Resource(pattern: size, seed: 1))
            let session = session(.curl, server, deduplication: .safeMethods)
            let request = session.streamRequest("big")
            var iterator = request.streamingData().makeAsyncIterator()
            #expect(try await iterator.next()?.isEmpty == false)
            // The consumer stops; the server sends what the window and the socket buffers take.
            var previous: Int64 = -1
            while server.bytesSent(path: "/big") != previous {
                previous = server.bytesSent(path: "/big")
                try await Task.sleep(for: .milliseconds(200))
            }
            #expect(server.bytesSent(path: "/big") < 16 << 20)
            request.cancel()
        }
    }

    /// 10,000 sequential 100 kB GETs with deduplication keep RSS within 20 MB of the same run
    /// without it, and descriptors return to where they were once the session and server are gone.
    /// Process-wide numbers: measured only when this suite runs alone (`.ci/run` does so with
    /// `COURIER_RESOURCE_TESTS=1`), never under ThreadSanitizer.
    @Test(.enabled(if: ResourceMeasurement.isolated, ResourceMeasurement.skipMessage))
    func memoryAndDescriptorsStayFlatWithDeduplication() async throws {
        let transport: TransportUnderTest = TransportUnderTest.available.contains(.curl) ? .curl : .urlSession
        let count = 10_000
        let descriptorsBefore = ResourceMeasurement.openDescriptors()
        var rss: [Int] = []
        try await withServer { server async throws in
            server.route("/item", Resource(pattern: Int64(Self.bodySize), seed: 7))
            for policy in [DeduplicationPolicy.disabled, .safeMethods] {
                let session = session(transport, server, deduplication: policy)
                for _ in 0..<count {
                    let data = try await session.request("item").serializingData().value
                    #expect(data.count == Self.bodySize)
                }
                rss.append(ResourceMeasurement.residentBytes())
            }
        }
        let difference = rss[1] - rss[0]
        TestEnvironment.note("RSS after \(count) GETs: dedupe off \(rss[0] >> 20) MiB, on \(rss[1] >> 20) MiB (difference \(difference >> 10) KiB)")
        #expect(difference < 20 << 20, "dedupe on kept \(difference >> 20) MiB more than dedupe off")
        #expect(
            await eventually(timeout: .seconds(60)) { ResourceMeasurement.openDescriptors() <= descriptorsBefore },
            "descriptors: \(descriptorsBefore) before, \(ResourceMeasurement.openDescriptors()) after")
    }
}

/// Process-wide resource figures for tests that run alone.
enum ResourceMeasurement {
    /// Whether this process runs only the resource tests (set by `.ci/run`), outside ThreadSanitizer;
    /// when not, the group of such checks is named once as skipped (``TestEnvironment/measuresAlone()``).
    static var isolated: Bool { TestEnvironment.measuresAlone() }

    static let skipMessage = Comment(rawValue: TestEnvironment.aloneReason)

    /// Open descriptors of this process.
    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Resident set size in bytes (`VmRSS`).
    static func residentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return -1 }
        return kilobytes << 10
    }
}
