import CourierLocking
import CourierTestServer
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// An `AsyncSequence` of `chunkSize`-byte pieces of `StreamUploadTests.pattern(total)`, then its
/// end or `failure`; `onElement` sees each element's end offset before it is yielded.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let total: Int
    var chunkSize = 16 << 10
    var failure: (any Error & Sendable)?
    var onElement: @Sendable (Int) -> Void = { _ in }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: self, bytes: StreamUploadTests.pattern(total)) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: PatternChunks
        let bytes: Data
        var offset = 0

        mutating func next() async throws -> Data? {
            guard offset < bytes.count else {
                if let failure = chunks.failure { throw failure }
                return nil
            }
            let end = Swift.min(offset + chunks.chunkSize, bytes.count)
            chunks.onElement(end)
            defer { offset = end }
            // A suspension now and then, so the transport finds the buffer empty sometimes.
            if offset % (96 << 10) == 0 { await Task.yield() }
            return bytes[offset..<end]
        }
    }
}

private struct SequenceFailure: Error, Equatable {}

/// Uploads from an `AsyncSequence` (#40): streamed through the same bounded buffer as an
/// `InputStream`, chunked or with the declared `Content-Length`, exact or failing.
@Suite struct AsyncSequenceUploadTests {
    @Test(arguments: TransportUnderTest.available, [0, 5, 1 << 20])
    func theSequencesBytesArriveChunkedWithoutALength(transport: TransportUnderTest, size: Int) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in
                .text("\(request.bodySize) \(request.headers["Transfer-Encoding"] ?? "-") \(request.headers["Content-Length"] ?? "-")")
            }
            let text = try await makeSession(transport, server: server)
                .upload(PatternChunks(total: size), to: "up", method: .put)
                .validate().serializingString().value
            #expect(text == "\(size) chunked -")
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.body == StreamUploadTests.pattern(size))
            #expect(recorded.chunkSizes != nil)
            #expect(recorded.headers["Content-Type"] == "application/octet-stream")
        }
    }

    @Test(arguments: TransportUnderTest.available, [0, 5, 1 << 20])
    func aDeclaredLengthIsSentAsContentLengthOnCurl(transport: TransportUnderTest, size: Int) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in
                .text("\(request.bodySize) \(request.headers["Transfer-Encoding"] ?? "-") \(request.headers["Content-Length"] ?? "-")")
            }
            let text = try await makeSession(transport, server: server)
                .upload(PatternChunks(total: size), length: Int64(size), to: "up")
                .validate().serializingString().value
            #expect(server.recordedRequests.first?.body == StreamUploadTests.pattern(size))
            if transport == .curl {
                #expect(text == "\(size) - \(size)")
                #expect(server.recordedRequests.first?.chunkSizes == nil)
            } else {
                // FoundationNetworking sends every stream chunked; the length is still held exactly.
                #expect(text == "\(size) chunked -")
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSequenceThatThrowsFailsTheUpload(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(PatternChunks(total: 300_000, failure: SequenceFailure()), to: "up")
                .serializingString().response
            #expect(response.error?.kind == .bodyStreamFailed, "\(String(describing: response.error))")
            #expect(response.error?.underlyingError is SequenceFailure)
            // The server never saw a complete body that could pass for the whole upload.
            for request in server.recordedRequests { #expect(request.error != nil || request.bodySize != 300_000) }
        }
    }

    /// A sequence shorter or longer than its declared length is refused: never sent short, never cut.
    @Test(arguments: TransportUnderTest.available, [299_999, 300_001, 1])
    func aSequenceThatDoesNotMatchItsLengthFailsTheUpload(transport: TransportUnderTest, declared: Int) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(PatternChunks(total: 300_000), length: Int64(declared), to: "up")
                .serializingString().response
            #expect(response.error?.kind == .bodyStreamFailed, "\(String(describing: response.error)) \(String(describing: response.value))")
            for request in server.recordedRequests { #expect(request.error != nil, "the server read a complete body of \(request.bodySize) bytes") }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSequenceIsNeverSentTwice(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { _ in MockResponse(status: 307, headers: ["Location": "/again"]) }
            server.route("/again") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(PatternChunks(total: 4), to: "up").serializingString().response
            #expect(response.error?.kind == .bodyStreamFailed, "\(String(describing: response.error))")
            #expect(server.requestCount(path: "/again") == 0)
        }
    }

    /// Cancelling the request cancels the task that iterates the sequence.
    @Test(arguments: TransportUnderTest.available)
    func cancellingTheRequestStopsTheProducer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let probe = ProducerProbe()
            let request = makeSession(transport, server: server).upload(EndlessChunks(probe: probe), to: "up")
            // Cancelled from a thread of its own once the producer waits for its next element: on
            // URLSession the body's read keeps every URLSession request of the test process waiting
            // until then (see PlainThreadTrigger).
            probe.onWaiting.whenFired { request.cancel() }
            let outcome = Task { await request.serializingString().response }
            // The producer handed out its first element and waits for the next.
            #expect(await eventually { probe.isWaiting })
            #expect(await outcome.value.error?.kind == .cancelled)
            #expect(await eventually { probe.wasCancelled })
        }
    }

    /// The producer is never more than the buffer (and one element) ahead of the transport.
    @Test func theProducerStaysWithinTheBufferOfTheTransport() async throws {
        let lead = Locked((stream: BodyStream?.none, most: Int64(0)))
        let chunks = PatternChunks(total: 4 << 20) { end in
            lead.withLock { lead in
                guard let stream = lead.stream else { return }
                lead.most = max(lead.most, Int64(end) - stream.bytesRead)
            }
        }
        let stream = BodyStream(chunks, length: nil)
        lead.withLock { $0.stream = stream }
        var received = Data()
        var scratch = [UInt8](repeating: 0, count: 10_000)
        reading: while true {
            let result = scratch.withUnsafeMutableBytes { stream.read(into: $0) }
            switch result {
            case .bytes(let count): received.append(contentsOf: scratch[0..<count])
            case .end: break reading
            case .wait: await Task.yield()
            case .failed: Issue.record("\(String(describing: stream.failure))"); break reading
            }
        }
        #expect(received == StreamUploadTests.pattern(4 << 20))
        let most = lead.withLock { $0.most }
        #expect(most > 0)
        #expect(most <= Int64(BodyStream.capacity + chunks.chunkSize), "the producer ran \(most) bytes ahead")
        stream.stop()
    }
}

/// What ``EndlessChunks`` went through: waiting for its second element, cancelled.
final class ProducerProbe: Sendable {
    private let state = Locked((waiting: false, cancelled: false, parked: CheckedContinuation<Void, Never>?.none))

    /// Fired when the producer starts waiting.
    let onWaiting = PlainThreadTrigger()

    var isWaiting: Bool { state.withLock { $0.waiting } }
    var wasCancelled: Bool { state.withLock { $0.cancelled } }

    /// Waits until the iterating task is cancelled.
    func park() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = state.withLock { state in
                    state.waiting = true
                    if !state.cancelled { state.parked = continuation }
                    return state.cancelled
                }
                onWaiting.fire()
                if cancelled { continuation.resume() }
            }
        } onCancel: {
            let parked = state.withLock { state in
                state.cancelled = true
                defer { state.parked = nil }
                return state.parked
            }
            parked?.resume()
        }
    }
}

/// A sequence that yields one element, then waits, ending only when its task is cancelled.
struct EndlessChunks: AsyncSequence, Sendable {
    let probe: ProducerProbe

    func makeAsyncIterator() -> Iterator { Iterator(probe: probe) }

    struct Iterator: AsyncIteratorProtocol {
        let probe: ProducerProbe
        var first = true

        mutating func next() async -> Data? {
            if first {
                first = false
                return Data(repeating: 7, count: 1000)
            }
            await probe.park()
            return nil
        }
    }
}
