import CourierLocking
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// An InputStream that hands out `data` in small reads, then fails (or ends) — for the
/// "exactly the caller's bytes or a failure" rule.
final class ScriptedInputStream: InputStream {
    private let data: Data
    private let failsAtEnd: Bool
    private var offset = 0
    private var status: Stream.Status = .notOpen
    private var error: (any Error)?

    init(_ data: Data, failsAtEnd: Bool) {
        self.data = data
        self.failsAtEnd = failsAtEnd
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }
    override var streamError: (any Error)? { error }
    override func open() { status = .open }
    override func close() { status = .closed }
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard offset < data.count else {
            if failsAtEnd {
                error = POSIXError(.EIO)
                status = .error
                return -1
            }
            status = .atEnd
            return 0
        }
        // Small reads with a pause now and then, so the transport finds the stream empty sometimes.
        if offset % (96 << 10) == 0 { usleep(2_000) }
        let count = min(length, 16 << 10, data.count - offset)
        data.withUnsafeBytes { bytes in
            if let base = bytes.baseAddress { buffer.update(from: base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), count: count) }
        }
        offset += count
        return count
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>) -> Bool { false }
}

/// Holds a stream's read until released, and says when a read is being held.
final class ReadGate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let held = Locked(false)
    /// Fired when a read starts being held.
    let onHold = PlainThreadTrigger()

    var isHolding: Bool { held.withLock { $0 } }

    func hold() {
        held.withLock { $0 = true }
        onHold.fire()
        semaphore.wait()
    }

    func release() { semaphore.signal() }
}

/// An InputStream whose first read hands out `bytesBeforeHolding` bytes (1,000 by default) and
/// whose next blocks on `gate` (the first, with none), then ends the stream.
final class StalledInputStream: InputStream {
    private let gate: ReadGate
    private let bytesBeforeHolding: Int
    private var reads = 0
    private var status: Stream.Status = .notOpen

    init(gate: ReadGate, bytesBeforeHolding: Int = 1_000) {
        self.gate = gate
        self.bytesBeforeHolding = bytesBeforeHolding
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }
    override func open() { status = .open }
    override func close() { status = .closed }
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        reads += 1
        if reads == 1, bytesBeforeHolding > 0 {
            let count = min(length, bytesBeforeHolding)
            buffer.update(repeating: 7, count: count)
            return count
        }
        gate.hold()
        status = .atEnd
        return 0
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>) -> Bool { false }
}

/// Uploads from an `InputStream` (#26): chunked, exact, failing rather than truncating.
@Suite struct StreamUploadTests {
    static func pattern(_ count: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
    }

    @Test(arguments: TransportUnderTest.available, [0, 5, 1 << 20])
    func theStreamsBytesArriveChunked(transport: TransportUnderTest, size: Int) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in
                .text("\(request.bodySize) \(request.headers["Transfer-Encoding"] ?? "-") \(request.headers["Content-Length"] ?? "-")")
            }
            let body = Self.pattern(size)
            let progress = Collected<TransferProgress>()
            let text = try await makeSession(transport, server: server)
                .upload(ScriptedInputStream(body, failsAtEnd: false), to: "up", method: .put)
                .onUploadProgress(queue: testCallbackQueue) { progress.append($0) }
                .validate().serializingString().value
            #expect(text == "\(size) chunked -")
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.body == body)
            #expect(recorded.chunkSizes != nil)
            #expect(recorded.headers["Content-Type"] == "application/octet-stream")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStreamThatFailsFailsTheUpload(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(ScriptedInputStream(Self.pattern(300_000), failsAtEnd: true), to: "up")
                .serializingString().response
            #expect(response.error?.kind == .bodyStreamFailed, "\(String(describing: response.error))")
            #expect(response.error?.underlyingError is POSIXError)
            // The server never saw a complete body that could pass for the whole upload.
            for request in server.recordedRequests { #expect(request.error != nil || request.bodySize != 300_000) }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStreamIsNeverSentTwice(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { _ in MockResponse(status: 307, headers: ["Location": "/again"]) }
            server.route("/again") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(InputStream(data: Data("once".utf8)), to: "up").serializingString().response
            #expect(response.error?.kind == .bodyStreamFailed, "\(String(describing: response.error))")
            #expect(server.requestCount(path: "/again") == 0)
        }
    }

    /// Cancelling stops the stream at once, even while its read blocks. On URLSession the transport
    /// reads the body on FoundationNetworking's work queue, which the URLSessions of the process
    /// share: a read left waiting would hold up every other request until the stream yields.
    @Test(arguments: TransportUnderTest.available)
    func cancellingWhileTheStreamBlocksFreesTheTransport(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            server.route("/ping") { _ in .text("pong") }
            let gate = ReadGate()
            defer { gate.release() }
            let request = makeSession(transport, server: server).upload(StalledInputStream(gate: gate), to: "up")
            // Cancelled from a thread of its own as soon as the read blocks: on URLSession the hold
            // keeps every URLSession request of the test process waiting until then.
            gate.onHold.whenFired { request.cancel() }
            let outcome = Locked(DataResponse<String, CourierError>?.none)
            Task {
                let response = await request.serializingString().response
                outcome.withLock { $0 = response }
            }
            #expect(await eventually { gate.isHolding })
            #expect(await eventually { outcome.withLock { $0 } != nil }, "the cancelled request never ended")
            #expect(outcome.withLock { $0?.error?.kind } == .cancelled)

            // The stream's read is still held: another session's request goes through all the same.
            let pong = Locked(String?.none)
            Task {
                let text = await makeSession(transport, server: server).request("ping").serializingString().response.value
                pong.withLock { $0 = text ?? "failed" }
            }
            #expect(await eventually { pong.withLock { $0 } != nil }, "a request of another session waited for the cancelled stream")
            #expect(pong.withLock { $0 } == "pong")
        }
    }

    @Test func memoryStaysBounded() async throws {
        // The reader thread stops at the buffer's capacity while nobody takes bytes.
        let stream = BodyStream(ScriptedInputStream(Self.pattern(4 << 20), failsAtEnd: false))
        var scratch = [UInt8](repeating: 0, count: 1)
        _ = scratch.withUnsafeMutableBytes { stream.read(into: $0) }
        #expect(await eventually { stream.bufferedByteCount >= BodyStream.capacity })
        #expect(stream.bufferedByteCount < BodyStream.capacity + BodyStream.chunkSize)
        stream.stop()
    }
}
