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
/// (inside a libcurl pass, it would hold up every other transfer).
@Suite("HTTP cache: disk work off the transport's thread") struct HTTPCacheThreadTests {
    @Test(arguments: TransportUnderTest.available)
    func storingABodyWritesTheStoreOnTheCachesQueueNotTheTransportsThread(transport: TransportUnderTest) async throws {
        let directory = makeTemporaryDirectory("http-cache-thread")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Past the 64 KiB spill threshold: the body goes to a file as it arrives.
        let body = Data((0..<(300 << 10)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await HTTPCacheEndToEndTests.withFixture(transport, directory: directory) { f in
            f.server.route("/big") { _ in
                MockResponse.ok(body).header("Cache-Control", "max-age=60")
            }
            // Each disk write: whether it ran on an HTTP cache exchange's queue, and the thread's name.
            let writes = Locked<[(onCacheQueue: Bool, thread: String)]>([])
            f.cache.storage.diskWriteObserver.withLock {
                $0 = {
                    let onQueue = DispatchQueue.getSpecific(key: HTTPCacheExchange.queueKey) == true
                    let name = Thread.current.name ?? ""
                    writes.withLock { $0.append((onQueue, name)) }
                }
            }
            let response = await f.session.request("big").serializingData().response
            #expect(response.value == body)
            #expect(f.events.all.contains(.stored(bytes: Int64(body.count))))
            let seen = writes.withLock { $0 }
            #expect(!seen.isEmpty, "the body was written to disk")
            let offQueue = seen.filter { !$0.onCacheQueue }.map(\.thread)
            let onTransportThread = seen.filter { $0.thread.hasPrefix("courier-") }.map(\.thread)
            #expect(offQueue.isEmpty, "every write on the cache's queue")
            #expect(onTransportThread.isEmpty, "no write on a transport thread")
        }
    }
}
