import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Exit statuses, usage errors and help, as a script would see them.
@Suite struct ExitCodeTests {
    @Test func failTurnsAnErrorStatusIntoExitCode5AndPrintsNoBody() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/missing") { _ in .json(#"{"error":"not here"}"#, status: 404) }
        let failing = try await runCLI(["--fail", server.url("/missing").absoluteString])
        #expect(failing.status == 5, "\(failing)")
        #expect(failing.stdout.isEmpty)
        #expect(failing.stderrText.contains("404 Not Found"))
        let lenient = try await runCLI([server.url("/missing").absoluteString])
        #expect(lenient.status == 0, "\(lenient)")
        #expect(lenient.stdoutText == #"{"error":"not here"}"#, "without --fail the body is still printed")
    }

    @Test func failWithAnUploadAndWithADownload() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("fail")
        defer { directory.remove() }
        server.route("/denied") { _ in .text("no", status: 403) }
        let upload = try await runCLI(["--fail", "-d", "x", server.url("/denied").absoluteString])
        #expect(upload.status == 5, "\(upload)")
        let output = directory.path("out.bin")
        let download = try await runCLI(["--fail", "-o", output.path, server.url("/denied").absoluteString])
        #expect(download.status == 5, "\(download)")
        #expect(!FileManager.default.fileExists(atPath: output.path), "a failed download writes no file")
        let saved = try await runCLI(["-o", output.path, server.url("/denied").absoluteString])
        #expect(saved.status == 0, "\(saved)")
        #expect(try Data(contentsOf: output) == Data("no".utf8))
        #expect(saved.stderrText.contains("warning: the server answered 403 Forbidden"))
    }

    @Test(arguments: [
        (["--bogus", "http://127.0.0.1:1/"], "unknown option '--bogus'"),
        ([String](), "missing URL"),
        (["-v", "-o", "x"], "missing URL"),
        (["-H", "NoColonHere", "http://127.0.0.1:1/"], "bad header 'NoColonHere'"),
        (["-d", "a=1", "--json", "{}", "http://127.0.0.1:1/"], "-d and --json cannot be used together"),
        (["--json", "{not json", "http://127.0.0.1:1/"], "--json: not valid JSON"),
        (["ftp://example.com/file"], "invalid URL"),
        (["help", "nonsense"], "no command 'nonsense'"),
        (["demo", "extra"], "unexpected argument 'extra'"),
        (["--cacert", "/nonexistent/courier-ca.pem", "https://127.0.0.1:1/"], "--cacert: cannot read /nonexistent/courier-ca.pem: no such file"),
        (["--capath", "/nonexistent/courier-ca-dir", "https://127.0.0.1:1/"], "--capath: /nonexistent/courier-ca-dir: no such directory"),
        (["--cert", "/nonexistent/client.pem:pw", "https://127.0.0.1:1/"], "--cert: cannot read /nonexistent/client.pem: no such file"),
        (["--pinnedpubkey", "sha256/AAAA", "https://127.0.0.1:1/"], "is not a pin (expected sha256//BASE64"),
        (["--http1.1", "--http2-prior-knowledge", "http://127.0.0.1:1/"], "cannot be used together"),
        (["--http2", "http://127.0.0.1:1/"], "--http2 needs an https:// URL"),
    ])
    func usageErrorsExit2WithAMessageAndAHint(arguments: [String], message: String) async throws {
        let result = try await runCLI(arguments)
        #expect(result.status == 2, "\(result)")
        let lines = result.stderrText.split(separator: "\n")
        #expect(lines.count == 2, "one line of message and one of hint: \(result.stderrText)")
        #expect(lines.first?.hasPrefix("courier: ") == true)
        #expect(lines.first?.contains(message) == true, "\(result.stderrText)")
        #expect(lines.last?.contains("--help") == true || lines.last?.contains("courier help") == true)
        #expect(result.stdout.isEmpty)
    }

    @Test func connectionRefusedExits3() async throws {
        let port = try ClosedPort()
        let result = try await runCLI(["http://127.0.0.1:\(port.port)/x"])
        #expect(result.status == 3, "\(result)")
        #expect(result.stderrText.contains("cannotConnect"))
    }

    @Test func insecureWarnsEveryTime() async throws {
        let port = try ClosedPort()
        for _ in 0..<2 {
            let result = try await runCLI(["-k", "https://127.0.0.1:\(port.port)/x"])
            #expect(result.status == 3, "\(result)")
            #expect(result.stderrText.hasPrefix("courier: warning: --insecure: the server's certificate is not checked\n"), "\(result)")
        }
    }

    @Test func anOptionTheTransportCannotHonourExits2() async throws {
        let port = try ClosedPort()
        for option in ["--tlsv1.3", "--http1.1", "-k"] {
            let result = try await runCLI(["--transport", "urlsession", option, "https://127.0.0.1:\(port.port)/x"])
            #expect(result.status == 2, "\(option): \(result)")
            #expect(result.stderrText.contains("courier: invalidConfiguration: The URLSession transport cannot"), "\(option): \(result)")
        }
    }

    @Test func idleTimeoutExits4() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.route("/held") { _ in .ok("late").waiting(for: gate) }
        // The response is held until the process has exited, so only the timeout can have ended it.
        let result = try await runCLI(["--timeout", "0.2", server.url("/held").absoluteString], timeout: .seconds(60))
        gate.open()
        #expect(result.status == 4, "\(result)")
        #expect(result.stderrText.contains("timedOut"))
    }

    @Test func outputIntoAMissingDirectoryExits6() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/f") { _ in .ok("data") }
        let directory = try TemporaryDirectory("missing")
        defer { directory.remove() }
        let target = directory.path("no/such/dir/out.bin").path
        let result = try await runCLI(["-o", target, server.url("/f").absoluteString])
        #expect(result.status == 6, "\(result)")
        #expect(result.stderrText.contains("does not exist"))
        #expect(server.requestCount == 0, "the file-system problem is found before any request")
    }

    @Test func unreadableUploadFileExits6() async throws {
        let result = try await runCLI(["-d", "@/nonexistent/courier-test-file", "http://127.0.0.1:1/"])
        #expect(result.status == 6, "\(result)")
        #expect(result.stderrText.contains("no such file"))
        let form = try await runCLI(["-F", "f=@/nonexistent/courier-test-file", "http://127.0.0.1:1/"])
        #expect(form.status == 6, "\(form)")
    }

    @Test(arguments: [
        (["--help"], "Usage:"), (["-h"], "Usage:"), (["help"], "Usage:"),
        (["help", "fetch"], "Usage: courier [METHOD] URL"), (["fetch", "--help"], "Usage: courier [METHOD] URL"),
        (["http://example.com/", "--help"], "Usage: courier [METHOD] URL"),
        (["help", "demo"], "Usage: courier demo"), (["demo", "--help"], "Usage: courier demo"),
        (["help", "help"], "Usage: courier help"), (["help", "--help"], "Usage: courier help"),
        (["--version"], "courier 0.1"),
    ])
    func helpExits0(arguments: [String], expected: String) async throws {
        let result = try await runCLI(arguments)
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText.contains(expected), "\(result.stdoutText)")
        #expect(result.stderr.isEmpty)
    }

    @Test func helpDocumentsEveryExitCode() async throws {
        let result = try await runCLI(["--help"])
        for code in ["0 ", "1 ", "2 ", "3 ", "4 ", "5 ", "6 ", "130 "] {
            #expect(result.stdoutText.contains("\n  \(code)"), "exit code \(code) is documented")
        }
    }
}
