import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Streamed bodies with a content coding of a high ratio (about 1:1000): every decoded byte reaches
/// a slow consumer, in order, while what is buffered stays bounded whatever the ratio (on curl by
/// pausing the transfer; on URLSession by `maximumStreamBacklog`, see `StreamBacklogTests`).
@Suite struct CompressedStreamTests {
    /// Reads the whole stream, checking each byte against `body`; returns the byte count and the
    /// number of chunks. `pause` runs after each chunk (a slow consumer).
    static func consume(
        _ request: DataStreamRequest, body: CompressibleBody,
        pause: (Int) async -> Void = { _ in }
    ) async throws -> (bytes: Int, chunks: Int) {
        var offset = 0, chunks = 0
        for try await chunk in request.streamingData() {
            if let mismatch = body.firstMismatch(in: chunk, at: offset) {
                Issue.record("wrong byte at offset \(mismatch)")
                throw CancellationError()
            }
            offset += chunk.count
            chunks += 1
            await pause(chunks)
        }
        return (offset, chunks)
    }

    @Test(arguments: TransportUnderTest.available)
    func aGzipBodyOfHighRatioStreamsWhole(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // 256 MiB in 256 runs of 1 MiB, about 260 KB on the wire.
            let body = CompressibleBody.segments(256, of: 1 << 20)
            let wire = body.gzip
            #expect(wire.count < 300_000)
            server.route("/gz") { _ in MockResponse.ok(wire).header("Content-Encoding", "gzip") }
            // URLSession cannot pause: while the consumer below stops, the whole inflated body waits
            // for it, past the default maximumStreamBacklog (16 MiB), which is lifted here
            // (`StreamBacklogTests` shows the default stopping this stream).
            let session = makeSession(transport, server: server) { if transport == .urlSession { $0.maximumStreamBacklog = nil } }
            let request = session.streamRequest("gz")
            // After the first chunk the consumer stops until the server has written the whole body:
            // the transfer is paused (its window is full) and the rest waits in the socket buffers,
            // so the next reads are as large as the transport's receive buffer.
            let (bytes, _) = try await Self.consume(request, body: body) { chunks in
                guard chunks == 1 else { return }
                await Self.waitUntil { server.bytesSent(path: "/gz") >= Int64(wire.count) }
            }
            #expect(bytes == body.decodedCount)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aTwiceGzippedBodyStreamsWhole(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // `Content-Encoding: gzip, gzip`: 256 MiB from about 90 KB on the wire (1:3000), so one
            // read decodes to far more than libcurl's 64 MiB pause buffer (the failure this guards
            // against was "Out of memory" from libcurl).
            let body = CompressibleBody.segments(256, of: 1 << 20)
            let wire = CompressibleBody.runs(of: body.gzip).gzip
            #expect(wire.count < 100_000)
            server.route("/gz2") { _ in MockResponse.ok(wire).header("Content-Encoding", "gzip, gzip") }
            // The consumer checks every byte, slower than URLSession inflates: the bound on what
            // waits for it is lifted there, as above.
            let session = makeSession(transport, server: server) { if transport == .urlSession { $0.maximumStreamBacklog = nil } }
            let (bytes, _) = try await Self.consume(session.streamRequest("gz2"), body: body)
            #expect(bytes == body.decodedCount)
        }
    }

    /// Polls `condition` until it holds (at most 120 s: a check that this did not hang, which a loaded
    /// machine running the suite under ThreadSanitizer cannot exceed, not a timing assertion).
    static func waitUntil(_ condition: () -> Bool) async {
        let deadline = ContinuousClock.now + .seconds(120)
        while !condition(), ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(5))
        }
    }
}
