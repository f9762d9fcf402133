import CourierTestServer
import CourierTestSupport
import Foundation
import Testing

/// `-u USER` without a password: asked for as curl asks, on the terminal with echo off, or read
/// from standard input when the process has no terminal.
@Suite struct PasswordPromptTests {
    @Test func theTerminalIsAskedAndTheAnswerIsNotEchoed() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/private") { _ in .text("in") }
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let command = [executable.path, "-s", "-u", "ada", server.url("/private").absoluteString].map(shellQuoted).joined(separator: " ")
        let typing = try InputPipe()
        // `script` runs courier in a pseudo-terminal: its /dev/tty, whose input is what the test types.
        let process = try typing.start(executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"])
        let prompt = "Enter host password for user 'ada':"
        #expect(await eventually(timeout: .seconds(120)) { process.output.stdoutText.contains(prompt) }, "\(process.snapshot())")
        typing.write("s3cr:et\n")
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        let screen = result.stdoutText.replacingOccurrences(of: "\r", with: "")
        #expect(screen.hasSuffix("\(prompt)\nin\n"), "the prompt, the newline courier prints for the silent answer, the body: \(result)")
        #expect(!result.stdoutText.contains("s3cr"), "the password is not echoed: \(result.stdoutText.debugDescription)")
        let request = try await server.takeRequest()
        #expect(request.headers["Authorization"] == "Basic " + Data("ada:s3cr:et".utf8).base64EncodedString())
    }

    @Test func withoutATerminalTheAnswerIsReadFromStandardInput() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/private") { _ in .text("in") }
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let input = try InputPipe()
        // `setsid`: a session of its own, so no controlling terminal for /dev/tty, whoever runs the tests.
        let process = try input.start(
            executable: URL(fileURLWithPath: "/usr/bin/setsid"), [executable.path, "-u", "ada", server.url("/private").absoluteString])
        input.write("from stdin\n")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "in")
        #expect(result.stderrText.hasPrefix("Enter host password for user 'ada':"), "the prompt goes to stderr: \(result)")
        let request = try await server.takeRequest()
        #expect(request.headers["Authorization"] == "Basic " + Data("ada:from stdin".utf8).base64EncodedString())
    }
}
