import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// `courier --cache DIR`: what `-v` says the cache did, run after run, and what reached the server.
@Suite struct CacheCLITests {
    @Test func verboseSaysMissHitAndRevalidated() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        server.route("/fresh") { _ in MockResponse.text("fresh body").header("Cache-Control", "max-age=600") }
        server.route("/checked") { request in
            if request.headers["If-None-Match"] == "\"c\"" { return MockResponse.status(304).header("ETag", "\"c\"") }
            return MockResponse.text("checked body").header("Cache-Control", "no-cache").header("ETag", "\"c\"")
        }
        func run(_ path: String) async throws -> (stdout: String, stderr: String) {
            let result = try await runCLI(["-v", "--cache", directory.path, server.url(path).absoluteString])
            #expect(result.status == 0, "\(result.description.prefix(2000))")
            return (String(decoding: result.stdout, as: UTF8.self), result.stderrText)
        }
        let first = try await run("/fresh")
        #expect(first.stdout == "fresh body")
        #expect(first.stderr.contains("* cache: miss (network)"), "\(first.stderr)")
        let second = try await run("/fresh")
        #expect(second.stdout == "fresh body")
        #expect(second.stderr.contains("* cache: hit\n"), "\(second.stderr)")
        #expect(server.requestCount(path: "/fresh") == 1)

        _ = try await run("/checked")
        let revalidated = try await run("/checked")
        #expect(revalidated.stdout == "checked body")
        #expect(revalidated.stderr.contains("* cache: revalidated (304)"), "\(revalidated.stderr)")
        #expect(server.recordedRequests.filter { $0.path == "/checked" }.map { $0.headers["If-None-Match"] } == [nil, "\"c\""])
    }
}
