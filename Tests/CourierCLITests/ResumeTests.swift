import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `-C` beyond the happy path: a resource that changed between runs, and two processes that try
/// to resume the same download at once.
@Suite struct ResumeTests {
    @Test func aChangedResourceStartsOverAndTheResultIsTheNewContent() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("changed")
        defer { directory.remove() }
        let size: Int64 = 2 << 20
        let gate = Gate()
        server.route("/doc.bin", Resource(pattern: size, seed: 31, etag: "\"v1\"").pausing(afterBytes: 512 << 10, until: gate))
        let store = directory.path("store")
        let output = directory.path("doc.bin")
        let arguments = ["-C", "-o", output.path, "--store", store.path, server.url("/doc.bin").absoluteString]

        // A paused body: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let first = try CLIProcess(["--timeout", "600"] + arguments)
        #expect(await eventually(timeout: .seconds(60)) { StoreFiles.partSize(in: store) >= 512 << 10 })
        first.send(SIGINT)
        let interrupted = try await first.finish(timeout: .seconds(60))
        #expect(interrupted.status == 130, "\(interrupted)")
        try await server.waitForClientDisconnect(path: "/doc.bin")

        server.replace(Resource(pattern: size + 1000, seed: 32, etag: "\"v2\""), at: "/doc.bin")
        gate.open()
        let second = try await runCLI(arguments)
        #expect(second.status == 0, "\(second)")
        #expect(
            second.stderrText.contains("nothing resumed: the server sent the whole file again, replacing the \(512 << 10) bytes on disk"),
            "\(second.stderrText)")
        #expect(try PatternFile.firstMismatch(output, count: size + 1000, seed: 32) == nil, "the new content, byte-exact")
        let last = try #require(server.recordedRequests.last)
        #expect(last.headers["Range"] == "bytes=\(512 << 10)-")
        #expect(last.headers["If-Range"] == "\"v1\"")
    }

    @Test func aSecondProcessCannotResumeTheSameDownloadAtTheSameTime() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("locked")
        defer { directory.remove() }
        let gate = Gate()
        server.route("/shared.bin", Resource(pattern: 1 << 20, seed: 33, etag: "\"s\"").pausing(afterBytes: 256 << 10, until: gate))
        let store = directory.path("store")
        let arguments = ["-C", "-o", directory.path("shared.bin").path, "--store", store.path, server.url("/shared.bin").absoluteString]

        // The first process waits at the gate for as long as the second one takes, which on a loaded
        // machine under ThreadSanitizer has passed the default 60 s idle timeout.
        let first = try CLIProcess(["--timeout", "600"] + arguments)
        #expect(await eventually(timeout: .seconds(60)) { StoreFiles.partSize(in: store) >= 256 << 10 })
        let second = try await runCLI(arguments)
        #expect(second.status == 36, "curl's 'could not resume': \(second)")
        #expect(second.stderrText.hasPrefix("courier: (36) Resume failed: Another download of "), "\(second.stderrText)")
        gate.open()
        let completed = try await first.finish(timeout: .seconds(60))
        #expect(completed.status == 0, "\(completed)")
        #expect(try PatternFile.firstMismatch(directory.path("shared.bin"), count: 1 << 20, seed: 33) == nil)
    }
}
