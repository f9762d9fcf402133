import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
@testable import Courier
#if canImport(Glibc)
import Glibc
#endif

/// Issue 22: `courier --cache DIR URL` killed with SIGKILL while a large cacheable body arrives,
/// and again right after the body completed (while the entry may be being committed). A new
/// `ResponseCache` on the directory then finds either no entry or a complete, byte-identical one,
/// never a partial one, and after its next scan no temporary file is left.
///
/// Not under ThreadSanitizer, like the other kill tests: they test crash recovery, not races.
@Suite(.serialized, .enabled(if: !LargeTests.underThreadSanitizer, "kill tests are skipped under ThreadSanitizer"))
struct CacheKillTests {
    static let size: Int64 = 16 << 20

    static func cacheable(seed: UInt64) -> MockResponse {
        MockResponse(
            headers: ["Cache-Control": "max-age=600", "ETag": "\"cache-\(seed)\"", "Content-Type": "application/octet-stream"],
            body: .pattern(count: size, seed: seed))
    }

    /// What a new cache on `directory` holds for `url`: nothing, or all of the body. Then a scan
    /// leaves no temporary file and no body file that no entry names.
    static func expectNoPartialEntry(in directory: URL, url: URL, seed: UInt64, _ label: String) -> Bool {
        let cache = ResponseCache(memoryCapacity: 0, diskDirectory: directory)
        var complete = false
        if let entry = cache.entry(for: ResponseCache.httpKey(for: url)) {
            #expect(entry.head.statusCode == 200, "\(label): a stored entry is the response")
            #expect(entry.body.length == size, "\(label): a stored entry has the whole body, not \(entry.body.length) bytes")
            var offset: Int64 = 0
            var identical = true
            for piece in entry.body.chunks(size: 1 << 20) {
                if piece != PatternBody.data(offset: offset, count: piece.count, seed: seed) { identical = false }
                offset += Int64(piece.count)
            }
            #expect(identical && offset == size, "\(label): a stored entry is byte-identical")
            complete = identical && offset == size
        }
        cache.scanDisk()
        let names = StoreFiles.names(in: directory)
        #expect(names.filter { $0.hasSuffix(".tmp") }.isEmpty, "\(label): no temporary file after a scan: \(names)")
        let heads = names.filter { $0.hasSuffix(".response") }.count
        #expect(names.filter { $0.hasSuffix(".body") }.count <= heads, "\(label): no orphan body file: \(names)")
        return complete
    }

    @Test func killedWhileTheBodyArrivesOrAsItCompletesNeverLeavesAPartialEntry() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("cache-kill")
        defer { directory.remove() }
        let cacheDirectory = directory.path("cache")
        var log: [String] = []

        // 1. Killed mid-body: the server holds the second half behind a gate.
        let gate = Gate()
        let midPath = "/mid.bin"
        server.route(midPath) { _ in Self.cacheable(seed: 1).pausing(afterBytes: Self.size / 2, until: gate) }
        let midURL = server.url(midPath)
        // A held response: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let mid = try CLIProcess(["--timeout", "600", "-sS", "--cache", cacheDirectory.path, midURL.absoluteString])
        #expect(await gate.waitUntilWaiting(count: 1, timeout: .seconds(120)), "the server paused mid-body")
        // Once the HTTP cache stores responses, the half received is in a temporary file by now;
        // give the client a moment to have written it (not required for the check to hold).
        let spilled = await eventually(timeout: .seconds(60)) {
            StoreFiles.names(in: cacheDirectory).contains { $0.hasSuffix(".tmp") }
        }
        log.append("mid-body: temporary file seen before the kill: \(spilled)")
        mid.send(SIGKILL)
        let midResult = try await mid.finish(timeout: .seconds(60))
        #expect(midResult.signalled && midResult.status == SIGKILL, "\(midResult)")
        gate.open()
        try await server.waitForClientDisconnect(path: midPath, timeout: .seconds(60))
        #expect(
            !Self.expectNoPartialEntry(in: cacheDirectory, url: midURL, seed: 1, "mid-body"),
            "a body cut in half is never stored")

        // 2. Killed right after the server sent the last byte: the client may be finishing the
        // body, committing the entry, or done. Several runs land at different moments.
        for run in 1...3 {
            let path = "/end-\(run).bin"
            let seed = UInt64(10 + run)
            server.route(path) { _ in Self.cacheable(seed: seed) }
            let url = server.url(path)
            let process = try CLIProcess(["-sS", "--cache", cacheDirectory.path, url.absoluteString])
            let sent = await eventually(timeout: .seconds(60)) { server.bytesSent(path: path) >= Self.size || !process.isRunning }
            process.send(SIGKILL)
            let result = try await process.finish(timeout: .seconds(60))
            #expect(sent, "run \(run): the server sent the body")
            let complete = Self.expectNoPartialEntry(in: cacheDirectory, url: url, seed: seed, "end run \(run)")
            log.append("end run \(run): \(result.signalled ? "killed" : "had exited (\(result.status))"), entry stored: \(complete)")
        }

        // 3. An uninterrupted run stores the entry, and the next run is served from it.
        let finalPath = "/final.bin"
        server.route(finalPath) { _ in Self.cacheable(seed: 99) }
        let finalURL = server.url(finalPath)
        let final = try await runCLI(["-sS", "--cache", cacheDirectory.path, finalURL.absoluteString], timeout: .seconds(120))
        #expect(final.status == 0, "\(final.description.prefix(2000))")
        #expect(final.stdout == PatternBody.data(offset: 0, count: Int(Self.size), seed: 99), "the body printed is whole")
        let stored = Self.expectNoPartialEntry(in: cacheDirectory, url: finalURL, seed: 99, "uninterrupted")
        #expect(stored, "an uninterrupted `courier --cache` run stores the complete entry")
        if stored {
            let again = try await runCLI(["-v", "--cache", cacheDirectory.path, finalURL.absoluteString], timeout: .seconds(120))
            #expect(again.stdout == final.stdout)
            #expect(again.stderrText.contains("* cache: hit"), "\(again.stderrText.suffix(2000))")
            #expect(server.recordedRequests.filter { $0.path == finalPath }.count == 1, "the second run asked nothing")
        }
        TestEnvironment.note("[cache kill -9]\n  " + log.joined(separator: "\n  "))
    }
}
