import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer
import CourierLocking

/// Which thread does the HTTP cache's file I/O (#38, the thread map's surprise #1): storing a body
/// writes files and may scan the store's directory, which must never run on the transport's thread
/// (inside a libcurl pass, it would hold up every other transfer). It runs in the request's drain,
/// which takes the transport's events into the request anyway (#43: no thread hop of its own).
@Suite("HTTP cache: disk work off the transport's thread") struct HTTPCacheThreadTests {
    @Test(arguments: TransportUnderTest.available)
    func storingABodyWritesTheStoreInTheRequestsDrainNotOnTheTransportsThread(transport: TransportUnderTest) async throws {
        let directory = makeTemporaryDirectory("http-cache-thread")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Past the 64 KiB spill threshold: the body goes to a file as it arrives.
        let body = Data((0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await HTTPCacheEndToEndTests.withFixture(transport, directory: directory) { f in
            f.server.route("/big") { _ in
                MockResponse.ok(body).header("Cache-Control", "max-age=60")
            }
            // Nothing is sent before the first response handler: the executor is known before any write.
            let request = f.session.request("big")
            let executor = request.shell.executor
            // Each disk write: whether it ran in the request's drain, and the thread's name (a
            // transport's named `courier-`: a loop thread claims the executor for its pass's events,
            // so the drain check alone would not tell).
            let writes = Locked<[(inDrain: Bool, thread: String)]>([])
            f.cache.storage.diskWriteObserver.withLock {
                $0 = {
                    var name = Thread.current.name ?? ""
                    if URLSessionDelegateQueue.isCurrentOnAny { name = "courier-urlsession-delegate-queue" }
                    if name.localizedCaseInsensitiveContains("foundation") { name = "courier-foundation:" + name }
                    writes.withLock { $0.append((executor.isDrainingOnCurrentThread, name)) }
                }
            }
            let response = await request.serializingData().response
            #expect(response.value == body)
            #expect(f.events.all.contains(.stored(bytes: Int64(body.count))))
            let seen = writes.withLock { $0 }
            #expect(!seen.isEmpty, "the body was written to disk")
            let outsideDrain = seen.filter { !$0.inDrain }.map(\.thread)
            let onTransportThread = seen.filter { $0.thread.hasPrefix("courier-") }.map(\.thread)
            #expect(outsideDrain.isEmpty, "every write in the request's drain: \(outsideDrain)")
            #expect(onTransportThread.isEmpty, "no write on a transport thread")
        }
    }

    /// Records, for each callback, where it ran when that was a thread the request must not run on:
    /// a transport's (`courier-curl…`, FoundationNetworking's, the URLSession delegate queue) or an
    /// HTTP cache exchange's queue.
    final class ThreadRecorder: EventMonitor {
        private let foreign = Locked<[String]>([])
        private let calls = Locked(0)
        var foreignCalls: [String] { foreign.withLock { $0 } }
        var count: Int { calls.withLock { $0 } }

        private func note(_ callback: String) {
            calls.withLock { $0 += 1 }
            let name = Thread.current.name ?? ""
            var place: String?
            if DispatchQueue.getSpecific(key: HTTPCacheExchange.queueKey) == true {
                place = "the HTTP cache's queue"
            } else if URLSessionDelegateQueue.isCurrentOnAny {
                place = "the URLSession delegate queue"
            } else if name.hasPrefix("courier-") || name.localizedCaseInsensitiveContains("foundation") {
                place = "thread \(name)"
            }
            if let place { foreign.withLock { $0.append("\(callback) on \(place)") } }
        }

        func request(_ request: any Request, didUseCache event: HTTPCacheEvent) { note("didUseCache(\(event))") }
        func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) { note("didReceiveResponse") }
        func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
            note("didCompleteExchange")
        }
        func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
            note("didFinish")
        }
        func request(_ request: any Request, didSerialize result: Result<any Sendable, CourierError>, using serializer: String) {
            note("didSerialize")
        }
    }

    /// The thread map's surprise #2: the HTTP cache tells a request's monitors what it did from its
    /// exchange's queue; an idle request's drain (the monitors, and the events queued behind them)
    /// must start elsewhere, never on that queue or a transport's thread
    /// (RequestExecutor.swift: "their work never runs on the transport's own thread").
    @Test(arguments: TransportUnderTest.available)
    func monitorsNeverRunOnTheCachesQueueOrTheTransportsThread(transport: TransportUnderTest) async throws {
        let directory = makeTemporaryDirectory("http-cache-monitor-thread")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await HTTPCacheEndToEndTests.withFixture(transport, directory: directory) { f in
            HTTPCacheEndToEndTests.routeVersioned(f.server, "/etag", headers: [("Cache-Control", "max-age=10")])
            HTTPCacheEndToEndTests.routeVersioned(
                f.server, "/changing", headers: [("Cache-Control", "max-age=10")], changesEvery: 1)
            let recorder = ThreadRecorder()
            // Several rounds: each notice finds the request idle (its task parked) in most of them.
            for round in 0..<8 {
                let etag = f.session.request("etag").eventMonitors([recorder])
                #expect(await etag.serializingString().response.value == "v1")
                let changing = f.session.request("changing").eventMonitors([recorder])
                #expect(await changing.serializingString().response.value == "v\(round + 1)")
                f.time.advance(by: .seconds(11))
            }
            #expect(f.events.all.contains(.revalidated(notModified: true)))
            #expect(f.events.all.contains(.revalidated(notModified: false)))
            #expect(recorder.count > 0)
            #expect(recorder.foreignCalls.isEmpty, "\(recorder.foreignCalls)")
        }
    }
}
