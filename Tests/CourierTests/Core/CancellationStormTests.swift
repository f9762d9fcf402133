import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
#if canImport(Glibc)
import Glibc
#endif
import CourierLocking
import CourierTestSupport

/// Cancels racing everything a request does, at every moment, through the public API.
@Suite struct CancellationStormTests {
    @Test(arguments: TransportUnderTest.available.filter { $0 == .curl })
    func tenThousandRequestsWithRandomCancels(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.dispatcher = { request in .ok("value of \(request.path)") }
            let session = makeSession(transport, server: server) { $0.maximumConnectionsPerHost = 16 }
            let outcomes = Collected<String>()
            let total = 10_000
            await withTaskGroup(of: Void.self) { group in
                var running = 0
                for index in 0..<total {
                    if running >= 64 {
                        await group.next()
                        running -= 1
                    }
                    running += 1
                    group.addTask {
                        let request = session.request("r\(index)")
                        let task = request.serializingString()
                        switch index % 5 {
                        case 0:
                            request.cancel()  // before it starts
                        case 1:
                            task.resume()
                            request.cancel()  // right after it starts
                        case 2:
                            request.onDownloadProgress(queue: testCallbackQueue) { _ in request.cancel() }  // mid-response
                        case 3:
                            Task {
                                _ = await task.result; request.cancel()
                            }  // right at completion
                        default:
                            break  // no cancel
                        }
                        switch await task.result {
                        case .success(let value): outcomes.append(value == "value of /r\(index)" ? "value" : "wrong value \(value)")
                        case .failure(let error): outcomes.append(error.isCancelled ? "cancelled" : "unexpected \(error)")
                        }
                    }
                }
            }
            let all = outcomes.all
            #expect(all.count == total)
            #expect(all.filter { $0 != "value" && $0 != "cancelled" }.prefix(3) == [])
            #expect(all.filter { $0 == "value" }.count >= total / 5)
        }
    }
}

/// Tests that move gigabytes: run with `COURIER_LARGE_TESTS=1` (CI sets `CI=true`, which runs them
/// too), never under ThreadSanitizer (its shadow memory and slowdown make them meaningless).
enum LargeTests {
    static let enabled: Bool = {
        let environment = ProcessInfo.processInfo.environment
        let underThreadSanitizer = dlsym(nil, "__tsan_init") != nil
        let on = (environment["COURIER_LARGE_TESTS"] == "1" || environment["CI"] == "true") && !underThreadSanitizer
        if !on {
            SkipNotice.skipped(
                "the large transfer tests (gigabytes)",
                because: underThreadSanitizer ? "they never run under ThreadSanitizer" : "COURIER_LARGE_TESTS is not set",
                run: "COURIER_LARGE_TESTS=1 swift test (CI runs them)")
        }
        return on
    }()
}

@Suite(.enabled(if: LargeTests.enabled, "large transfer tests need COURIER_LARGE_TESTS=1 or CI=true, and never run under ThreadSanitizer"))
struct LargeTransferTests {
    @Test func suspendingAGigabyteDownloadForTwoSecondsOnCurl() async throws {
        guard TransportUnderTest.available.contains(.curl) else { return }
        try await withServer { server async throws in
            let size: Int64 = 1 << 30
            let gate = Gate()
            server.route("/gig", Resource(pattern: size, seed: 77, etag: "\"g\"").pausing(afterBytes: size / 2, until: gate))
            let session = makeSession(.curl, server: server)
            let download = session.download("gig")
            let received = Locked<Int64>(0)
            download.onDownloadProgress(queue: testCallbackQueue) { value in received.withLock { $0 = value.completedUnitCount } }
            var values = download.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < size / 2 {}
            download.suspend()
            #expect(await download.state == .suspended)
            gate.open()
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            let atSuspend = received.withLock { $0 }
            try await Task.sleep(for: .seconds(2))
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            #expect(received.withLock { $0 } == atSuspend, "bytes arrived while suspended")
            download.resume()
            let url = try await download.serializingDownloadedFileURL().value
            defer { try? FileManager.default.removeItem(at: url) }
            #expect(server.connectionCount == 1)
            #expect(server.requestCount == 1)
            let handle = try FileHandle(forReadingFrom: url)
            defer { try? handle.close() }
            var offset: Int64 = 0
            var matches = true
            while let chunk = try handle.read(upToCount: 8 << 20), !chunk.isEmpty {
                if chunk != PatternBody.data(offset: offset, count: chunk.count, seed: 77) { matches = false; break }
                offset += Int64(chunk.count)
            }
            #expect(matches)
            #expect(offset == size)
        }
    }
}
