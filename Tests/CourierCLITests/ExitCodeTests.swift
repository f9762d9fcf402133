@testable import courier
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// Exit statuses, usage errors and help, as a script would see them.
@Suite struct ExitCodeTests {
    @Test func failTurnsAnErrorStatusIntoExitCode22AndPrintsNoBody() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/missing") { _ in .json(#"{"error":"not here"}"#, status: 404) }
        let failing = try await runCLI(["--fail", server.url("/missing").absoluteString])
        #expect(failing.status == 22, "curl's code for --fail: \(failing)")
        #expect(failing.stdout.isEmpty)
        #expect(failing.stderrText == "courier: (22) The requested URL returned error: 404 Not Found\n", "\(failing)")
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
        #expect(upload.status == 22, "\(upload)")
        let output = directory.path("out.bin")
        let download = try await runCLI(["--fail", "-o", output.path, server.url("/denied").absoluteString])
        #expect(download.status == 22, "\(download)")
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
        (["help", "nonsense"], "no command 'nonsense'"),
        (["demo", "extra"], "unexpected argument 'extra'"),
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

    /// Problems found before the request keep curl's codes and its `courier: (N) message` form, without a usage hint.
    @Test(arguments: [
        (
            ["--cacert", "/nonexistent/courier-ca.pem", "https://127.0.0.1:1/"], Int32(77),
            "courier: (77) --cacert: cannot read /nonexistent/courier-ca.pem: no such file"
        ),
        (
            ["--capath", "/nonexistent/courier-ca-dir", "https://127.0.0.1:1/"], 77,
            "courier: (77) --capath: /nonexistent/courier-ca-dir: no such directory"
        ),
        (
            ["--cert", "/nonexistent/client.pem:pw", "https://127.0.0.1:1/"], 58,
            "courier: (58) --cert: cannot read /nonexistent/client.pem: no such file"
        ),
        (["ftp://example.com/file"], 1, #"courier: (1) Protocol "ftp" not supported"#),
        (["htp://example.com/file"], 1, #"courier: (1) Protocol "htp" not supported"#),
        (["htps:/example.com/file"], 1, #"courier: (1) Protocol "htps" not supported"#),
        (["http://"], 3, "courier: (3) URL rejected: 'http://' is not a valid URL"),
        (["-O", "http://127.0.0.1:1/"], 23, "courier: (23) Remote file name has no length"),
        (
            ["-H", "@/nonexistent/courier-headers", "http://127.0.0.1:1/"], 26,
            "courier: (26) Failed to read the header file /nonexistent/courier-headers: cannot read /nonexistent/courier-headers: no such file"
        ),
    ])
    func problemsBeforeTheRequestUseCurlsCodes(arguments: [String], status: Int32, message: String) async throws {
        let result = try await runCLI(arguments)
        #expect(result.status == status, "\(result)")
        let lines = result.stderrText.split(separator: "\n")
        #expect(lines.count == 1, "one line, no usage hint: \(result.stderrText)")
        #expect(lines.first?.hasPrefix(message) == true, "\(result.stderrText)")
        #expect(result.stdout.isEmpty)
    }

    @Test(arguments: ["curl", "urlsession"])
    func connectionRefusedExits7WithCurlsSentence(transport: String) async throws {
        let port = try ClosedPort()
        let result = try await runCLI(["--transport", transport, "http://127.0.0.1:\(port.port)/x"])
        #expect(result.status == 7, "\(result)")
        #expect(
            result.stderrText == "courier: (7) Failed to connect to 127.0.0.1 port \(port.port): "
                + "the connection was refused or the host is unreachable\n", "\(result)")
        let verbose = try await runCLI(["-v", "--transport", transport, "http://127.0.0.1:\(port.port)/x"])
        #expect(verbose.status == 7, "\(verbose)")
        #expect(verbose.stderrText.contains("\ncourier: details: cannotConnect: "), "the transport's own words only with -v: \(verbose)")
    }

    @Test(arguments: ["curl", "urlsession"])
    func unknownHostExits6WithCurlsSentence(transport: String) async throws {
        let result = try await runCLI(["--transport", transport, "http://courier-test.invalid/x"])
        #expect(result.status == 6, "\(result)")
        #expect(result.stderrText == "courier: (6) Could not resolve host: courier-test.invalid\n", "\(result)")
    }

    @Test func silentHidesErrorsAndShowErrorBringsThemBack() async throws {
        let port = try ClosedPort()
        let url = "http://127.0.0.1:\(port.port)/x"
        let silent = try await runCLI(["-s", url])
        #expect(silent.status == 7, "\(silent)")
        #expect(silent.stderr.isEmpty, "\(silent)")
        let shown = try await runCLI(["-sS", url])
        #expect(shown.status == 7, "\(shown)")
        #expect(shown.stderrText.hasPrefix("courier: (7) Failed to connect"), "\(shown)")
    }

    @Test func insecureWarnsEveryTime() async throws {
        let port = try ClosedPort()
        for _ in 0..<2 {
            let result = try await runCLI(["-k", "https://127.0.0.1:\(port.port)/x"])
            #expect(result.status == 7, "\(result)")
            #expect(result.stderrText.hasPrefix("courier: warning: --insecure: the server's certificate is not checked\n"), "\(result)")
        }
    }

    @Test func anOptionTheTransportCannotHonourExits2() async throws {
        let port = try ClosedPort()
        for option in ["--tlsv1.3", "--http1.1", "-k"] {
            let result = try await runCLI(["--transport", "urlsession", option, "https://127.0.0.1:\(port.port)/x"])
            #expect(result.status == 2, "\(option): \(result)")
            #expect(result.stderrText.contains("courier: Invalid configuration: The URLSession transport cannot"), "\(option): \(result)")
        }
    }

    @Test func idleTimeoutExits28() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.route("/held") { _ in .ok("late").waiting(for: gate) }
        // The response is held until the process has exited, so only the timeout can have ended it.
        let result = try await runCLI(["--timeout", "0.2", server.url("/held").absoluteString], timeout: .seconds(60))
        gate.open()
        #expect(result.status == 28, "\(result)")
        #expect(result.stderrText.hasPrefix("courier: (28) Operation timed out: "), "\(result)")
        #expect(result.stderrText.contains("0.2 s"), "\(result)")
    }

    @Test func outputIntoAMissingDirectoryExits23() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/f") { _ in .ok("data") }
        let directory = try TemporaryDirectory("missing")
        defer { directory.remove() }
        let target = directory.path("no/such/dir/out.bin").path
        let result = try await runCLI(["-o", target, server.url("/f").absoluteString])
        #expect(result.status == 23, "\(result)")
        #expect(result.stderrText.hasPrefix("courier: (23) Cannot write "), "\(result)")
        #expect(result.stderrText.contains("does not exist"))
        #expect(server.requestCount == 0, "the file-system problem is found before any request")
    }

    @Test func unreadableUploadFileExits26() async throws {
        let result = try await runCLI(["-d", "@/nonexistent/courier-test-file", "http://127.0.0.1:1/"])
        #expect(result.status == 26, "\(result)")
        #expect(result.stderrText.contains("no such file"))
        let form = try await runCLI(["-F", "f=@/nonexistent/courier-test-file", "http://127.0.0.1:1/"])
        #expect(form.status == 26, "\(form)")
    }

    @Test(arguments: [
        (["--help"], "Usage:"), (["-h"], "Usage:"), (["help"], "Usage:"),
        (["help", "fetch"], "Usage: courier [METHOD] URL"), (["fetch", "--help"], "Usage: courier [METHOD] URL"),
        (["help", "fetch"], "ws:// and wss:// open a WebSocket"),
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

    @Test func versionNamesTheLibcurlFileAndAChosenOneThatCannotLoad() async throws {
        let plain = try await runCLI(["--version"])
        #expect(plain.status == 0, "\(plain)")
        let line = try #require(plain.stdoutText.split(separator: "\n").first { $0.hasPrefix("libcurl: ") }, "\(plain.stdoutText)")
        if !line.contains("not available") { #expect(line.contains(" from /"), "\(line)") }

        let missing = "/nonexistent/courier-test/libcurl.so.4"
        let chosen = try await runCLI(["--version"], environment: ["COURIER_LIBCURL": missing])
        #expect(chosen.status == 0, "\(chosen)")
        #expect(chosen.stdoutText.contains("libcurl: not available: "), "\(chosen.stdoutText)")
        #expect(chosen.stdoutText.contains("COURIER_LIBCURL=\(missing)"), "\(chosen.stdoutText)")
    }

    @Test func helpAndTheGuideDocumentEveryExitCode() async throws {
        let result = try await runCLI(["--help"])
        let guide = try String(
            contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("../../Sources/Courier/Courier.docc/TheCourierCommand.md").standardized, encoding: .utf8)
        for code in ExitCode.allCases.map(\.rawValue) {
            #expect(result.stdoutText.contains("\n  \(code) "), "exit code \(code) is in --help")
            #expect(guide.contains("\n| \(code) | "), "exit code \(code) is in the table of \"The courier command\"")
        }
    }
}
