import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Regression tests for the behaviour gaps issue #26 found by running Alamofire's tests translated
/// to Courier: each failed on the code before the fix.
@Suite struct ParityRegressionTests {
    // MARK: 1. A body's own Content-Type wins over a session default

    @Test(arguments: TransportUnderTest.available)
    func aBodysOwnContentTypeWinsOverTheSessionsAndAnExplicitHeaderWinsOverBoth(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.dispatcher = { _ in .ok("ok") }
            let session = makeSession(transport, server: server, headers: ["Content-Type": "application/json", "X-Session": "1"])

            _ = try await session.upload(multipartFormData: { $0.append(Data("bob".utf8), withName: "name") }, to: "multipart")
                .serializingData().value
            let multipart = try await server.takeRequest()
            #expect(multipart.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
            #expect(multipart.headers["X-Session"] == "1")

            _ = try await session.request("form", method: .post, parameters: ["a": "1"], encoder: .urlEncodedForm).serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")

            let textSession = makeSession(transport, server: server, headers: ["Content-Type": "text/plain"])
            _ = try await textSession.request("json", method: .post, parameters: ["a": "1"], encoder: .json).serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "application/json")

            // An explicit per-request header wins over the body's type.
            _ = try await session.upload(
                multipartFormData: { $0.append(Data("bob".utf8), withName: "name") }, to: "explicit",
                headers: ["Content-Type": "multipart/mixed; boundary=custom"]
            ).serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "multipart/mixed; boundary=custom")
            _ = try await textSession.request(
                "explicit-json", method: .post, parameters: ["a": "1"], encoder: .json,
                headers: [.contentType("application/vnd.api+json")]
            ).serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "application/vnd.api+json")

            // Without a body type of its own, the session's default still applies.
            _ = try await session.upload(Data("raw".utf8), to: "raw").serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "application/json")
            _ = try await session.request("query", parameters: ["q": "1"]).serializingData().value
            #expect(try await server.takeRequest().headers["Content-Type"] == "application/json")
        }
    }

    // MARK: 2. Every exchange that reached the transport ends with one completion event

    @Test(arguments: TransportUnderTest.available)
    func massCancelledRequestsEachEndTheirExchangeWithOneEventCarryingMetrics(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.dispatcher = { _ in MockResponse.ok("late").waiting(for: gate) }
            let counter = ExchangeCounter()
            let session = makeSession(transport, server: server, monitors: [counter])
            let requests = (0..<100).map { session.request("held/\($0)") }
            let tasks = requests.map { $0.serializingData() }
            tasks.forEach { $0.resume() }
            #expect(await eventually { counter.started == 100 })
            requests.forEach { $0.cancel() }
            for task in tasks {
                let response = await task.response
                #expect(response.error?.kind == .cancelled)
                #expect(response.metrics != nil)
            }
            #expect(counter.completed == 100)
            #expect(counter.perRequest.values.allSatisfy { $0 == 1 })
            #expect(counter.errors.allSatisfy { $0 == .cancelled })
            gate.open()
            // The cancelled transfers' own late `completed` events are stale and dropped (see
            // DeliveryLifecycleTests): a request made after them still counts one more, not more.
            server.dispatcher = { _ in .ok("after") }
            _ = try await session.request("after").serializingData().value
            #expect(counter.completed == 101)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancelledDownloadsAndUploadsEndTheirExchangeWithOneEvent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/file", Resource(pattern: 1_000_000, seed: 3).pausing(afterBytes: 100_000, until: gate))
            server.route("/upload", method: .post, Resource(data: Data("ok".utf8)))
            let counter = ExchangeCounter()
            let session = makeSession(transport, server: server, monitors: [counter])

            // The server waiting at its gate has written bytes the client may not have read yet.
            let received = CountdownLatch(target: 1)
            let download = session.download("file").onDownloadProgress(queue: testCallbackQueue) { progress in
                if progress.completedUnitCount > 0 { received.arrive() }
            }
            let downloadTask = download.serializingData()
            downloadTask.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            #expect(await received.wait())
            download.cancel()
            let downloaded = await downloadTask.response
            #expect(downloaded.error?.kind == .cancelled)
            #expect((downloaded.metrics?.bytesReceived ?? 0) > 0)

            let upload = session.upload(Data(count: 8 << 20), to: "upload").onUploadProgress(queue: testCallbackQueue) { _ in }
            let uploadTask = upload.serializingData()
            uploadTask.resume()
            #expect(await eventually { counter.started == 2 })
            upload.cancel()
            #expect(await uploadTask.response.error?.kind == .cancelled)

            #expect(counter.completed == 2)
            #expect(counter.errors == [.cancelled, .cancelled])
            gate.open()
        }
    }

    // MARK: 3. Adapter errors are wrapped

    @Test(arguments: TransportUnderTest.available)
    func aCourierErrorThrownByAnAdapterIsWrappedAsAdaptationFailed(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let thrown = CourierError(.invalidURL, "the signer rejected the URL")
            let failing = ClosureAdapter { _, _ in throw thrown }
            let session = makeSession(transport, server: server, interceptor: Interceptor(adapters: [failing]))
            let error = try #require(await session.request("never").serializingData().response.error)
            #expect(error.kind == .adaptationFailed)
            let underlying = try #require(error.underlyingError as? CourierError)
            #expect(underlying.kind == .invalidURL)
            #expect(underlying.message == "the signer rejected the URL")
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anAdapterErrorOnARetryIsWrappedToo(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.status(503))
            let calls = Locked(0)
            let failsOnRetry = ClosureAdapter { request, _ in
                let call = calls.withLock {
                    $0 += 1; return $0
                }
                if call == 2 { throw CourierError(.encodingFailed, "no signature for a retry") }
                return request
            }
            let interceptor = Interceptor(adapters: [failsOnRetry], retriers: [RetryPolicy(jitter: false)])
            let session = makeSession(transport, server: server, clock: FrozenClock(), interceptor: interceptor)
            let error = try #require(await session.request("again").validate().serializingData().response.error)
            #expect(error.kind == .adaptationFailed)
            #expect((error.underlyingError as? CourierError)?.kind == .encodingFailed)
            #expect(server.requestCount == 1)
        }
    }

    // MARK: 4. A failed download move reports no file

    @Test(arguments: TransportUnderTest.available, [false, true])
    func aFailedMoveLeavesNoFileURLAndCarriesTheFileSystemError(transport: TransportUnderTest, resumable: Bool) async throws {
        try await withServer { server async throws in
            server.route("/f", Resource(data: Data("new".utf8), etag: "\"v1\""))
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-move-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let occupied = directory.appendingPathComponent("exists.txt")
            try Data("old".utf8).write(to: occupied)
            let plain = makeSession(transport, server: server)
            let store = DownloadStore(directory: directory.appendingPathComponent("store"))
            let withStore = Session(
                configuration: plain.configuration, baseURL: server.baseURL, downloadStore: store,
                callbackQueue: testCallbackQueue)
            func download(to destination: URL) async -> DownloadResponse<URL, CourierError> {
                let request =
                    resumable
                    ? withStore.download("f", to: .file(destination), resumable: true)
                    : plain.download("f", to: .file(destination))
                return await request.serializingDownloadedFileURL().response
            }

            let missing = await download(to: directory.appendingPathComponent("missing/file.txt"))
            #expect(missing.fileURL == nil)
            #expect(missing.error?.kind == .fileSystem)
            #expect(missing.error?.underlyingError != nil)

            let clash = await download(to: occupied)
            #expect(clash.fileURL == nil)
            #expect(clash.error?.kind == .fileSystem)
            #expect(clash.error?.underlyingError != nil)
            #expect(try Data(contentsOf: occupied) == Data("old".utf8))
        }
    }

    // MARK: 5. Leaving a stream loop cancels the request

    enum LeaveBy: String, CaseIterable, Sendable { case breaking, returning, throwing }

    @Test(arguments: TransportUnderTest.available, LeaveBy.allCases)
    func leavingAStreamLoopCancelsTheRequest(transport: TransportUnderTest, leave: LeaveBy) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/s", Resource(pattern: 4_000_000, seed: 5).pausing(afterBytes: 200_000, until: gate))
            defer { gate.open() }
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("s")
            try await Self.readOneChunk(of: request, leavingBy: leave)
            #expect(await request.state == .cancelled)
            #expect(await request.error?.kind == .cancelled)
        }
    }

    private static func readOneChunk(of request: DataStreamRequest, leavingBy leave: LeaveBy) async throws {
        do {
            for try await chunk in request.streamingData() {
                #expect(!chunk.isEmpty)
                switch leave {
                case .breaking: break
                case .returning: return
                case .throwing: throw TestFailure(reason: "leaving")
                }
                break
            }
        } catch let failure as TestFailure {
            #expect(failure.reason == "leaving")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func leavingAStreamLoopThatOptedOutKeepsTheRequestRunning(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/s", Resource(pattern: 4_000_000, seed: 5).pausing(afterBytes: 200_000, until: gate))
            defer { gate.open() }
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("s")
            for try await _ in request.streamingData(automaticallyCancelling: false) { break }
            #expect(await request.state == .resumed)
            request.cancel()
            #expect(await request.state == .cancelled)
        }
    }

    // MARK: 6. An explicit cancel before the end is delivered wins

    @Test(arguments: TransportUnderTest.available)
    func cancellingAStreamWhoseBytesAllArrivedEndsItAsCancelled(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok(Data(repeating: 7, count: 50_000)).chunked(chunkSize: 1000))
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("s")
            var iterator = request.streamingData().makeAsyncIterator()
            #expect(try await iterator.next()?.isEmpty == false)
            // Every byte arrived and the transfer ended; the consumer has not taken the end yet.
            #expect(await eventually { await request.metrics != nil })
            request.cancel()
            do throws(CourierError) {
                while try await iterator.next() != nil {}
                Issue.record("a cancelled stream must end with an error")
            } catch {
                #expect(error.isCancelled)
            }
            #expect(await request.state == .cancelled)
            #expect(await request.error?.kind == .cancelled)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancelInsideAStreamHandlerReportsACancelledCompletion(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok(Data(repeating: 1, count: 50_000)).chunked(chunkSize: 1000))
            let ended = ExchangeCounter()
            let session = makeSession(transport, server: server, monitors: [ended])
            let chunksAfterCancel = Locked(0)
            let cancelled = Locked(false)
            let completion: DataStreamCompletion = await withCheckedContinuation { continuation in
                let request = session.streamRequest("s")
                request.responseStream { event in
                    switch event {
                    case .chunk:
                        if cancelled.withLock({ $0 }) { chunksAfterCancel.withLock { $0 += 1 }; return }
                        // Wait (on the test's own callback queue) until the whole body is in.
                        while ended.completed == 0 { usleep(1000) }
                        request.cancel()
                        cancelled.withLock { $0 = true }
                    case .complete(let completion):
                        continuation.resume(returning: completion)
                    }
                }
            }
            #expect(completion.error?.kind == .cancelled)
            #expect(chunksAfterCancel.withLock { $0 } == 0)
        }
    }
}

/// Counts exchange starts and ends per request, with the ends' error kinds.
final class ExchangeCounter: EventMonitor {
    private struct Counts {
        var started = 0
        var completed: [UUID: Int] = [:]
        var errors: [CourierError.Kind] = []
    }

    private let counts = Locked(Counts())

    var started: Int { counts.withLock { $0.started } }
    var completed: Int { counts.withLock { $0.completed.values.reduce(0, +) } }
    var perRequest: [UUID: Int] { counts.withLock { $0.completed } }
    var errors: [CourierError.Kind] { counts.withLock { $0.errors } }

    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        counts.withLock { $0.started += 1 }
    }

    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        counts.withLock { counts in
            counts.completed[request.id, default: 0] += 1
            if let error { counts.errors.append(error.kind) }
        }
    }
}
