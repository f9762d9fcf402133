import CourierTestSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Every documented limit holds with bounded memory on both transports (issue 36): a hostile body
/// of 1 GiB (endless, or inflated from about 1 MB) never raises the process's peak resident
/// memory by more than the limit and a margin. Before, URLSession buffered the whole body first
/// (1.16 GB for a 1 GiB gzip bomb against a 256 MiB limit).
///
/// Process-wide figures, so the suite runs alone and one case at a time (`.ci/run` runs it with
/// `COURIER_RESOURCE_TESTS=1`). Each case returns freed memory to the system first
/// (`malloc_trim`), resets the peak (`/proc/self/clear_refs`) and reads it after (`VmHWM`).
@Suite(.serialized, .enabled(if: ResourceMeasurement.isolated, ResourceMeasurement.skipMessage))
struct LimitMemoryTests {
    static let gibibyte: Int64 = 1 << 30

    /// The growth of the process's peak resident memory while `body` runs.
    static func peakGrowth(_ body: () async throws -> Void) async rethrows -> Int {
        trimHeap()
        if let reset = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            reset.write(Data("5".utf8))
            try? reset.close()
        }
        let before = ResourceMeasurement.residentBytes()
        try await body()
        return max(0, peakResidentBytes() - before)
    }

    /// glibc's `malloc_trim(0)` (not in the Glibc module), found at run time.
    static func trimHeap() {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
    }

    /// The peak resident set size since the last reset (`VmHWM`), in bytes.
    static func peakResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return .max }
        return kilobytes << 10
    }

    static func report(_ name: String, _ transport: TransportUnderTest, growth: Int, error: CourierError?) {
        TestEnvironment.note("limit memory: \(name) on \(transport): peak RSS +\(growth >> 20) MiB, \(error.map { "\($0.kind)" } ?? "no error")")
    }

    static func eventStreamFailure(_ stream: EventStreamRequest) async -> CourierError? {
        do throws(CourierError) {
            for try await _ in stream.events() {}
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEndlessEvent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/endless") { _ in
                MockResponse(
                    status: 200, headers: ["Content-Type": "text/event-stream"],
                    body: .repeating(Data(repeating: UInt8(ascii: "x"), count: 64 << 10), count: Self.gibibyte)
                ).closeDelimited()
            }
            let session = makeSession(transport, server: server)
            var error: CourierError?
            let growth = await Self.peakGrowth {
                error = await Self.eventStreamFailure(session.eventStream("endless", reconnection: .never))
            }
            Self.report("an endless event (8 MiB limit)", transport, growth: growth, error: error)
            #expect(error?.kind == .responseTooLarge)
            #expect(growth < 64 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEventStreamGzipBomb(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let bomb = CompressibleBody(runs: Array("data: ".utf8).map { (byte: $0, count: 1) } + [(byte: UInt8(ascii: "x"), count: 1 << 30)]).gzip
            server.route("/bomb") { _ in
                MockResponse(status: 200, headers: ["Content-Type": "text/event-stream", "Content-Encoding": "gzip"], body: .data(bomb))
            }
            let session = makeSession(transport, server: server)
            var error: CourierError?
            let growth = await Self.peakGrowth {
                error = await Self.eventStreamFailure(session.eventStream("bomb", reconnection: .never))
            }
            Self.report("a 1 GiB event-stream gzip bomb (8 MiB limit)", transport, growth: growth, error: error)
            #expect(error?.kind == .responseTooLarge)
            #expect(growth < 64 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aGzipBombFetchedIntoMemory(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let bomb = CompressibleBody.segments(1024, of: 1 << 20).gzip
            server.route("/bomb") { _ in MockResponse.ok(bomb).header("Content-Encoding", "gzip") }
            let session = makeSession(transport, server: server) { $0.maximumResponseSize = 16 << 20 }
            var error: CourierError?
            let growth = await Self.peakGrowth { error = await session.request("bomb").serializingData().response.error }
            Self.report("a 1 GiB gzip bomb into memory (16 MiB limit)", transport, growth: growth, error: error)
            #expect(error?.kind == .responseTooLarge)
            #expect(growth < 96 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEndlessBodyFetchedIntoMemory(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/endless") { _ in MockResponse(status: 200).body(.pattern(count: Self.gibibyte, seed: 1)).closeDelimited() }
            let session = makeSession(transport, server: server) { $0.maximumResponseSize = 16 << 20 }
            var error: CourierError?
            let growth = await Self.peakGrowth { error = await session.request("endless").serializingData().response.error }
            Self.report("an endless body into memory (16 MiB limit)", transport, growth: growth, error: error)
            #expect(error?.kind == .responseTooLarge)
            #expect(growth < 96 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }

    /// A consumer that takes a chunk a millisecond: curl holds the server back (the first 64 MiB
    /// are read, then the stream is left); URLSession fails it once 16 MiB wait.
    @Test(arguments: TransportUnderTest.available)
    func anEndlessBodyReadBySlowStreamConsumer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/endless") { _ in MockResponse(status: 200).body(.pattern(count: Self.gibibyte, seed: 2)).closeDelimited() }
            let session = makeSession(transport, server: server)
            var failure: CourierError?
            var taken = 0
            let growth = await Self.peakGrowth {
                do throws(CourierError) {
                    for try await chunk in session.streamRequest("endless").streamingData() {
                        taken += chunk.count
                        if taken >= 64 << 20 { break }
                        try? await Task.sleep(for: .milliseconds(1))
                    }
                } catch {
                    failure = error
                }
            }
            Self.report("an endless body read slowly as a stream (\(taken >> 20) MiB taken)", transport, growth: growth, error: failure)
            if transport == .urlSession {
                #expect(failure?.kind == .responseTooLarge)
                #expect(failure?.message.contains("maximumStreamBacklog") == true)
            } else {
                #expect(failure == nil)
            }
            #expect(growth < 64 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }
}
