import CourierTestServer
import CourierTestSupport
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
        defer { expectClean(server.shutdown()) }
        let size: Int64 = 500 << 20
        server.route("/big", Resource(pattern: size, seed: 91))
        guard let executable = CourierExecutable.url else {
            Issue.record(Comment(rawValue: CourierExecutable.missingMessage))
            return
        }
        let stderrURL = FileManager.default.temporaryDirectory.appendingPathComponent("courier-backpressure-\(UUID().uuidString).err")
        defer { try? FileManager.default.removeItem(at: stderrURL) }
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let reading = FileHandle(fileDescriptor: ends[0], closeOnDealloc: true)
        let child = try ChildProcess(
            executable: executable.path,
            arguments: ["-v", "--transport", "curl", server.url("/big").absoluteString],
            stdout: .descriptor(ends[1]), stderr: .file(stderrURL.path))
        close(ends[1])  // the child has its own copy; reading ends at its exit

        // The slow consumer, on its own thread so it never blocks the test's cooperative pool.
        let (verified, total) = await withCheckedContinuation { (continuation: CheckedContinuation<(Bool, Int64), Never>) in
            Thread {
                var offset: Int64 = 0
                var matches = true
                while let chunk = try? reading.read(upToCount: 64 * 1024), !chunk.isEmpty {
                    if matches, chunk != PatternBody.data(offset: offset, count: chunk.count, seed: 91) { matches = false }
                    offset += Int64(chunk.count)
                    usleep(1_000)
                }
                continuation.resume(returning: (matches, offset))
            }.start()
        }
        let exit = await child.wait(timeout: .seconds(120))
        let stderr = (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? ""
        #expect(exit == ChildProcess.Exit(status: 0, signalled: false), "\(String(describing: exit)) \(stderr)")
        #expect(total == size)
        #expect(verified)
        let peak = try #require(try CLIOutput.peakRSSKiB(stderr), "\(stderr)")
        TestEnvironment.note("[large] slow reader on \(size) bytes: courier peak RSS \(peak) kB")
        #expect(peak < 64 * 1024, "peak RSS \(peak) kB")
    }
}
