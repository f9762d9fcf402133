import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierLocking

extension ResponseCacheStore {
    /// ``CacheReplayTransfer`` keeps the transport contract: head, body pieces within the
    /// flow-control window, exactly one completion; suspend, resume and cancel.
    @Suite("ResponseCacheStore: replay") struct ReplayTests {
        static func fileEntry(_ size: Int, seed: UInt64, in directory: URL) throws -> StoredEntry {
            let cache = ResponseCache(diskDirectory: directory)
            return try #require(
                StoreFixtures.write(
                    cache, StoreFixtures.key("replay-\(seed)"), StoreFixtures.body(size, seed: seed),
                    piece: 256 << 10))
        }

        @Test func aFileBodyIsReplayedWithinTheWindowAndResumesOnAcknowledge() async throws {
            let directory = makeTemporaryDirectory("replay-window")
            defer { try? FileManager.default.removeItem(at: directory) }
            let size = 3 << 20, window = 512 << 10
            let entry = try Self.fileEntry(size, seed: 21, in: directory)
            let sink = ReplayRecorder()
            let replay = CacheReplayTransfer(
                entry, url: try #require(URL(string: "https://example.com/r")), sink: sink,
                flowControlWindow: window)
            #expect(sink.snapshot.head?.statusCode == 200)
            #expect(await sink.wait { $0.received >= Int64(window) })
            #expect(sink.snapshot.received == Int64(window), "paused at the window (a multiple of the piece size)")
            var acknowledged: Int64 = 0
            while sink.snapshot.completions == 0 {
                let received = sink.snapshot.received
                replay.acknowledge(Int(received - acknowledged))
                acknowledged = received
                #expect(await sink.wait { $0.received > received || $0.completions > 0 })
                #expect(sink.snapshot.received - acknowledged <= Int64(window))
            }
            let result = sink.snapshot
            #expect(result.kept == StoreFixtures.body(size, seed: 21))
            #expect(result.completions == 1 && result.error == nil && result.eventsAfterCompletion == 0)
            #expect(result.metrics?.source == .cache)
            #expect(result.metrics?.bytesReceived == Int64(size))
            replay.cancel()
            replay.waitUntilIdle()
            #expect(sink.snapshot.completions == 1, "cancel after completion delivers nothing")
        }

        @Test func suspendHoldsTheBodyAndCancelEndsItOnce() async throws {
            let directory = makeTemporaryDirectory("replay-suspend")
            defer { try? FileManager.default.removeItem(at: directory) }
            let entry = try Self.fileEntry(2 << 20, seed: 22, in: directory)
            let sink = ReplayRecorder()
            let replay = CacheReplayTransfer(
                entry, url: URL(fileURLWithPath: "/"), sink: sink, flowControlWindow: 256 << 10,
                source: .revalidated)
            replay.suspend()
            replay.waitUntilIdle()
            let held = sink.snapshot.received
            #expect(held <= 256 << 10)
            replay.acknowledge(Int(held))
            replay.waitUntilIdle()
            #expect(sink.snapshot.received == held, "suspended: acknowledging brings nothing more")
            replay.resume()
            #expect(await sink.wait { $0.received > held })
            replay.cancel()
            replay.cancel()
            #expect(await sink.wait { $0.completions == 1 })
            #expect(sink.snapshot.error?.kind == .cancelled)
            #expect(sink.snapshot.metrics?.source == .revalidated)
            #expect(sink.snapshot.eventsAfterCompletion == 0)
        }

        @Test func aHeadReplayHasNoBody() throws {
            let directory = makeTemporaryDirectory("replay-head")
            defer { try? FileManager.default.removeItem(at: directory) }
            let entry = try Self.fileEntry(100 << 10, seed: 23, in: directory)
            let sink = ReplayRecorder()
            _ = CacheReplayTransfer(entry, url: URL(fileURLWithPath: "/"), sink: sink, includingBody: false)
            #expect(sink.snapshot.head != nil && sink.snapshot.received == 0 && sink.snapshot.completions == 1)
        }

        /// A TTL hit whose body is on disk and larger than the request's window goes through the
        /// session in pieces, byte-identical, marked as served from the cache — on both transports.
        @Test(arguments: TransportUnderTest.available)
        func aLargeTTLHitFromDiskIsReplayedThroughASession(transport: TransportUnderTest) async throws {
            // It holds several copies of a 9 MiB body: kept out of the peak-memory measurements.
            try await PeakMemoryGate.shared.run {
                let server = try TestServer()
                defer { expectClean(server.shutdown()) }
                let directory = makeTemporaryDirectory("replay-session")
                defer { try? FileManager.default.removeItem(at: directory) }
                let size: Int64 = 9 << 20
                server.route("/large") { _ in MockResponse(body: .pattern(count: size, seed: 24)) }
                let first = makeCachingSession(transport, server: server, cache: ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory))
                let stored = await first.request("large").cached(for: .seconds(600)).serializingData().response
                #expect(stored.data?.count == Int(size))
                #expect(stored.source == .network)

                // A new cache on the directory: the entry comes from its body file.
                let second = makeCachingSession(transport, server: server, cache: ResponseCache(memoryCapacity: 1 << 20, diskDirectory: directory))
                let replayed = await second.request("large").cached(for: .seconds(600)).serializingData().response
                #expect(replayed.data == PatternBody.data(offset: 0, count: Int(size), seed: 24))
                #expect(replayed.source == .cache)
                #expect(replayed.metrics?.transport == "cache")
                #expect(server.recordedRequests.filter { $0.path == "/large" }.count == 1)
            }
        }
    }
}

/// Checks each piece against a pattern and acknowledges it at once, like a consumer that keeps up.
final class VerifyingSink: TransportEventSink {
    private struct State {
        var transfer: CacheReplayTransfer?
        var pending = 0
        var completed = false
        var waiters: [CheckedContinuation<Bool, Never>] = []
    }

    private let checker: PatternChecker
    private let state = Locked(State())

    init(checker: PatternChecker) { self.checker = checker }

    /// Hands over the transfer to acknowledge (pieces that arrived earlier are acknowledged now).
    func attach(_ transfer: CacheReplayTransfer) {
        let pending = state.withLock { state -> Int in
            state.transfer = transfer
            defer { state.pending = 0 }
            return state.pending
        }
        if pending > 0 { transfer.acknowledge(pending) }
    }

    func receive(_ event: TransportEvent) {
        switch event {
        case .body(let data):
            checker.check(data)
            let transfer = state.withLock { state -> CacheReplayTransfer? in
                if state.transfer == nil { state.pending += data.count }
                return state.transfer
            }
            transfer?.acknowledge(data.count)
        case .completed:
            let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
                state.completed = true
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            waiters.forEach { $0.resume(returning: true) }
        default:
            break
        }
    }

    /// Waits for the completion.
    func finished() async -> Bool {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.completed { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume(returning: true) }
        }
    }
}
