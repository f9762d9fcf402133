import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// What waits for a stream's consumer is bounded on both transports (issue 36): curl pauses the
/// transfer and holds the server back; URLSession, which cannot pause, fails the stream with
/// `.responseTooLarge` once more than `maximumStreamBacklog` waits, and stops the transfer there.
@Suite struct StreamBacklogTests {
    static let bound = 16 << 20

    /// Reads `request`, stopping after the first chunk until `resume()` holds; returns the bytes
    /// taken and the error the stream ended with.
    static func read(_ request: DataStreamRequest, resumingWhen resume: () -> Bool) async -> (taken: Int, error: CourierError?) {
        var taken = 0
        do throws(CourierError) {
            for try await chunk in request.streamingData() {
                if taken == 0 { _ = await eventually(timeout: .seconds(60), resume) }
                taken += chunk.count
            }
            return (taken, nil)
        } catch {
            return (taken, error)
        }
    }

    static func expectBacklogFailure(_ error: CourierError?, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(error?.kind == .responseTooLarge, "\(error.map { "\($0)" } ?? "no error")", sourceLocation: sourceLocation)
        #expect(error?.message.contains("maximumStreamBacklog (\(bound) bytes (16 MiB))") == true, sourceLocation: sourceLocation)
        #expect(error?.responseCode == 200, sourceLocation: sourceLocation)
    }

    /// 256 MiB inflated from about 260 KB, and a consumer that stops after its first chunk: on curl
    /// it gets every byte (the transfer waits for it); on URLSession, which inflates on while nobody
    /// takes, the stream fails once the bound is passed, not after 256 MiB.
    @Test(arguments: TransportUnderTest.available)
    func aConsumerThatStopsWhileABombInflates(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let body = CompressibleBody.segments(256, of: 1 << 20)
            let wire = body.gzip
            server.route("/gz") { _ in MockResponse.ok(wire).header("Content-Encoding", "gzip") }
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            #expect(session.configuration.maximumStreamBacklog == Self.bound)
            // curl: until the server wrote it all (the rest waits in socket buffers); URLSession:
            // until the transfer ended, by the bound (or, without it, with the whole body read).
            let (taken, error) = await Self.read(session.streamRequest("gz")) {
                transport == .curl
                    ? server.bytesSent(path: "/gz") >= Int64(wire.count) : recorder.recorded.contains { $0.hasPrefix("exchangeEnded") }
            }
            if transport == .curl {
                #expect(error == nil, "\(error.map { "\($0)" } ?? "")")
                #expect(taken == body.decodedCount)
            } else {
                Self.expectBacklogFailure(error)
                #expect(taken <= Self.bound + (4 << 20), "what waited for the consumer: \(taken >> 20) MiB")
            }
        }
    }

    /// A plain body offered far past the bound, and a consumer that stops: URLSession fails the
    /// stream at about the bound, and what reaches the consumer is no more; before, it read all
    /// 256 MiB into memory and delivered it. (FoundationNetworking reads on for a while after the
    /// cancel, dropping what it reads, so the server's count is no measure here.)
    @Test func aStoppedConsumerStopsTheURLSessionTransferAtTheBound() async throws {
        try await withServer { server async throws in
            let offered: Int64 = 256 << 20
            server.route("/big") { _ in MockResponse(status: 200).body(.pattern(count: offered, seed: 3)).closeDelimited() }
            let recorder = EventRecorder()
            let session = makeSession(.urlSession, server: server, monitors: [recorder])
            let (taken, error) = await Self.read(session.streamRequest("big")) {
                recorder.recorded.contains { $0.hasPrefix("exchangeEnded") }
            }
            Self.expectBacklogFailure(error)
            #expect(taken <= Self.bound + (4 << 20), "\(taken >> 20) MiB taken")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theBoundCanBeRaisedOrLifted(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let body = CompressibleBody.segments(48, of: 1 << 20)
            let wire = body.gzip
            server.route("/gz") { _ in MockResponse.ok(wire).header("Content-Encoding", "gzip") }
            for bound in [64 << 20, nil] as [Int?] {
                let recorder = EventRecorder()
                let session = makeSession(transport, server: server, monitors: [recorder]) { $0.maximumStreamBacklog = bound }
                let (taken, error) = await Self.read(session.streamRequest("gz")) {
                    transport == .curl
                        ? server.bytesSent(path: "/gz") >= Int64(wire.count) : recorder.recorded.contains { $0.hasPrefix("exchangeEnded") }
                }
                #expect(error == nil, "bound \(bound.map(String.init) ?? "nil"): \(error.map { "\($0)" } ?? "")")
                #expect(taken == body.decodedCount)
            }
        }
    }
}
