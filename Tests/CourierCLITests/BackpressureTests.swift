import CourierTestServer
import Foundation
import Testing

/// Issue 4's backpressure acceptance, end to end: `courier URL | slow reader` on a 500 MiB body.
/// The reader takes 1 ms per 64 KiB chunk; courier streams to its standard output, the pipe fills,
/// courier's stream consumer blocks, the transport stops reading, and the server waits. Courier's
/// peak RSS (VmHWM, printed by `-v`) must stay under 64 MiB. Large: runs with the other large tests.
@Suite(.serialized, .enabled(if: LargeTests.enabled, LargeTests.skipMessage))
struct BackpressureTests {
    @Test func aSlowReaderKeepsCourierUnder64MiB() async throws {
        let server = try TestServer()
        defer { server.shutdown() }
        let size: Int64 = 500 << 20
        server.route("/big", Resource(pattern: size, seed: 91))
        guard let executable = CourierExecutable.url else {
            Issue.record(Comment(rawValue: CourierExecutable.missingMessage))
            return
        }
        let stderrURL = FileManager.default.temporaryDirectory.appendingPathComponent("courier-backpressure-\(UUID().uuidString).err")
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: stderrURL) }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["-v", "--transport", "curl", server.url("/big").absoluteString]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: stderrURL)
        try process.run()

        // The slow consumer, on its own thread so it never blocks the test's cooperative pool.
        let (verified, total) = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Int64), Never>) in
            Thread {
                let reader = pipe.fileHandleForReading
                var offset: Int64 = 0
                var matches = true
                while let chunk = try? reader.read(upToCount: 64 * 1024), !chunk.isEmpty {
                    if matches, chunk != PatternBody.data(offset: offset, count: chunk.count, seed: 91) { matches = false }
                    offset += Int64(chunk.count)
                    usleep(1_000)
                }
                continuation.resume(returning: (matches, offset))
            }.start()
        }
        process.waitUntilExit()
        let stderr = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "\(stderr)")
        #expect(total == size)
        #expect(verified)
        let peak = try #require(try CLIOutput.peakRSSKiB(stderr), "\(stderr)")
        print("[large] slow reader on \(size) bytes: courier peak RSS \(peak) kB")
        #expect(peak < 64 * 1024, "peak RSS \(peak) kB")
    }
}
