import CourierTestServer
import CourierTestSupport
import CourierLocking
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The flags curl and HTTPie users type without thinking, against the built executable.
@Suite struct CurlHabitsTests {
    @Test func includePrintsTheResponseHeadBeforeTheBody() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/i") { _ in .text("the body").header("X-Served-By", "test") }
        let result = try await runCLI(["-i", server.url("/i").absoluteString])
        #expect(result.status == 0, "\(result)")
        let text = result.stdoutText
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(text.debugDescription)")
        #expect(text.contains("\r\nX-Served-By: test\r\n"), "\(text.debugDescription)")
        #expect(text.hasSuffix("\r\n\r\nthe body"), "\(text.debugDescription)")
    }

    /// The head as it came: fields in wire order, each repeated line (every `Set-Cookie`) apart,
    /// as curl prints it (#39).
    @Test func includePrintsTheFieldsInWireOrder() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/i") { _ in
            .text("body").header("X-Zulu", "1").header("Set-Cookie", "a=1").header("X-Alpha", "2").header("Set-Cookie", "b=2")
        }
        let result = try await runCLI(["-i", server.url("/i").absoluteString])
        #expect(result.status == 0, "\(result)")
        let lines = result.stdoutText.components(separatedBy: "\r\n").filter { $0.hasPrefix("X-") || $0.hasPrefix("Set-Cookie") }
        #expect(lines == ["X-Zulu: 1", "Set-Cookie: a=1", "X-Alpha: 2", "Set-Cookie: b=2"], "\(result)")
    }

    /// `-H` twice with one name sends two lines, in order, as curl does (#39).
    @Test func aRepeatedHeaderFlagSendsEveryLine() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/h") { _ in .text("ok") }
        let result = try await runCLI(["-H", "X-Test: a", "-H", "X-Other: o", "-H", "X-Test: b", server.url("/h").absoluteString])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.headers.values(for: "X-Test") == ["a", "b"])
        #expect(request.headers.names.filter { $0.hasPrefix("X-") } == ["X-Test", "X-Other", "X-Test"])
    }

    @Test(arguments: ["-I", "--head"])
    func headSendsHEADAndPrintsTheHead(flag: String) async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/h") { _ in .text("twelve bytes") }
        let result = try await runCLI([flag, server.url("/h").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(result)")
        #expect(result.stdoutText.contains("\r\nContent-Length: 12\r\n"), "\(result)")
        #expect(result.stdoutText.hasSuffix("\r\n\r\n"), "the head and nothing else: \(result)")
        #expect(server.recordedRequests.map(\.method) == ["HEAD"])
        let conflicting = try await runCLI([flag, "-d", "x", server.url("/h").absoluteString])
        #expect(conflicting.status == 2, "\(conflicting)")
    }

    @Test func userSendsBasicAuthorization() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/private") { _ in .text("in") }
        let result = try await runCLI(["-u", "ada:s3cr:et", server.url("/private").absoluteString])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.headers["Authorization"] == "Basic " + Data("ada:s3cr:et".utf8).base64EncodedString())
    }

    @Test func retryRetriesTransientStatusesThenGivesUpWith22() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let counter = RequestCounter()
        server.route("/flaky") { _ in counter.next() <= 2 ? .text("busy", status: 503) : .text("ok") }
        server.route("/down") { _ in .text("down", status: 503) }
        let recovered = try await runCLI(["--retry", "2", "--retry-delay", "0", server.url("/flaky").absoluteString])
        #expect(recovered.status == 0, "\(recovered)")
        #expect(recovered.stdoutText == "ok")
        #expect(server.requestCount(path: "/flaky") == 3)
        let exhausted = try await runCLI(["--retry", "1", "--retry-delay", "0", server.url("/down").absoluteString])
        #expect(exhausted.status == 22, "\(exhausted)")
        #expect(exhausted.stderrText.contains("(22) The requested URL returned error: 503"), "\(exhausted)")
        #expect(server.requestCount(path: "/down") == 2)
        let without = try await runCLI([server.url("/down").absoluteString])
        #expect(without.status == 0 && without.stdoutText == "down", "without --retry a 503 is just the answer: \(without)")
    }

    @Test func maxRedirsLimitsRedirectsAndLocationIsAccepted() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/a") { _ in .redirect(to: "/b") }
        server.route("/b") { _ in .redirect(to: "/c") }
        server.route("/c") { _ in .text("arrived") }
        let followed = try await runCLI(["-L", "--max-redirs", "2", server.url("/a").absoluteString])
        #expect(followed.status == 0 && followed.stdoutText == "arrived", "\(followed)")
        let stopped = try await runCLI(["-L", "--max-redirs", "1", server.url("/a").absoluteString])
        #expect(stopped.status == 47, "curl's too-many-redirects code: \(stopped)")
        #expect(stopped.stderrText.hasPrefix("courier: (47) Too many redirects: "), "\(stopped)")
    }

    @Test func headersFromAFileAndCompressedIsAccepted() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("headers")
        defer { directory.remove() }
        let file = directory.path("headers.txt")
        try "# sent with every call\nX-Team: edge\n\nX-Token: abc\n".write(to: file, atomically: true, encoding: .utf8)
        server.route("/h") { _ in .text("ok") }
        let result = try await runCLI(["--compressed", "-H", "@\(file.path)", "-H", "X-One: 1", server.url("/h").absoluteString])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.headers["X-Team"] == "edge")
        #expect(request.headers["X-Token"] == "abc")
        #expect(request.headers["X-One"] == "1")
        #expect(request.headers["Accept-Encoding"]?.contains("gzip") == true, "--compressed asks for compression")
    }

    @Test(arguments: ["curl", "urlsession"])
    func writeOutReportsTheTransfer(transport: String) async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/old") { _ in .redirect(to: "/new") }
        server.route("/new") { _ in .text("arrived") }
        let format = "%{http_code}|%{size_download}|%{content_type}|%{num_redirects}|%{url_effective}|%{time_total}\\n"
        let result = try await runCLI(["--transport", transport, "-sL", "-o", "/dev/null", "-w", format, server.url("/old").absoluteString])
        #expect(result.status == 0, "\(result)")
        let fields = result.stdoutText.split(separator: "|")
        try #require(fields.count == 6, "\(result.stdoutText.debugDescription)")
        #expect(fields[0] == "200")
        #expect(fields[1] == "7")
        #expect(fields[2].hasPrefix("text/plain"))
        #expect(fields[3] == "1")
        #expect(fields[4] == server.url("/new").absoluteString)
        #expect(Double(fields[5].dropLast()).map { $0 > 0 && $0 < 60 } == true, "\(fields[5])")
        #expect(result.stdoutText.hasSuffix("\n"))
        let failed = try await runCLI(["-s", "-w", "%{http_code}", "http://127.0.0.1:\(try ClosedPort().port)/"])
        #expect(failed.status == 7 && failed.stdoutText == "000", "\(failed)")
    }

    @Test func httpieItemsBuildAJSONBodyQueryAndHeaders() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/users") { request in .echo(request) }
        let result = try await runCLI([
            "POST", server.url("/users").absoluteString, "nick=ada", "level:=7", #"tags:=["a","b"]"#,
            "dry==1", "X-Trace:42",
        ])
        #expect(result.status == 0, "\(result)")
        let request = try await server.takeRequest()
        #expect(request.method == "POST")
        #expect(request.bodyText == #"{"nick":"ada","level":7,"tags":["a","b"]}"#)
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.query["dry"] == "1")
        #expect(request.headers["X-Trace"] == "42")
        let implied = try await runCLI([server.url("/users").absoluteString, "nick=bob"])
        #expect(implied.status == 0, "\(implied)")
        #expect(try await server.takeRequest().method == "POST", "a body implies POST")
        let bad = try await runCLI([server.url("/users").absoluteString, "n:={oops"])
        #expect(bad.status == 2 && bad.stderrText.contains("needs JSON"), "\(bad)")
    }

    @Test func acceptLanguageFollowsTheLocale() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/l") { _ in .text("ok") }
        let clear = ["LC_ALL": "", "LC_MESSAGES": "", "LANGUAGE": ""]
        let german = try await runCLI([server.url("/l").absoluteString], environment: clear.merging(["LANG": "de_DE.UTF-8"]) { $1 })
        #expect(german.status == 0, "\(german)")
        let plain = try await runCLI([server.url("/l").absoluteString], environment: clear.merging(["LANG": "C.UTF-8"]) { $1 })
        #expect(plain.status == 0, "\(plain)")
        let requests = server.recordedRequests
        try #require(requests.count == 2)
        #expect(requests[0].headers["Accept-Language"] == "de-DE")
        #expect(requests[1].headers["Accept-Language"] == nil, "the C locale names no language: \(requests[1].headers)")
    }

    @Test func outputFilesGet0644MinusTheUmask() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("mode")
        defer { directory.remove() }
        server.route("/f.bin", Resource(pattern: 10_000, seed: 3))
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        for (umask, expected) in [("022", 0o644), ("027", 0o640), ("077", 0o600)] {
            let output = directory.path("f-\(umask).bin")
            let command =
                "umask \(umask); exec "
                + [executable.path, "-o", output.path, server.url("/f.bin").absoluteString]
                .map(shellQuoted).joined(separator: " ")
            let result = try await CLIProcess(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", command]).finish()
            #expect(result.status == 0, "\(result)")
            let mode = try FileManager.default.attributesOfItem(atPath: output.path)[.posixPermissions] as? Int
            #expect(mode == expected, "umask \(umask): \(String(mode ?? 0, radix: 8))")
        }
        let uploaded = directory.path("u.bin")
        server.route("/u", method: .post) { _ in .text("echo") }
        let command =
            "umask 022; exec "
            + [executable.path, "-d", "x", "-o", uploaded.path, server.url("/u").absoluteString]
            .map(shellQuoted).joined(separator: " ")
        let result = try await CLIProcess(executable: URL(fileURLWithPath: "/bin/sh"), ["-c", command]).finish()
        #expect(result.status == 0, "\(result)")
        #expect(try FileManager.default.attributesOfItem(atPath: uploaded.path)[.posixPermissions] as? Int == 0o644)
    }

    @Test func remoteNameWritesTheURLsFileName() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("remote-name")
        defer { directory.remove() }
        server.route("/files/report.bin", Resource(pattern: 50_000, seed: 4))
        let result = try await runCLI(["-O", server.url("/files/report.bin").absoluteString], currentDirectory: directory.url)
        #expect(result.status == 0, "\(result)")
        #expect(try PatternFile.firstMismatch(directory.path("report.bin"), count: 50_000, seed: 4) == nil)
    }

    @Test func completionScriptsAreValidForEachShell() async throws {
        for shell in ["bash", "zsh", "fish"] {
            let script = try await runCLI(["--generate-completion-script", shell])
            #expect(script.status == 0, "\(script)")
            #expect(script.stdoutText.contains("max-redirs") && script.stdoutText.contains("write-out"), "\(shell)")
            guard let checker = Self.executable(named: shell) else {
                SkipNotice.skipped("the \(shell) completion syntax check", because: "\(shell) is not installed", run: "install \(shell)")
                continue
            }
            let directory = try TemporaryDirectory("completion")
            defer { directory.remove() }
            let file = directory.path("courier.\(shell)")
            try script.stdout.write(to: file)
            let check = try await CLIProcess(executable: checker, ["-n", file.path]).finish()
            #expect(check.status == 0, "\(shell) -n rejects the script: \(check)")
        }
        let unknown = try await runCLI(["--generate-completion-script", "tcsh"])
        #expect(unknown.status == 2, "\(unknown)")
    }

    /// A shell on PATH, or nil.
    static func executable(named name: String) -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { URL(fileURLWithPath: String($0)).appendingPathComponent(name) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }
}

/// Counts requests across the server's threads.
final class RequestCounter: Sendable {
    private let count = Locked(0)

    /// The number of this request, from 1.
    func next() -> Int {
        count.withLock { count in
            count += 1
            return count
        }
    }
}
