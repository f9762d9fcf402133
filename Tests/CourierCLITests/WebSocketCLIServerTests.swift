import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `courier ws://...` end to end against CourierTestServer's WebSocket sessions (runs everywhere):
/// lines out as messages and the echoes printed, the end of input closing with 1000, --binary, a
/// line that is not UTF-8, the server's close codes (exit 0 for 1000, 101 for 4001), a refused
/// handshake (22), -H and --subprotocol on the handshake, and Ctrl-C closing with 1001 (130).
/// Each test waits for the echo of a line before writing the next or ending the input, since the
/// messages that arrive after the client's close are not printed.
@Suite struct WebSocketCLIServerTests {
    /// Writes `line` and a newline, and waits until standard output is `expected`.
    private func type(_ line: String, into input: InputPipe, of process: CLIProcess, expecting expected: String) async {
        input.write(line + "\n")
        let arrived = await eventually(timeout: .seconds(60)) { process.output.stdoutText == expected }
        #expect(arrived, "after '\(line)': \(process.snapshot())")
    }

    @Test func linesGoOutAsTextAndTheEndOfInputClosesWith1000() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/echo") { _ in .webSocket(.echo) }
        let input = try InputPipe()
        let process = try input.start([Self.ws(server, "/echo")])
        await type("hello", into: input, of: process, expecting: "hello\n")
        await type(#"{"a":[1,2]}"#, into: input, of: process, expecting: "hello\n{\"a\":[1,2]}\n")
        await type("", into: input, of: process, expecting: "hello\n{\"a\":[1,2]}\n\n")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.isEmpty, "\(result)")
        let socket = try await server.takeWebSocket()
        _ = try await socket.waitUntilFinished()
        #expect(socket.messages == [.text("hello"), .text(#"{"a":[1,2]}"#), .text("")])
        #expect(socket.clientClose?.code == 1000)
        #expect(socket.violations.isEmpty, "\(socket.violations)")
    }

    @Test func binaryLinesGoOutAsBinaryAndComeBackAsTheirBytes() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/echo") { _ in .webSocket(.echo) }
        let input = try InputPipe()
        let process = try input.start(["--binary", Self.ws(server, "/echo")])
        await type("abc", into: input, of: process, expecting: "abc")
        await type("de", into: input, of: process, expecting: "abcde")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        let socket = try await server.takeWebSocket()
        _ = try await socket.waitUntilFinished()
        #expect(socket.messages == [.binary(Data("abc".utf8)), .binary(Data("de".utf8))])
    }

    @Test func aServerMessageThenA1000CloseExits0AndA4001CloseExits101() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/hello") { _ in .webSocket(WebSocketScript([.send(.text("hi")), .send(.binary(Data([1, 2, 255]))), .close(code: 1000)])) }
        server.route("/bye") { _ in .webSocket(WebSocketScript([.close(code: 4001, reason: "bye")])) }
        // Standard input stays open: the server's close alone ends the command.
        let input = try InputPipe()
        let normal = try await input.start([Self.ws(server, "/hello")]).finish(timeout: .seconds(60))
        #expect(normal.status == 0, "\(normal)")
        #expect(normal.stdoutText == "hi\nbinary message, 3 bytes: 0102ff\n")
        let other = try InputPipe()
        let closed = try await other.start([Self.ws(server, "/bye")]).finish(timeout: .seconds(60))
        #expect(closed.status == 101, "\(closed)")
        #expect(closed.stderrText == "courier: (101) The server closed the WebSocket with 4001: bye\n", "\(closed)")
    }

    /// Without --binary, a line that is not UTF-8 goes as a binary message, with a warning.
    @Test func aLineThatIsNotUTF8GoesAsBinary() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/echo") { _ in .webSocket(.echo) }
        let input = try InputPipe()
        let process = try input.start([Self.ws(server, "/echo")])
        input.write(Data([0xFF, 0x00, 0x41, 0x0A]))
        let arrived = await eventually(timeout: .seconds(60)) { process.output.stdoutText == "binary message, 3 bytes: ff0041\n" }
        #expect(arrived, "\(process.snapshot())")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText == "courier: warning: line 1 of standard input is not UTF-8: sent as a binary message\n")
        let socket = try await server.takeWebSocket()
        _ = try await socket.waitUntilFinished()
        #expect(socket.messages == [.binary(Data([0xFF, 0x00, 0x41]))])
    }

    /// On a terminal (`script` gives courier one), a JSON message is pretty-printed.
    @Test func jsonIsPrettyOnATerminal() async throws {
        guard let executable = CourierExecutable.url else { return }
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/hello") { _ in .webSocket(WebSocketScript([.send(.text(#"{"hello":"courier","n":1}"#)), .close(code: 1000)])) }
        let input = try InputPipe()
        let process = try input.start(
            executable: URL(fileURLWithPath: "/usr/bin/script"),
            ["-qec", "\(executable.path) \(Self.ws(server, "/hello"))", "/dev/null"],
            environment: ["NO_COLOR": "1"])
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        let printed = result.stdoutText.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(printed.contains("{\n  \"hello\": \"courier\",\n  \"n\": 1\n}\n"), "\(result)")
    }

    /// With --keep-open the end of input does not close: what the server sends after is printed.
    @Test func keepOpenGoesOnPrintingAfterTheEndOfInput() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.route("/later") { _ in .webSocket(WebSocketScript([.wait(gate), .send(.text("later")), .close(code: 1000)])) }
        let input = try InputPipe()
        input.end()
        let process = try input.start(["--keep-open", Self.ws(server, "/later")])
        let socket = try await server.takeWebSocket()
        gate.open()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "later\n", "\(result)")
        _ = try await socket.waitUntilFinished()
        #expect(socket.clientClose?.code == 1000)
    }

    @Test func aRefusedHandshakeExits22() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/auth") { _ in MockResponse(status: 401).body(.text("no")) }
        let result = try await runCLI([Self.ws(server, "/auth")])
        #expect(result.status == 22, "\(result)")
        #expect(result.stderrText == "courier: (22) Refused WebSocket upgrade: 401 Unauthorized\n", "\(result)")
    }

    @Test func headersAndSubprotocolsGoWithTheHandshake() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/chat") { _ in .webSocket(WebSocketScript([.close(code: 1000)], subprotocol: .ifOffered("chat"))) }
        let input = try InputPipe()
        let result = try await input.start([
            "-v", "-H", "Authorization: Bearer secret", "--subprotocol", "superchat",
            "--subprotocol", "chat", Self.ws(server, "/chat"),
        ]).finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("* WebSocket open, subprotocol: chat\n"), "\(result)")
        let socket = try await server.takeWebSocket()
        #expect(socket.request.headers["Authorization"] == "Bearer secret")
        #expect(socket.offeredSubprotocols == ["superchat", "chat"])
    }

    @Test func ctrlCClosesWith1001AndExits130() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/echo") { _ in .webSocket(.echo) }
        let input = try InputPipe()
        let process = try input.start([Self.ws(server, "/echo")])
        let socket = try await server.takeWebSocket()
        await type("ready", into: input, of: process, expecting: "ready\n")
        process.send(SIGINT)
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 130 && !result.signalled, "\(result)")
        #expect(result.stderrText.contains("courier: interrupted"), "\(result)")
        _ = try await socket.waitUntilFinished()
        #expect(socket.clientClose?.code == 1001)
    }

    /// `ws://127.0.0.1:port/path` for the test server's `path`.
    static func ws(_ server: TestServer, _ path: String) -> String {
        server.url(path).absoluteString.replacingOccurrences(of: "http://", with: "ws://")
    }
}
