@testable import courier
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `courier ws://...` and `wss://...` against a server no one here wrote, and the command line.
///
/// The end-to-end tests run against `.ci/ws-server.py`'s aiohttp endpoints (started by `.ci/run`),
/// and skip with a printed reason when they are absent: an echo, permessage-deflate (which
/// CourierTestServer does not speak) with -v and --no-compression, and wss:// with --cacert.
/// The tool's behaviour is tested against CourierTestServer in ``WebSocketCLIServerTests``.
@Suite struct WebSocketCLITests {
    /// `ws://127.0.0.1:18457` (aiohttp, permessage-deflate accepted), or nil with the skip printed.
    static let server = url("COURIER_AIOHTTP_WS_URL")
    /// The same server through nginx's TLS.
    static let tlsServer = url("COURIER_AIOHTTP_WSS_URL")

    private static func url(_ variable: String) -> URL? {
        InteropEnvironment.url(variable, group: "courier WebSocket end-to-end tests (aiohttp, nginx)")
    }

    /// Writes `line` and a newline, and waits until standard output is `expected`.
    private func type(_ line: String, into input: InputPipe, of process: CLIProcess, expecting expected: String) async {
        input.write(line + "\n")
        let arrived = await eventually(timeout: .seconds(60)) { process.output.stdoutText == expected }
        #expect(arrived, "after '\(line)': \(process.snapshot())")
    }

    @Test func linesGoOutAndMessagesComeBackUntilTheEndOfInput() async throws {
        guard let server = Self.server else { return }
        let input = try InputPipe()
        let process = try input.start([server.appendingPathComponent("echo").absoluteString])
        await type("hello", into: input, of: process, expecting: "hello\n")
        // Piped, JSON is printed as it came; an empty line is an empty message.
        await type(#"{"a":[1,2]}"#, into: input, of: process, expecting: "hello\n{\"a\":[1,2]}\n")
        await type("", into: input, of: process, expecting: "hello\n{\"a\":[1,2]}\n\n")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "hello\n{\"a\":[1,2]}\n\n")
        #expect(result.stderrText.isEmpty, "\(result)")
    }

    @Test func subprotocolIsOfferedAndTheChoiceShownWithVerbose() async throws {
        guard let server = Self.server else { return }
        let input = try InputPipe()
        let process = try input.start([
            "-v", "--subprotocol", "superchat", "--subprotocol", "chat",
            server.appendingPathComponent("chat").absoluteString,
        ])
        await type("hi", into: input, of: process, expecting: "hi\n")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        // aiohttp accepts permessage-deflate, which courier offers unless --no-compression.
        #expect(result.stderrText.contains("* WebSocket open, subprotocol: chat, permessage-deflate\n"), "\(result)")
    }

    @Test func noCompressionDoesNotOfferPermessageDeflate() async throws {
        guard let server = Self.server else { return }
        let input = try InputPipe()
        let process = try input.start(["-v", "--no-compression", server.appendingPathComponent("echo").absoluteString])
        await type("plain", into: input, of: process, expecting: "plain\n")
        input.end()
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(result.stderrText.contains("* WebSocket open, no subprotocol\n"), "\(result)")
    }

    @Test func wssTrustsWhatCacertSaysAndNothingElse() async throws {
        guard let server = Self.tlsServer, let ca = TLSServers.testCA else { return }
        let url = server.appendingPathComponent("echo").absoluteString
        let input = try InputPipe()
        let process = try input.start(["--cacert", ca, url])
        await type("secret", into: input, of: process, expecting: "secret\n")
        input.end()
        let trusted = try await process.finish(timeout: .seconds(60))
        #expect(trusted.status == 0, "\(trusted)")

        let untrusted = try await runCLI([url])
        #expect(untrusted.status == 60, "\(untrusted)")
    }

    // MARK: Through a proxy

    /// tinyproxy (`.ci/start-servers.sh`), which opens CONNECT tunnels to the aiohttp plain port and
    /// nginx's WebSocket TLS port only, and its log; or nil with the skip printed.
    static let proxy: (url: String, log: String)? = {
        let group = "courier WebSocket tests through a CONNECT proxy (tinyproxy)"
        guard let url = InteropEnvironment.value("COURIER_CONNECT_PROXY_URL", group: group),
            let log = InteropEnvironment.value("COURIER_CONNECT_PROXY_LOG", group: group)
        else { return nil }
        return (url, log)
    }()

    @Test func wsAndWssGoThroughTheProxyTheEnvironmentNamesInATunnel() async throws {
        guard let proxy = Self.proxy, let plain = Self.url("COURIER_AIOHTTP_WS_PLAIN_URL"),
            let tls = Self.url("COURIER_AIOHTTP_WSS_PLAIN_URL"), let ca = TLSServers.testCA
        else { return }
        // libcurl's variables, as curl reads them: http_proxy for ws://, https_proxy for wss://.
        let cases: [(URL, [String], [String: String])] = [
            (plain, [], ["http_proxy": proxy.url, "no_proxy": ""]),
            (tls, ["--cacert", ca], ["https_proxy": proxy.url, "no_proxy": ""]),
        ]
        for (server, options, environment) in cases {
            let input = try InputPipe()
            let process = try input.start(options + [server.appendingPathComponent("echo").absoluteString], environment: environment)
            await type("through the tunnel", into: input, of: process, expecting: "through the tunnel\n")
            input.end()
            let result = try await process.finish(timeout: .seconds(60))
            #expect(result.status == 0, "\(server): \(result)")
        }
        let log = (try? String(contentsOfFile: proxy.log, encoding: .utf8)) ?? ""
        for server in [plain, tls] {
            let tunnel = "CONNECT 127.0.0.1:\(server.port ?? 0) HTTP/1.1"
            #expect(log.contains(tunnel), "the proxy's log has no \(tunnel)")
        }
    }

    @Test func aTunnelTheProxyRefusesCannotConnectAndSaysWhy() async throws {
        // tinyproxy opens tunnels to two ports only; aiohttp's compressing port is not one of them.
        guard let proxy = Self.proxy, let server = Self.server else { return }
        let result = try await runCLI([server.appendingPathComponent("echo").absoluteString], environment: ["http_proxy": proxy.url, "no_proxy": ""])
        #expect(result.status == 7, "\(result)")
        #expect(result.stderrText.contains("The proxy refused to open a tunnel to 127.0.0.1 (it answered CONNECT with 403)."), "\(result)")
    }

    // MARK: Without a server

    @Test func connectionRefusedExits7() async throws {
        let port = try ClosedPort()
        let result = try await runCLI(["ws://127.0.0.1:\(port.port)/x"])
        #expect(result.status == 7, "\(result)")
        #expect(result.stderrText.hasPrefix("courier: (7) Failed to connect to 127.0.0.1 port \(port.port)"), "\(result)")
    }

    @Test func helpNamesTheWebSocketOptions() async throws {
        for arguments in [["ws://127.0.0.1:1/x", "--help"], ["help", "ws"]] {
            let result = try await runCLI(arguments)
            #expect(result.status == 0, "\(result)")
            #expect(result.stdoutText.hasPrefix("Usage: courier ws://HOST/PATH [options]"), "\(arguments)")
            for option in ["--binary", "--subprotocol", "--cacert", "-H, --header"] {
                #expect(result.stdoutText.contains(option), "\(arguments) help lacks \(option)")
            }
        }
        let main = try await runCLI(["--help"])
        #expect(main.stdoutText.contains("courier ws://HOST/PATH [options]"))
    }

    @Test func optionsAreParsedAndCheckedForAWebSocket() throws {
        let options = try WebSocketOptions.parse([
            "-H", "Authorization: Bearer x", "--binary", "--subprotocol", "chat",
            "--no-compression", "--ping-interval", "2.5", "-k", "--http1.1", "wss://h:8443/live?x=1",
        ])
        #expect(options.url.absoluteString == "wss://h:8443/live?x=1")
        #expect(options.headers == [HeaderField(name: "Authorization", value: "Bearer x")])
        #expect(options.binary && !options.compression && options.connection.insecure)
        #expect(options.subprotocols == ["chat"])
        #expect(options.pingInterval == 2.5)
        #expect(WebSocketOptions.isWebSocketCommand(["-H", "A: b", "WS://h/"]))
        #expect(!WebSocketOptions.isWebSocketCommand(["-H", "ws://not-the-url", "http://h/"]))
        #expect(!WebSocketOptions.isWebSocketCommand(["http://h/ws://x"]))
    }

    @Test(arguments: [
        (["-d", "x", "ws://h/"], "-d/--data does not apply to a WebSocket (ws:// or wss://): the messages to send are the lines of standard input"),
        (
            ["-o", "f", "ws://h/"],
            "-o/--output does not apply to a WebSocket (ws:// or wss://): messages are written to standard output (redirect it)"
        ),
        (["--http2", "wss://h/"], "--http2 does not apply to a WebSocket (ws:// or wss://): its handshake is HTTP/1.1"),
        (["GET", "ws://h/"], "'GET' before the WebSocket URL: a WebSocket has no METHOD (courier ws://HOST/PATH)"),
        (["ws://h/", "a=b"], "unexpected argument 'a=b' after the WebSocket URL (items and methods are for HTTP requests)"),
        (["--subprotocol", "a b", "ws://h/"], "--subprotocol: 'a b' is not a valid subprotocol name (an HTTP token)"),
        (["-H", "bad", "ws://h/"], "bad header 'bad' (expected 'Name: value')"),
    ])
    func optionsThatDoNotApplyAreUsageErrors(arguments: [String], message: String) async throws {
        #expect(throws: UsageError(message, command: "ws")) { try WebSocketOptions.parse(arguments) }
        let result = try await runCLI(arguments)
        #expect(result.status == 2, "\(result)")
        #expect(result.stderrText == "courier: \(message)\nRun 'courier help ws' for usage.\n", "\(result)")
    }

    @Test func aMalformedWebSocketURLExits3() async throws {
        let result = try await runCLI(["ws://"])
        #expect(result.status == 3, "\(result)")
    }
}
