import Courier
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIFixture
import OpenAPIGenerated
import OpenAPIRuntime
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// CourierOpenAPI: the client generated from openapi.yaml, over ``CourierTransport``, against the
/// Hummingbird server generated from the same document; both transports.
@Suite struct OpenAPITransportTests {
    static func client(_ serverURL: URL, _ transport: TransportUnderTest, interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = [])
        -> Client
    {
        var configuration = SessionConfiguration()
        configuration.transport = transport == .curl ? .curl : .urlSession(.ephemeral)
        let session = Session(configuration: configuration, interceptor: interceptor, eventMonitors: monitors)
        return Client(serverURL: serverURL, transport: CourierTransport(session: session))
    }

    /// The body `upload` sends: `count` bytes of ``PatternBody``'s pattern in `chunk`-byte pieces.
    static func uploadBody(_ count: Int, chunk: Int = 10_000, declared: Bool) -> (HTTPBody, checksum: Int64) {
        let bytes = (0..<count).map { PatternBody.pattern($0) }
        let checksum = bytes.reduce(UInt32(0)) { $0 &+ UInt32($1) }
        let pieces = stride(from: 0, to: count, by: chunk).map { ArraySlice(bytes[$0..<min($0 + chunk, count)]) }
        let stream = AsyncStream<ArraySlice<UInt8>> { continuation in
            for piece in pieces { continuation.yield(piece) }
            continuation.finish()
        }
        return (HTTPBody(stream, length: declared ? .known(Int64(count)) : .unknown), Int64(checksum))
    }

    @Test(arguments: TransportUnderTest.available)
    func aJSONOperationRoundTrips(transport: TransportUnderTest) async throws {
        try await withOpenAPIServer { url in
            let client = Self.client(url, transport)
            let greeting = try await client.getGreeting(path: .init(name: "Ada Lovelace"), query: .init(excited: true)).ok.body.json
            #expect(greeting.message == "Hello, Ada Lovelace!")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anErrorStatusArrivesAsItsDocumentedOutput(transport: TransportUnderTest) async throws {
        try await withOpenAPIServer { url in
            let output = try await Self.client(url, transport).getGreeting(path: .init(name: "nobody"))
            guard case .notFound(let notFound) = output else {
                Issue.record("expected 404, got \(output)")
                return
            }
            #expect(try notFound.body.json.reason == "Nobody is called nobody.")
        }
    }

    /// The body goes out as the generated client produces it: chunked when its length is unknown,
    /// with `Content-Length` when it is known (on curl); the server receives exactly its bytes.
    @Test(arguments: TransportUnderTest.available, [false, true])
    func anUploadStreams(transport: TransportUnderTest, declared: Bool) async throws {
        try await withOpenAPIServer { url in
            let count = 3 << 20
            let (body, checksum) = Self.uploadBody(count, declared: declared)
            let receipt = try await Self.client(url, transport).upload(body: .binary(body)).ok.body.json
            #expect(receipt.byteCount == Int64(count))
            #expect(receipt.checksum == checksum)
            // FoundationNetworking sends every streamed body chunked; Courier still holds it to its length.
            #expect(receipt.declaredLength == (declared && transport == .curl ? Int64(count) : nil))
        }
    }

    /// The response body is an `HTTPBody` read as it arrives, its length the server's `Content-Length`.
    @Test(arguments: TransportUnderTest.available, [0, 5, (4 << 20) + 3])
    func aDownloadStreams(transport: TransportUnderTest, size: Int) async throws {
        try await withOpenAPIServer { url in
            let body = try await Self.client(url, transport).download(path: .init(size: Int64(size))).ok.body.binary
            #expect(body.length == .known(Int64(size)))
            var offset = 0
            var mismatches = 0
            for try await chunk in body {
                if !matchesPattern(chunk, at: Int64(offset)) { mismatches += 1 }
                offset += chunk.count
            }
            #expect(offset == size)
            #expect(mismatches == 0)
        }
    }

    /// Cancelling the task that reads the body cancels the Courier request: the read ends with
    /// Courier's `.cancelled`, long before the body's end.
    @Test(arguments: TransportUnderTest.available)
    func cancellingTheReaderCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withOpenAPIServer { url in
            let body = try await Self.client(url, transport).download(path: .init(size: 1 << 40)).ok.body.binary
            let started = AsyncStream<Void>.makeStream()
            let reader = Task {
                var received = 0
                for try await chunk in body {
                    if received == 0 { started.continuation.yield() }
                    received += chunk.count
                }
                return received
            }
            var iterator = started.stream.makeAsyncIterator()
            await iterator.next()
            reader.cancel()
            let outcome = await reader.result
            guard case .failure(let error) = outcome else {
                Issue.record("a body of a TiB was read to its end: \(outcome)")
                return
            }
            // URLSession cannot hold the server back: when the bytes delivered and not read pass
            // `maximumStreamBacklog` before the cancel lands, the transfer ends `.responseTooLarge`.
            let endings: [CourierError.Kind] = transport == .curl ? [.cancelled] : [.cancelled, .responseTooLarge]
            #expect(((error as? CourierError)?.kind).map { endings.contains($0) } == true, "\(error)")
        }
    }

    /// Cancelling the calling task before the response arrives cancels the request; the generated
    /// client wraps Courier's error, which stays the underlying error.
    @Test(arguments: TransportUnderTest.available)
    func cancellingTheCallerCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withOpenAPIServer { url in
            let client = Self.client(url, transport)
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.getGreeting(path: .init(name: "Ada"))
            }
            let outcome = await call.result
            guard case .failure(let error) = outcome else {
                Issue.record("a cancelled call succeeded: \(outcome)")
                return
            }
            let underlying = (error as? ClientError)?.underlyingError ?? error
            #expect((underlying as? CourierError)?.kind == .cancelled, "\(error)")
        }
    }

    /// A transport failure reaches the caller as the generated client's `ClientError`, whose
    /// underlying error is Courier's.
    @Test(arguments: TransportUnderTest.available)
    func aTransportFailureIsWrappedWithCouriersError(transport: TransportUnderTest) async throws {
        // A port that was just free: nothing listens there.
        let closed = try await withOpenAPIServer { url in url }
        do {
            _ = try await Self.client(closed, transport).getGreeting(path: .init(name: "Ada"))
            Issue.record("a request to a closed port succeeded")
        } catch let error as ClientError {
            let courier = try #require(error.underlyingError as? CourierError, "\(error)")
            #expect(courier.kind == .cannotConnect, "\(courier)")
            #expect(error.operationID == "getGreeting")
        }
    }

    /// Requests go through the session: its interceptor adds the token the server checks, and its
    /// monitors see each operation.
    @Test(arguments: TransportUnderTest.available)
    func theSessionsInterceptorAndMonitorsApply(transport: TransportUnderTest) async throws {
        try await withOpenAPIServer { url in
            let refused = try await Self.client(url, transport).getSecret()
            guard case .unauthorized = refused else {
                Issue.record("the secret was given without a token: \(refused)")
                return
            }
            let token = Interceptor(adapters: [
                ClosureAdapter { request, _ in
                var request = request
                    request.setValue("Bearer \(OpenAPITestServer.token)", forHTTPHeaderField: "Authorization")
                    return request
                }
            ])
            let monitor = ExchangeRecorder()
            let secret = try await Self.client(url, transport, interceptor: token, monitors: [monitor]).getSecret().ok.body.json
            #expect(secret.message == "The secret is kept.")
            #expect(await eventually { monitor.exchanges.count == 1 })
            #expect(monitor.exchanges.first?.authorization == "Bearer \(OpenAPITestServer.token)")
            #expect(monitor.exchanges.first?.status == 200)
        }
    }

    /// A 1 GiB download through the generated client keeps memory bounded: the body is read as
    /// it arrives, with backpressure, never held whole. Process-wide figures: runs alone
    /// (`.ci/run` runs it with `COURIER_RESOURCE_TESTS=1`).
    @Test(.enabled(if: ProcessInfo.processInfo.environment["COURIER_RESOURCE_TESTS"] == "1", "needs COURIER_RESOURCE_TESTS=1 (process-wide RSS)"))
    func aGibibyteDownloadStaysWithinBoundedMemory() async throws {
        let transport: TransportUnderTest = TransportUnderTest.available.contains(.curl) ? .curl : .urlSession
        try await withOpenAPIServer { url in
            let size = Int64(1) << 30
            let body = try await Self.client(url, transport).download(path: .init(size: size)).ok.body.binary
            let before = residentBytes()
            var peak = before
            var received: Int64 = 0
            var mismatches = 0
            // The consumer is slower than the server here (a byte-by-byte check of a debug build): the
            // transfer runs under backpressure the whole time, which is what this bound is about. With
            // a consumer as fast as the server (`matchesPattern`), the process's peak RSS grew 130 to
            // 280 MiB in 2.5 s (40 to 60 MiB with MALLOC_ARENA_MAX=1) without the body being held:
            // not yet attributed (noted on issue 40).
            for try await chunk in body {
                let start = Int(received % Int64(PatternBody.chunkSize))
                if start + chunk.count <= PatternBody.chunkSize {
                    if !chunk.elementsEqual(PatternBody.chunk[start..<start + chunk.count]) { mismatches += 1 }
                } else {
                    for (index, byte) in chunk.enumerated() where byte != PatternBody.pattern(Int(received) + index) { mismatches += 1 }
                }
                let crossed = (received >> 24) != ((received + Int64(chunk.count)) >> 24)
                received += Int64(chunk.count)
                if crossed { peak = max(peak, residentBytes()) }
            }
            print("OpenAPI 1 GiB download over \(transport): RSS \(before >> 20) MiB → peak \(peak >> 20) MiB")
            #expect(received == size)
            #expect(mismatches == 0)
            #expect(peak - before < 96 << 20, "RSS grew by \((peak - before) >> 20) MiB")
        }
    }
}

/// Records each finished request's `Authorization` header as sent and its status.
final class ExchangeRecorder: EventMonitor {
    private let recorded = Mutex<[(authorization: String?, status: Int?)]>([])

    var exchanges: [(authorization: String?, status: Int?)] { recorded.withLock { $0 } }

    func request(_ request: any Request, didFinishWith response: HTTPURLResponse?, metrics: TransferMetrics?, error: CourierError?) {
        Task {
            let sent = await request.lastRequest?.value(forHTTPHeaderField: "Authorization")
            recorded.withLock { $0.append((sent, response?.statusCode)) }
        }
    }
}

/// The process's resident set size (Linux: /proc/self/statm).
/// Whether `chunk` holds ``PatternBody``'s bytes from `offset` on, compared with `memcmp` one
/// 64 KiB period at a time (a byte-by-byte loop made the 1 GiB check take minutes in a debug build).
func matchesPattern(_ chunk: ArraySlice<UInt8>, at offset: Int64) -> Bool {
    var position = Int(offset % Int64(PatternBody.chunkSize))
    var rest = chunk[...]
    while !rest.isEmpty {
        let count = min(rest.count, PatternBody.chunkSize - position)
        let equal = rest.prefix(count).withUnsafeBytes { received in
            PatternBody.chunk[position..<position + count].withUnsafeBytes { expected in
                guard let received = received.baseAddress, let expected = expected.baseAddress else { return false }
                return memcmp(received, expected, count) == 0
            }
        }
        guard equal else { return false }
        rest = rest.dropFirst(count)
        position = 0
    }
    return true
}

func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Polls `condition` until it holds, for at most 120 s (a margin only a hang exceeds).
func eventually(_ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .seconds(120)
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}
