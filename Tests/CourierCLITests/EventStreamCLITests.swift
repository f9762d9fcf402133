import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `courier URL` on a `text/event-stream` response: piped, the stream's bytes as they came (as curl
/// writes them); on a terminal or with `--events`, one event per block as it arrives (JSON data
/// pretty-printed), reconnection with `Last-Event-ID` after the server's `retry:` until the server
/// says stop (204), `--no-reconnect`, and Ctrl-C ending a stream with 130.
@Suite struct EventStreamCLITests {
    static let expected = """
        id: 1
        data: tick 1

        id: 2
        event: update
        data: {
          "count" : 2
        }

        id: 3
        data: tick 3


        """

    static let script = EventStreamScript(
        events: [
            .init(id: "1", data: "tick 1", retry: 50),
            .init(id: "2", event: "update", data: #"{"count":2}"#),
            .init(id: "3", data: "tick 3"),
        ], dropAfter: 2)

    @Test func eventsPrintOneBlockEachAndTheStreamReconnectsFromTheLastID() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/events") { request in
            request.headers["Last-Event-ID"] == "3" ? MockResponse(status: 204) : Self.script.response(for: request)
        }
        let result = try await runCLI(["--events", server.url("/events").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == Self.expected)
        // Dropped after 2 events, reconnected with Last-Event-ID 2; ended cleanly after 3, reconnected; 204.
        #expect(server.recordedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "2", "3"])
    }

    @Test func noReconnectPrintsOneConnectionOnly() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let script = EventStreamScript(events: [.init(id: "1", data: "only")])
        server.route("/events") { script.response(for: $0) }
        let result = try await runCLI(["--events", "--no-reconnect", server.url("/events").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stdoutText == "id: 1\ndata: only\n\n")
        #expect(server.requestCount == 1)
    }

    @Test func pipedTheStreamIsItsBytesAndIsNotReconnected() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let whole = EventStreamScript(events: Self.script.events)
        server.route("/events") { whole.response(for: $0) }
        let result = try await runCLI([server.url("/events").absoluteString])
        #expect(result.status == 0, "\(result)")
        let text = result.stdoutText
        #expect(text.hasPrefix("id: 1\n"), "\(text.debugDescription)")
        #expect(text.contains("retry: 50\n"), "the retry field stays: \(text.debugDescription)")
        #expect(text.contains("data: {\"count\":2}\n"), "JSON data as sent, on its data: line: \(text.debugDescription)")
        #expect(text.hasSuffix("data: tick 3\n\n"), "\(text.debugDescription)")
        #expect(server.requestCount == 1, "a stream the server ended is not reopened, as with curl")
    }

    @Test func ctrlCEndsAStreamWith130() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let script = EventStreamScript(events: [.init(id: "1", data: "first")], ending: .stall)
        server.route("/events") { script.response(for: $0) }
        // A held response: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let process = try CLIProcess(["--timeout", "600", server.url("/events").absoluteString])
        #expect(await eventually(timeout: .seconds(60)) { server.bytesSent(path: "/events") > 0 })
        process.send(SIGINT)
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 130 && !result.signalled, "\(result)")
        #expect(result.stderrText.contains("interrupted"), "\(result)")
        try await server.waitForClientDisconnect(path: "/events")
    }
}
