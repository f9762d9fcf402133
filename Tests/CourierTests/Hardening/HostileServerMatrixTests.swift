import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestSupport
import CCurl
import CourierTestServer
#if canImport(Glibc)
import Glibc
#endif

/// Issue 23's hostile-server matrix: each case is a raw TCP server (``ScriptedReplyServer``)
/// playing one broken or hostile reply to both transports. Every case checks the exact outcome,
/// that the request ended by itself, not by its 30 s timeout (the timeouts run on a manual clock
/// that only moves for the cases that end by timing out, see ``run(_:server:timeout:send:)``), and
/// that no socket to the server is left open once the session is dropped and the server stopped.
/// Process-wide descriptor and thread counts are checked by ``ResourceHygieneTests``, which runs
/// alone.
///
/// | Case | curl | URLSession | Notes |
/// | --- | --- | --- | --- |
/// | garbage instead of a status line | invalidResponse | invalidResponse | also `NonHTTPReplyTests` |
/// | status line, then close | invalidResponse | not run | FoundationNetworking traps (SIGILL) |
/// | a head that never ends | responseTooLarge | responseTooLarge | libcurl's 300 KiB head cap |
/// | a head that stops half way, held open | timedOut | timedOut | the 2 s idle timeout |
/// | one 1 MiB header line | responseTooLarge | responseTooLarge | libcurl's 100 KiB line buffer ("Out of memory") |
/// | 100,000 short header lines | responseTooLarge | responseTooLarge | libcurl's 300 KiB head cap |
/// | chunked: bad hex size | invalidResponse | invalidResponse | |
/// | chunked: size written `0x10` | invalidResponse | invalidResponse | libcurl reads `0` (the last chunk), the data as trailers |
/// | chunked: a trailer line without a colon | invalidResponse | invalidResponse | libcurl's "Failed reading the chunked-encoded stream" |
/// | chunked: size with a sign, 20 hex digits, empty | invalidResponse | invalidResponse | |
/// | chunked: no CRLF after the data | invalidResponse | invalidResponse | |
/// | chunked: chunk longer than declared | invalidResponse | invalidResponse | |
/// | chunked: closed before the last chunk | connectionLost | connectionLost | |
/// | Content-Length longer than the body, then close | connectionLost | connectionLost | |
/// | two Content-Length fields, different | invalidResponse | invalidResponse | Courier's check (libcurl took the last) |
/// | Content-Length list `5, 6` | invalidResponse | invalidResponse | Courier's check (libcurl took the first) |
/// | Content-Length list `5, 5` | 200 | 200 | one value repeated is allowed (RFC 9110 §8.6) |
/// | negative Content-Length | invalidResponse | invalidResponse | |
/// | overflowing Content-Length | invalidResponse | invalidResponse | Courier's check (libcurl read to the close) |
/// | 100 Continue without Expect | 200 | invalidResponse | FoundationNetworking reports the 100 as final |
/// | 102, 103 with headers, 100, then 200 | 200 | invalidResponse | same |
/// | HTTP/1.0 close-delimited body | 200, whole body | 200, whole body | |
/// | chunked with trailers | 200 | not run | FoundationNetworking traps (SIGILL) |
/// | unsolicited 101 | invalidResponse | invalidResponse | `NonHTTPReplyTests` |
/// | upload: server stops reading mid-body | timedOut | timedOut | `HostileUploadTests`, 2 s idle timeout |
/// | upload: 413 early, then close | 413 | 413 | `HostileUploadTests` |
/// | gzip corrupt half way | invalidResponse | invalidResponse | |
/// | gzip truncated (right Content-Length) | invalidResponse | 200, partial body | URLSession: known issue (`withKnownIssue`) |
/// | gzip bomb | responseTooLarge | responseTooLarge | `ResponseLimitTests`; 1 GiB: `LimitMemoryTests` |
/// | endless body | responseTooLarge | responseTooLarge | `ResponseLimitTests`; 1 GiB: `LimitMemoryTests` |
/// | cache directory: links, FIFOs, swapped bodies, other users' files | as `HostileCacheDirectoryTests` says | same | |
/// | download store: links, hard links, FIFOs, directories, other users' files in place of its files; a link or FIFO at the destination | as `HostileDownloadStoreTests` says (starts over, resumes, or `fileSystem`; never a hang, never a write outside) | same | also `DownloadStoreHostileDirectoryTests` |
///
/// The event-stream rows (an endless event, an event-stream gzip bomb, a drop in the middle of an
/// event, a byte-order mark on every connection, `retry: 0` and a close after each event) are in
/// `HostileServerMatrixTests+EventStreams.swift`. `LimitMemoryTests` (run alone) checks the peak
/// memory of 1 GiB hostile bodies on both transports.
///
/// WebSocket servers (issue 36), scripted on CourierTestServer, end as the table says: the kind
/// `messages` throws (none: it finishes) and ``WebSocket/closeStatus``'s code. The URLSession
/// column is the message engine: the real `URLSessionWebSocketTask` on Apple platforms, the
/// loopback engine on Linux (where the task cannot open WebSockets); frames it would check itself
/// are not run there. Also `WebSocketClosingTests` and `WebSocketKeepAliveTests`.
///
/// | WebSocket case | curl engine | URLSession engine |
/// | --- | --- | --- |
/// | close 3000, then FIN at once | webSocketClosed, 3000 | webSocketClosed, 3000 |
/// | close 3000, then RST at once | webSocketClosed, 3000 | webSocketClosed, 3000 |
/// | close 3000, the answer read, then RST | webSocketClosed, 3000 | webSocketClosed, 3000 |
/// | close 1000, then RST | finishes, 1000 | finishes, 1000 |
/// | close without a code, then RST | finishes, 1005 | finishes, 1005 |
/// | close 3000, a message after it, then FIN | webSocketClosed, 3000 | webSocketClosed, 3000 |
/// | two close frames | webSocketClosed, the first (3000) | webSocketClosed, 3000 |
/// | close with 1005, 1006, 999 or 5000 on the wire | webSocketProtocolViolation, 1002 | not run |
/// | close payload of 1 byte | webSocketProtocolViolation, 1002 | not run |
/// | close reason not UTF-8 | webSocketProtocolViolation, 1007 | not run |
/// | close payload of 126 bytes, fragmented close, masked close | webSocketProtocolViolation, 1002 | not run |
/// | FIN or RST in the middle of a frame | connectionLost, 1006 | connectionLost, 1006 |
/// | FIN with no close frame | connectionLost, 1006 | connectionLost, 1006 |
/// | stall in the middle of a frame (default configuration) | timedOut, 1006 (keep-alive: 20 s + 30 s) | timedOut, 1006 |
@Suite(.hangLimit(.seconds(300))) struct HostileServerMatrixTests {
    /// What a case must end with on one transport.
    enum Outcome: Sendable, Equatable {
        /// Fails with exactly this kind.
        case fails(CourierError.Kind)
        /// Succeeds with this status and body.
        case succeeds(status: Int, body: Data)
        /// Not run on this transport, for this reason.
        case notRun(String)
    }

    /// One hostile reply and what each transport must make of it.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let script: [ScriptedReplyServer.Step]
        let curl: Outcome
        let urlSession: Outcome
        /// The idle timeout; cases that end by timing out set a short one.
        var timeout: TimeInterval = 30

        var testDescription: String { name }

        func outcome(on transport: TransportUnderTest) -> Outcome {
            transport == .curl ? curl : urlSession
        }
    }

    static let ok = "HTTP/1.1 200 OK\r\n"
    static let chunked = ok + "Transfer-Encoding: chunked\r\n\r\n"
    static let foundationTraps = "FoundationNetworking traps the process (SIGILL, \"Transfer completed, but there's no response\")"

    static func reply(_ text: String) -> [ScriptedReplyServer.Step] { [.readHead, .write(Data(text.utf8))] }
    static func body(_ text: String) -> Data { Data(text.utf8) }

    static let cases: [Case] = [
        Case(
            name: "garbage instead of a status line", script: reply("this is not HTTP at all\r\n\r\nnope"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "status line, then close", script: reply(ok),
            curl: .fails(.invalidResponse), urlSession: .notRun(foundationTraps)),
        Case(
            name: "a head that never ends",
            script: [.readHead, .write(Data(ok.utf8)), .writeForever(Data("X-Endless: \(String(repeating: "e", count: 100))\r\n".utf8))],
            curl: .fails(.responseTooLarge), urlSession: .fails(.responseTooLarge)),
        Case(
            name: "a head that stops half way and is held open", script: [.readHead, .write(Data((ok + "X-Half: 1\r\n").utf8)), .hold],
            curl: .fails(.timedOut), urlSession: .fails(.timedOut), timeout: 2),
        Case(
            name: "one 1 MiB header line",
            script: reply(ok + "X-Big: \(String(repeating: "a", count: 1 << 20))\r\nContent-Length: 2\r\n\r\nok"),
            curl: .fails(.responseTooLarge), urlSession: .fails(.responseTooLarge)),
        Case(
            name: "100,000 short header lines",
            script: reply(ok + (0..<100_000).map { "X-\($0): v\r\n" }.joined() + "Content-Length: 2\r\n\r\nok"),
            curl: .fails(.responseTooLarge), urlSession: .fails(.responseTooLarge)),
        Case(
            name: "chunked: bad hex size", script: reply(chunked + "zz\r\nabc\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: size written 0x10", script: reply(chunked + "0x10\r\n0123456789abcdef\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: a trailer line without a colon", script: reply(chunked + "5\r\nhello\r\n0\r\nnot a header\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: size with a sign", script: reply(chunked + "+5\r\nhello\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: size of 20 hex digits", script: reply(chunked + "00000000000000000005\r\nhello\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: empty size line", script: reply(chunked + "\r\nhello\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: no CRLF after the data", script: reply(chunked + "3\r\nabcXY5\r\nhello\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: chunk longer than declared", script: reply(chunked + "3\r\nabcdefgh\r\n0\r\n\r\n"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "chunked: closed before the last chunk", script: reply(chunked + "5\r\nhello\r\n"),
            curl: .fails(.connectionLost), urlSession: .fails(.connectionLost)),
        Case(
            name: "Content-Length longer than the body, then close", script: reply(ok + "Content-Length: 100\r\n\r\nshort"),
            curl: .fails(.connectionLost), urlSession: .fails(.connectionLost)),
        Case(
            name: "two different Content-Length fields", script: reply(ok + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "Content-Length list 5, 6", script: reply(ok + "Content-Length: 5, 6\r\n\r\nhello!"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "Content-Length list 5, 5", script: reply(ok + "Content-Length: 5, 5\r\n\r\nhello"),
            curl: .succeeds(status: 200, body: body("hello")), urlSession: .succeeds(status: 200, body: body("hello"))),
        Case(
            name: "negative Content-Length", script: reply(ok + "Content-Length: -5\r\n\r\nhello"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "overflowing Content-Length", script: reply(ok + "Content-Length: 99999999999999999999999\r\n\r\nhello"),
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
        Case(
            name: "100 Continue without Expect", script: reply("HTTP/1.1 100 Continue\r\n\r\n" + ok + "Content-Length: 5\r\n\r\nhello"),
            curl: .succeeds(status: 200, body: body("hello")), urlSession: .fails(.invalidResponse)),
        Case(
            name: "102, 103 with headers, 100, then 200",
            script: reply(
                "HTTP/1.1 102 Processing\r\nX-Step: 1\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                    + "HTTP/1.1 100 Continue\r\n\r\n" + ok + "Content-Length: 5\r\n\r\nhello"),
            curl: .succeeds(status: 200, body: body("hello")), urlSession: .fails(.invalidResponse)),
        Case(
            name: "HTTP/1.0 close-delimited body",
            script: reply("HTTP/1.0 200 OK\r\nConnection: close\r\n\r\n" + String(repeating: "0123456789", count: 10_000)),
            curl: .succeeds(status: 200, body: body(String(repeating: "0123456789", count: 10_000))),
            urlSession: .succeeds(status: 200, body: body(String(repeating: "0123456789", count: 10_000)))),
        Case(
            name: "chunked with trailers",
            script: reply(ok + "Transfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n"),
            curl: .succeeds(status: 200, body: body("hello")), urlSession: .notRun(foundationTraps)),
        Case(
            name: "gzip corrupt half way", script: Gzip.corrupt,
            curl: .fails(.invalidResponse), urlSession: .fails(.invalidResponse)),
    ]

    @Test(arguments: TransportUnderTest.available, cases)
    func hostileReply(transport: TransportUnderTest, hostile: Case) async throws {
        let expected = hostile.outcome(on: transport)
        if case .notRun = expected { return }
        let server = try ScriptedReplyServer(hostile.script)
        let outcome = try await Self.run(transport, server: server, timeout: hostile.timeout)
        #expect(server.connectionCount >= 1)
        Self.expect(outcome, endedAs: expected)
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    /// The matrix's "gzip truncated" row: a body cut at a deflate block boundary, with a
    /// `Content-Length` that matches what was sent. The curl transport decodes codings itself and
    /// fails it; URLSession's libcurl decodes inside FoundationNetworking and does not check that the
    /// stream ended, so there it comes out as a shorter success (recorded as a known issue, so that
    /// a fix upstream shows up).
    @Test(arguments: TransportUnderTest.available)
    func truncatedGzipBodyFails(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer(Gzip.truncated)
        let outcome = try await Self.run(transport, server: server, timeout: 30)
        withKnownIssue("FoundationNetworking's libcurl accepts a gzip stream without its end") {
            #expect(outcome.response.error?.kind == .invalidResponse, "succeeded with \(outcome.response.value?.count ?? 0) bytes")
        } when: {
            transport == .urlSession
        }
        #expect((outcome.response.value?.count ?? 0) < Gzip.plain.count, "a truncated stream can never give the whole body")
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    // MARK: - WebSocket servers

    /// What a WebSocket case must end with on one engine.
    enum WebSocketOutcome: Sendable, Equatable {
        /// `messages` throws this kind (nil: finishes normally) and the close status has this code.
        case ends(CourierError.Kind?, WebSocketCloseCode)
        /// Not run on this engine, for this reason.
        case notRun(String)
    }

    /// One hostile WebSocket server and what each engine must make of it.
    struct WebSocketCase: Sendable, CustomTestStringConvertible {
        let name: String
        let steps: [WebSocketScript.Step]
        let curl: WebSocketOutcome
        let urlSession: WebSocketOutcome
        /// The server goes silent: the keep-alive's 20 s and the pong's 30 s pass on a manual clock.
        var stalls = false

        var testDescription: String { name }
    }

    static let taskChecksFrames = "URLSessionWebSocketTask checks frames itself; on Linux the loopback engine would repeat the curl engine's verdict"
    static let hello = WebSocketScript.Frame.text("hello").wireBytes
    static let halfAFrame = WebSocketScript.Frame.binary(Data(repeating: 7, count: 1000)).wireBytes.prefix(100)

    static func closeFrame(_ payload: Data, fin: Bool = true, maskingKey: UInt32? = nil) -> WebSocketScript.Step {
        .frame(WebSocketScript.Frame(opcode: .close, payload: payload, fin: fin, maskingKey: maskingKey))
    }

    static func both(_ kind: CourierError.Kind?, _ code: UInt16) -> (WebSocketOutcome, WebSocketOutcome) {
        (.ends(kind, WebSocketCloseCode(code)), .ends(kind, WebSocketCloseCode(code)))
    }

    static func webSocketCase(
        _ name: String, _ steps: [WebSocketScript.Step], _ outcomes: (WebSocketOutcome, WebSocketOutcome), stalls: Bool = false
    ) -> WebSocketCase {
        WebSocketCase(name: name, steps: steps, curl: outcomes.0, urlSession: outcomes.1, stalls: stalls)
    }

    static func violation(_ name: String, _ steps: [WebSocketScript.Step], code: UInt16 = 1002) -> WebSocketCase {
        webSocketCase(name, steps, (.ends(.webSocketProtocolViolation, WebSocketCloseCode(code)), .notRun(taskChecksFrames)))
    }

    static let bye = WebSocketScript.Step.frame(.close(code: 3000, reason: "bye"))

    static let webSocketCases: [WebSocketCase] = [
        webSocketCase("close 3000, then FIN at once", [bye, .end(.close)], both(.webSocketClosed, 3000)),
        webSocketCase("close 3000, then RST at once", [bye, .end(.reset)], both(.webSocketClosed, 3000)),
        webSocketCase("close 3000, the answer read, then RST", [bye, .receiveClose, .end(.reset)], both(.webSocketClosed, 3000)),
        webSocketCase("close 1000, then RST", [.frame(.close(code: 1000)), .end(.reset)], both(nil, 1000)),
        webSocketCase("close without a code, then RST", [.frame(.close(code: nil)), .end(.reset)], both(nil, 1005)),
        webSocketCase("close 3000, a message after it, then FIN", [bye, .send(.text("after")), .end(.close)], both(.webSocketClosed, 3000)),
        webSocketCase("two close frames", [bye, .frame(.close(code: 4000, reason: "second")), .end(.reset)], both(.webSocketClosed, 3000)),
        violation("close with 1005 on the wire", [.frame(.close(code: 1005)), .end(.close)]),
        violation("close with 1006 on the wire", [.frame(.close(code: 1006)), .end(.close)]),
        violation("close with 999", [.frame(.close(code: 999)), .end(.close)]),
        violation("close with 5000", [.frame(.close(code: 5000)), .end(.close)]),
        violation("close payload of 1 byte", [closeFrame(Data([0x03])), .end(.close)]),
        violation(
            "close reason not UTF-8", [closeFrame(WebSocketScript.Frame.closePayload(code: 3000, reason: Data([0xFF, 0xFE]))), .end(.close)],
            code: 1007),
        violation("close payload of 126 bytes", [closeFrame(WebSocketScript.Frame.closePayload(code: 3000) + Data(count: 124)), .end(.close)]),
        violation("fragmented close frame", [closeFrame(WebSocketScript.Frame.closePayload(code: 3000), fin: false), .end(.close)]),
        violation("masked close frame", [closeFrame(WebSocketScript.Frame.closePayload(code: 3000), maskingKey: 0x0102_0304), .end(.close)]),
        webSocketCase("FIN in the middle of a frame", [.raw(hello + halfAFrame), .end(.close)], both(.connectionLost, 1006)),
        webSocketCase("RST in the middle of a frame", [.raw(hello + halfAFrame), .end(.reset)], both(.connectionLost, 1006)),
        webSocketCase("FIN with no close frame", [.raw(hello), .end(.close)], both(.connectionLost, 1006)),
        webSocketCase("stall in the middle of a frame", [.raw(hello + halfAFrame), .end(.stall)], both(.timedOut, 1006), stalls: true),
    ]

    /// Every socket timer (opening, pings, close) runs on a manual clock here, so a case can only
    /// end by what the server does: a case that waited for a timer would hang, which the suite's
    /// hang limit turns into a failure (a bound on the elapsed time would only measure the machine's load).
    @Test(arguments: TransportUnderTest.available, webSocketCases)
    func hostileWebSocketServer(transport: TransportUnderTest, hostile: WebSocketCase) async throws {
        let expected = transport == .curl ? hostile.curl : hostile.urlSession
        guard case .ends(let kind, let code) = expected else { return }
        let server = try TestServer()
        server.route("/ws") { _ in .webSocket(WebSocketScript(hostile.steps)) }
        var failure: CourierError?
        var status: WebSocketCloseStatus?
        do {
            let clock = ManualClock()
            let socket = try WebSocketClosingTests.socket(transport, server, "/ws", clock: clock)
            if hostile.stalls {
                // "hello" arrives in the same read as the half frame: after it, only silence is left.
                var first = socket.messages.makeAsyncIterator()
                #expect(try await first.next() == .text("hello"))
            }
            let reader = Task { () -> CourierError? in
                do {
                    for try await _ in socket.messages {}
                    return nil
                } catch {
                    return error as? CourierError ?? CourierError(wrapping: error)
                }
            }
            if hostile.stalls {
                #expect(await clock.waitForSleep(until: .seconds(20)), "the keep-alive ping is due: \(clock.deadlines)")
                clock.advance(to: .seconds(20))
                #expect(await clock.waitForSleep(until: .seconds(50)), "its pong is awaited: \(clock.deadlines)")
                clock.advance(to: .seconds(50))
            }
            failure = await reader.value
            status = socket.closeStatus
        }
        #expect(failure?.kind == kind, "\(failure.map { "\($0)" } ?? "finished normally")")
        #expect(status?.code == code, "\(status.map { "\($0)" } ?? "no status")")
        if let failure, kind == .webSocketClosed { #expect(failure.webSocketCloseStatus?.code == code) }
        #expect(server.shutdown().problems == [])
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    // MARK: - Error mapping (units)

    @Test func curlOutOfMemoryIsAHeadLimitOnlyWhileAHeadIsRead() {
        let url = URL(fileURLWithPath: "/")
        let inHead = CourierError(curl: CCURLE_OUT_OF_MEMORY, detail: "", url: url, readingHead: true)
        #expect(inHead.kind == .responseTooLarge)
        #expect(inHead.message.contains("100 KiB"))
        let elsewhere = CourierError(curl: CCURLE_OUT_OF_MEMORY, detail: "", url: url, readingHead: false)
        #expect(elsewhere.kind == .transportFailed)
    }

    @Test func curlFramingErrorsAreInvalidResponses() {
        let url = URL(fileURLWithPath: "/")
        for detail in [
            "Illegal or missing hexadecimal sequence in chunked-encoding", "Malformed encoding found in chunked-encoding",
            "chunk hex-length char not a hex digit: 0x7a", "invalid chunk size: 'zz'",
        ] {
            #expect(CourierError(curl: CCURLE_RECV_ERROR, detail: detail, url: url).kind == .invalidResponse, "\(detail)")
        }
        // A chunked body's malformed trailers (where a `0x10` chunk size leads) fail in libcurl's
        // header store, with its code: the sentence is what tells.
        let trailers = CourierError(curl: CCURLE_BAD_FUNCTION_ARGUMENT, detail: "Failed reading the chunked-encoded stream", url: url)
        #expect(trailers.kind == .invalidResponse)
        #expect(CourierError(curl: CCURLE_BAD_FUNCTION_ARGUMENT, detail: "", url: url).kind == .transportFailed)
        let cut = CourierError(curl: CCURLE_RECV_ERROR, detail: "Connection reset by peer", url: url)
        #expect(cut.kind == .connectionLost)
    }

    @Test func foundationFramingAndCodingErrorsAreInvalidResponses() {
        func error(_ code: URLError.Code, _ message: String) -> CourierError {
            CourierError(urlError: URLError(code, userInfo: [NSLocalizedDescriptionKey: message]), url: nil)
        }
        #expect(error(.networkConnectionLost, "Malformed encoding found in chunked-encoding").kind == .invalidResponse)
        #expect(error(.networkConnectionLost, "Invalid Content-Length: value").kind == .invalidResponse)
        #expect(error(.networkConnectionLost, "Error while processing content unencoding: invalid distance code").kind == .invalidResponse)
        #expect(error(.networkConnectionLost, "transfer closed with 95 bytes remaining to read").kind == .connectionLost)
        #expect(error(.unknown, "Failed reading the chunked-encoded stream").kind == .invalidResponse)
    }

    @Test func contentLengthRules() {
        func problem(_ fields: [(String, String)]) -> String? {
            ResponseHead(
                statusCode: 200, fields: fields.map { (name: $0.0, value: $0.1) }, url: URL(fileURLWithPath: "/"),
                httpVersion: "HTTP/1.1"
            ).contentLengthProblem
        }
        #expect(problem([("Content-Length", "5")]) == nil)
        #expect(problem([("Content-Length", " 5 ")]) == nil)
        #expect(problem([("Content-Length", "5, 5")]) == nil)
        #expect(problem([("Content-Length", "5"), ("Content-Length", "5")]) == nil)
        #expect(problem([]) == nil)
        #expect(problem([("Content-Length", "5, 6")]) != nil)
        #expect(problem([("Content-Length", "5"), ("content-length", "6")]) != nil)
        #expect(problem([("Content-Length", "-5")]) != nil)
        #expect(problem([("Content-Length", "+5")]) != nil)
        #expect(problem([("Content-Length", "")]) != nil)
        #expect(problem([("Content-Length", "0x10")]) != nil)
        #expect(problem([("Content-Length", "99999999999999999999999")]) != nil)
        #expect(problem([("Content-Length", "9223372036854775807")]) == nil)
        // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3), whatever it says.
        #expect(problem([("Transfer-Encoding", "chunked"), ("Content-Length", "5, 6")]) == nil)
    }

    /// The socket check sees a connection while it is open, and not after it is closed.
    @Test func socketCensusSeesOpenConnections() async throws {
        let server = try ScriptedReplyServer([.hold])
        defer { server.stop() }
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(server.port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(connected == 0)
        #expect(SocketCensus.connections(toPort: server.port) == 1)
        close(client)
        #expect(await eventually(timeout: .seconds(60)) { SocketCensus.connections(toPort: server.port) == 0 })
    }

    // MARK: - Helpers

    struct Run {
        let response: DataResponse<Data, CourierError>
        /// The time the test moved the session's clock on before the request ended.
        let advanced: Duration
    }

    /// Sends a GET to `server` on a fresh session with idle timeout `timeout`, drops the session
    /// and stops the server.
    ///
    /// The timeouts run on a ``ManualTransportClock``. With the 30 s of the cases that must end by
    /// themselves the clock never moves, so their timeout cannot end them, however slow the
    /// machine: the outcome they end with is the reply's doing, and a hang is caught by the
    /// suite's time limit. A case that ends by timing out (a shorter `timeout`) gets the time moved
    /// on in quarters of its timeout until it ends.
    static func run(
        _ transport: TransportUnderTest, server: ScriptedReplyServer, timeout: TimeInterval,
        send: @escaping @Sendable (Session, URL) async -> DataResponse<Data, CourierError> = { session, url in
            await session.request(url).serializingData().response
        }
    ) async throws -> Run {
        defer { server.stop() }
        let clock = ManualTransportClock()
        let start = clock.now
        let session = makeSession(transport) {
            $0.requestTimeout = timeout
            $0.transportClock = .manual(clock)
        }
        let url = server.url
        let response =
            timeout >= 30
            ? await send(session, url)
            : await clock.advancing(by: .seconds(timeout / 4)) { await send(session, url) }
        return Run(response: response, advanced: clock.now - start)
    }

    /// Checks that `run` ended as `expected` (nothing for `.notRun`).
    static func expect(_ run: Run, endedAs expected: Outcome, sourceLocation: SourceLocation = #_sourceLocation) {
        let response = run.response
        switch expected {
        case .fails(let kind):
            #expect(response.error?.kind == kind, "\(response.error.map { "\($0)" } ?? "succeeded")", sourceLocation: sourceLocation)
            #expect(response.value == nil, sourceLocation: sourceLocation)
        case .succeeds(let status, let body):
            #expect(response.error == nil, "\(response.error.map { "\($0)" } ?? "")", sourceLocation: sourceLocation)
            #expect(response.response?.statusCode == status, sourceLocation: sourceLocation)
            #expect(response.value == body, sourceLocation: sourceLocation)
        case .notRun:
            break
        }
    }

    /// No socket of this process is still connected to the server's port once the session is gone
    /// and the server stopped (sockets in TIME_WAIT belong to no process and do not count). Exact
    /// even while other tests run: nothing else connects to this port.
    static func expectNoSocketLeft(toPort port: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        let closed = await eventually(timeout: .seconds(60)) { SocketCensus.connections(toPort: port) == 0 }
        #expect(closed, "\(SocketCensus.connections(toPort: port)) socket(s) to port \(port) still open", sourceLocation: sourceLocation)
    }
}

/// Bodies for the gzip rows: a valid stream of 200,000 zeros, cut or corrupted half way.
enum Gzip {
    static let plain = Data(count: 200_000)
    static let stream = DeflateBomb.gzip(zeros: plain.count)
    static let half = stream.prefix(stream.count / 2)

    /// The first half of the stream, then garbage up to the announced length.
    static var corrupt: [ScriptedReplyServer.Step] {
        var body = Data(half)
        body.append(Data(repeating: 0xFF, count: stream.count - half.count))
        return [.readHead, .write(Data("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n".utf8)), .write(body)]
    }

    /// The first half of the stream, with a `Content-Length` that matches it.
    static var truncated: [ScriptedReplyServer.Step] {
        [.readHead, .write(Data("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(half.count)\r\n\r\n".utf8)), .write(Data(half))]
    }
}

/// This process's TCP sockets, from `/proc/net/tcp` and `/proc/self/fd`.
enum SocketCensus {
    /// This process's sockets connected to 127.0.0.1:`port`: a client descriptor that was never
    /// closed, whatever its TCP state. Only this process's: `/proc/net/tcp` lists the whole
    /// machine's sockets, and on a shared machine another process's client of an earlier server
    /// that had the same port (left in CLOSE_WAIT) was counted as a leak here (4 instead of 1).
    static func connections(toPort port: Int) -> Int {
        guard let table = read("/proc/net/tcp") else { return -1 }
        let remote = "0100007F:" + String(format: "%04X", port)
        let mine = ownSocketInodes()
        return table.split(separator: "\n").dropFirst().reduce(0) { count, line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9, columns[2] == remote, columns[9] != "0", mine.contains(String(columns[9])) else { return count }
            return count + 1
        }
    }

    /// The inodes of the sockets this process holds (`socket:[INODE]` links in /proc/self/fd).
    static func ownSocketInodes() -> Set<String> {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return Set(
            descriptors.compactMap { descriptor -> String? in
                guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + descriptor),
                    target.hasPrefix("socket:[")
                else { return nil }
                return String(target.dropFirst(8).dropLast())
            })
    }

    /// The whole of a /proc file (Foundation stops after the first page of files that report size 0).
    static func read(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = Glibc.read(descriptor, &buffer, buffer.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return count == 0 ? String(decoding: bytes, as: UTF8.self) : nil }
            bytes.append(contentsOf: buffer[0..<count])
        }
    }
}
