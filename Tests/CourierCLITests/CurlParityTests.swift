import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The behaviours issue 42 brought in line with curl, each against CourierTestServer (the
/// side-by-side suite checks them against the curl CLI too): compression only when asked, no
/// request head for a connection never made, `-C -` with a server that ignores ranges, a partial
/// file continued with `If-Range`, and several URLs in one call.
@Suite struct CurlParityTests {
    static let text = String(repeating: "courier parity line\n", count: 200)

    @Test(arguments: ["curl", "urlsession"])
    func bodiesComeAsSentUnlessCompressedIsGiven(transport: String) async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/gz") { _ in MockResponse.text(Self.text).gzip() }
        let raw = try await runCLI(["--transport", transport, "-s", server.url("/gz").absoluteString])
        #expect(raw.status == 0, "\(raw)")
        if transport == "curl" {
            #expect(raw.stdout.starts(with: [0x1F, 0x8B]), "the gzip stream as the server sent it: \(raw.stdout.prefix(8).map { $0 })")
        } else {
            // FoundationNetworking decodes whatever it gets, asked or not (docs/curl-compatibility.md says so).
            #expect(raw.stdoutText == Self.text)
        }
        let asked = try await server.takeRequest().headers["Accept-Encoding"]
        #expect(asked == nil || asked == "identity", "nothing asked for: \(asked ?? "-")")
        let decoded = try await runCLI(["--transport", transport, "-s", "--compressed", server.url("/gz").absoluteString])
        #expect(decoded.status == 0, "\(decoded)")
        #expect(decoded.stdoutText == Self.text)
        #expect(try await server.takeRequest().headers["Accept-Encoding"]?.contains("gzip") == true)
    }

    @Test(arguments: ["curl", "urlsession"])
    func verbosePrintsNoRequestForAConnectionNeverMade(transport: String) async throws {
        let port = try ClosedPort().port
        let result = try await runCLI(["--transport", transport, "-v", "http://127.0.0.1:\(port)/"])
        #expect(result.status == 7, "\(result)")
        #expect(!result.stderrText.contains("> GET"), "no request went out: \(result.stderrText)")
        if transport == "curl" {
            #expect(result.stderrText.contains("*   Trying 127.0.0.1:\(port)..."), "libcurl's connect line: \(result.stderrText)")
        }
    }

    @Test func verboseShowsTheTLSAndALPNLinesCurlUsersRead() async throws {
        guard let url = ProcessInfo.processInfo.environment["COURIER_NGINX_HTTPS_URL"],
            let ca = ProcessInfo.processInfo.environment["COURIER_TEST_CA_FILE"]
        else {
            SkipNotice.skipped(
                "courier -v's TLS lines against nginx", because: "COURIER_NGINX_HTTPS_URL is not set", run: InteropEnvironment.command)
            return
        }
        let result = try await runCLI(["-sv", "--cacert", ca, url + "/small.json"])
        #expect(result.status == 0, "\(result)")
        for line in [
            "* Connected to 127.0.0.1", "* ALPN: server accepted h2", "* SSL connection using TLSv1.3", "> GET /small.json HTTP/2", "< HTTP/2 200",
        ] {
            #expect(result.stderrText.contains(line), "\(line): \(result.stderrText)")
        }
    }

    @Test func continuingAgainstAServerThatIgnoresRangesExits33AndKeepsThePartial() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("norange")
        defer { directory.remove() }
        server.route("/norange.bin", Resource(pattern: 300_000, seed: 61, etag: "\"n\"", ignoresRange: true))
        let gate = Gate()
        server.route("/held.bin", Resource(pattern: 2 << 20, seed: 62, etag: "\"h\"").pausing(afterBytes: 512 << 10, until: gate))
        let store = directory.path("store").path

        // A partial -o file (curl's): the server answers the whole file.
        let output = directory.path("partial.bin")
        try Data(repeating: 1, count: 1000).write(to: output)
        let file = try await runCLI(["-C", "-", "-o", output.path, "--store", store, server.url("/norange.bin").absoluteString])
        #expect(file.status == 33, "\(file)")
        #expect(file.stderrText.contains("(33) HTTP server doesn't seem to support byte ranges. Cannot resume."), "\(file)")
        #expect(try Data(contentsOf: output) == Data(repeating: 1, count: 1000), "nothing overwritten")

        // A partial in the store: the server now ignores ranges.
        let held = directory.path("held.bin")
        let first = try CLIProcess(["-C", "-", "-o", held.path, "--store", store, server.url("/held.bin").absoluteString])
        #expect(await eventually(timeout: .seconds(120)) { StoreFiles.partSize(in: directory.path("store")) >= 512 << 10 })
        first.send(SIGINT)
        #expect(try await first.finish(timeout: .seconds(120)).status == 130)
        try await server.waitForClientDisconnect(path: "/held.bin")
        server.replace(Resource(pattern: 2 << 20, seed: 62, etag: "\"h\"", ignoresRange: true), at: "/held.bin")
        let second = try await runCLI(["-C", "-", "-o", held.path, "--store", store, server.url("/held.bin").absoluteString])
        #expect(second.status == 33, "\(second)")
        #expect(StoreFiles.partSize(in: directory.path("store")) >= 512 << 10, "the partial is kept")
        #expect(!FileManager.default.fileExists(atPath: held.path))
        gate.open()
    }

    @Test func aPartialFileIsContinuedOnlyWhenIfRangeProvesItsVersion() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("adopt")
        defer { directory.remove() }
        let size: Int64 = 400_000
        let modified = Date(timeIntervalSince1970: 1_700_000_000)
        server.route("/file.bin", Resource(pattern: size, seed: 63, lastModified: modified))
        let store = directory.path("store").path
        let whole = PatternBody.data(offset: 0, count: Int(size), seed: 63)

        // Saved with the server's Last-Modified (curl -R): the rest is appended.
        let kept = directory.path("kept.bin")
        try whole.prefix(100_000).write(to: kept)
        try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: kept.path)
        let continued = try await runCLI(["-C", "-", "-o", kept.path, "--store", store, server.url("/file.bin").absoluteString])
        #expect(continued.status == 0, "\(continued)")
        #expect(try Data(contentsOf: kept) == whole)
        let request = try #require(server.recordedRequests.last)
        #expect(request.headers["Range"] == "bytes=100000-")
        #expect(request.headers["If-Range"] == "Tue, 14 Nov 2023 22:13:20 GMT", "the file's time as the validator")
        #expect(server.bytesSent(path: "/file.bin") == size - 100_000, "only the rest was sent")

        // A partial of unknown version: fetched whole, never stitched.
        let stranger = directory.path("stranger.bin")
        try Data(repeating: 9, count: 100_000).write(to: stranger)
        let refetched = try await runCLI(["-C", "-", "-o", stranger.path, "--store", store, server.url("/file.bin").absoluteString])
        #expect(refetched.status == 0, "\(refetched)")
        #expect(try Data(contentsOf: stranger) == whole, "the bytes of another version are replaced, not continued")

        // Complete and proven: nothing is downloaded.
        let before = server.bytesSent(path: "/file.bin")
        let again = try await runCLI(["-C", "-", "-o", stranger.path, "--store", store, server.url("/file.bin").absoluteString])
        #expect(again.status == 0, "\(again)")
        #expect(again.stderrText.contains("already complete"), "\(again)")
        #expect(server.bytesSent(path: "/file.bin") == before)
    }

    @Test func severalURLsEachWithItsOutputInTurnOrAtOnce() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("multi")
        defer { directory.remove() }
        server.route("/a.bin", Resource(pattern: 300_000, seed: 64))
        server.route("/b.bin", Resource(pattern: 200_000, seed: 65))
        server.route("/c") { _ in .text("to stdout") }
        for parallel in [false, true] {
            let arguments =
                (parallel ? ["-Z", "--parallel-max", "2"] : [])
                + [
                    "-s", "-O", server.url("/a.bin").absoluteString, "-o", "b.out", server.url("/b.bin").absoluteString,
                    server.url("/c").absoluteString,
                ]
            let result = try await runCLI(arguments, currentDirectory: directory.url)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutText == "to stdout")
            #expect(try PatternFile.firstMismatch(directory.path("a.bin"), count: 300_000, seed: 64) == nil)
            #expect(try PatternFile.firstMismatch(directory.path("b.out"), count: 200_000, seed: 65) == nil)
            try FileManager.default.removeItem(at: directory.path("a.bin"))
            try FileManager.default.removeItem(at: directory.path("b.out"))
        }
        let failed = try await runCLI(["-s", server.url("/c").absoluteString, "http://127.0.0.1:\(try ClosedPort().port)/"])
        #expect(failed.status == 7, "the last transfer's status, as curl: \(failed)")
        #expect(failed.stdoutText == "to stdout")
    }
}
