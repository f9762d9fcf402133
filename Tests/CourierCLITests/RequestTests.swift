import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// GET, POST, headers and bodies round trips: the built executable against CourierTestServer,
/// checked by what the server recorded.
@Suite struct RequestTests {
    @Test func getSendsHeadersAndPrintsTheRawBodyWhenPiped() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let body = #"{"greeting":"hello","n":[1,2]}"#
        server.route("/greet") { _ in .json(body) }
        let result = try await runCLI(["-H", "X-Token: abc", "-H", "Accept: application/json", server.url("/greet?lang=en").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == body, "piped output must be the raw bytes")
        let request = try await server.takeRequest()
        #expect(request.method == "GET")
        #expect(request.path == "/greet")
        #expect(request.query["lang"] == "en")
        #expect(request.headers["X-Token"] == "abc")
        #expect(request.headers["Accept"] == "application/json")
        #expect(request.headers["User-Agent"]?.hasPrefix("courier/") == true)
        #expect(request.body.isEmpty)
    }

    @Test func dataImpliesPostWithAFormContentType() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/form") { request in .text("got \(request.bodySize) bytes", status: 201) }
        let result = try await runCLI(["-d", "a=1&b=two", server.url("/form").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "got 9 bytes")
        let request = try await server.takeRequest()
        #expect(request.method == "POST")
        #expect(request.bodyText == "a=1&b=two")
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test func jsonBodyWithAnExplicitMethod() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/users/42") { request in .echo(request) }
        let json = #"{"nick":"ada","level":7}"#
        let result = try await runCLI(["PUT", server.url("/users/42").absoluteString, "--json", json])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.method == "PUT")
        #expect(request.bodyText == json)
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.headers["Accept"] == "application/json")
        #expect(result.stdoutText.contains(#""method":"PUT""#), "the echo is printed raw: \(result.stdoutText)")
    }

    @Test func methodOptionAndUserContentTypeWin() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/items/1") { _ in .status(204) }
        let deleted = try await runCLI(["-X", "DELETE", server.url("/items/1").absoluteString])
        #expect(deleted.status == 0, "\(deleted)")
        #expect(deleted.stdout.isEmpty)
        let typed = try await runCLI(["-H", "Content-Type: text/plain", "-d", "hi", server.url("/items/1").absoluteString])
        #expect(typed.status == 0, "\(typed)")
        let requests = server.recordedRequests
        #expect(requests.map(\.method) == ["DELETE", "POST"])
        #expect(requests.last?.headers.values(for: "Content-Type") == ["text/plain"])
    }

    @Test func dataFromAFileIsStreamedByteExact() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("upload")
        defer { directory.remove() }
        let size: Int64 = 5_000_000
        let file = directory.path("payload.bin")
        try PatternFile.write(file, count: size, seed: 11)
        server.route("/upload", method: .post) { request in .text("\(request.bodySize)") }
        let result = try await runCLI(["--data-binary", "@\(file.path)", server.url("/upload").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "\(size)")
        let request = try await server.takeRequest()
        #expect(request.method == "POST")
        #expect(request.bodySize == size)
        #expect(request.headers["Content-Type"] == "application/x-www-form-urlencoded", "curl's label for every data option")
        #expect(PatternFile.firstMismatch(in: request.body, range: 0..<Int(size), patternOffset: 0, seed: 11) == nil)
    }

    @Test func multipartFormWithAFilePart() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("form")
        defer { directory.remove() }
        let size: Int64 = 300_000
        let file = directory.path("photo.bin")
        try PatternFile.write(file, count: size, seed: 12)
        server.route("/photos") { _ in .status(201) }
        let result = try await runCLI([
            "-F", "title=Holiday at the sea", "-F", "photo=@\(file.path);type=image/x-test",
            server.url("/photos").absoluteString,
        ])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.method == "POST")
        let boundary = try #require(Multipart.boundary(of: request.headers["Content-Type"]))
        #expect(request.headers["Content-Type"]?.hasPrefix("multipart/form-data") == true)
        let parts = try #require(Multipart.parts(of: request.body, boundary: boundary))
        try #require(parts.count == 2)
        #expect(parts[0].headers.contains(#"name="title""#))
        #expect(String(decoding: request.body[parts[0].content], as: UTF8.self) == "Holiday at the sea")
        #expect(parts[1].headers.contains(#"name="photo"; filename="photo.bin""#))
        #expect(parts[1].headers.contains("Content-Type: image/x-test"))
        #expect(parts[1].content.count == Int(size))
        #expect(PatternFile.firstMismatch(in: request.body, range: parts[1].content, patternOffset: 0, seed: 12) == nil)
    }

    @Test func redirectsAreFollowedOnlyWithLocation() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/old") { _ in .redirect(to: "/new") }
        server.route("/new") { _ in .text("arrived") }
        let followed = try await runCLI(["-L", server.url("/old").absoluteString])
        #expect(followed.status == 0, "\(followed)")
        #expect(followed.stdoutText == "arrived")
        let stopped = try await runCLI(["-v", server.url("/old").absoluteString])
        #expect(stopped.status == 0, "\(stopped)")
        #expect(stopped.stdout.isEmpty, "the 302 is the answer, as with curl")
        #expect(stopped.stderrText.contains("< HTTP/1.1 302 Found"))
        #expect(server.requestCount(path: "/new") == 1, "only -L went on to /new")
        let head = try await runCLI(["-I", server.url("/old").absoluteString])
        #expect(head.stdoutText.components(separatedBy: "HTTP/1.1 ").count == 2, "-I without -L prints one head: \(head)")
    }

    @Test func verbosePrintsHeadsAndMetricsWithPeakMemory() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/v") { _ in .text("ok").header("X-Served-By", "test") }
        let result = try await runCLI(["-v", "-H", "X-Req: 1", server.url("/v").absoluteString])
        #expect(result.status == 0, "\(result)")
        let stderr = result.stderrText
        let port = try #require(server.url("/v").port)
        #expect(stderr.hasPrefix("*   Trying 127.0.0.1:\(port)...\n* Connected to 127.0.0.1"), "libcurl's connect lines first: \(stderr)")
        #expect(stderr.contains("\n> GET /v HTTP/1.1\n> Host: 127.0.0.1:\(port)\n"), "the request line as sent, then Host: \(stderr)")
        #expect(stderr.contains("\n> Accept: */*\n"), "\(stderr)")
        #expect(stderr.contains("\n> User-Agent: courier/"), "\(stderr)")
        #expect(stderr.contains("> X-Req: 1"))
        #expect(stderr.contains("\n>\n< HTTP/1.1 200 OK\n"), "the response's status line with its version: \(stderr)")
        #expect(stderr.contains("< X-Served-By: test"))
        #expect(stderr.contains("* metrics: transport="))
        #expect(stderr.contains("\n* HTTP/1.1\n"), "the protocol line, without TLS in the clear: \(stderr)")
        #expect(try CLIOutput.peakRSSKiB(stderr) ?? 0 > 0, "\(stderr)")
        #expect(result.stdoutText == "ok")
    }

    @Test(arguments: ["curl", "urlsession"])
    func bothTransports(transport: String) async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/t") { request in .text("via \(request.method)") }
        let result = try await runCLI(["--transport", transport, "-v", server.url("/t").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "via GET")
        #expect(result.stderrText.contains("transport=\(transport == "curl" ? "curl" : "urlSession")"))
    }
}

/// Figures `courier` prints, parsed back.
enum CLIOutput {
    /// The `VmHWM <n> kB` figure of the `-v` metrics line.
    static func peakRSSKiB(_ stderr: String) throws -> Int64? {
        guard let range = stderr.range(of: #"VmHWM (\d+) kB"#, options: .regularExpression) else { return nil }
        return Int64(stderr[range].split(separator: " ")[1])
    }

    /// N from `resumed N bytes from the download store`, 0 from `nothing to resume` or `nothing
    /// resumed`, nil otherwise.
    static func resumedBytes(_ stderr: String) -> Int64? {
        if stderr.contains("nothing to resume") || stderr.contains("nothing resumed") { return 0 }
        guard let range = stderr.range(of: #"resumed \d+ bytes"#, options: .regularExpression) else { return nil }
        return Int64(stderr[range].split(separator: " ")[1])
    }
}
