import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Conformance-style checks (#39), in Courier's own words: one test per behaviour an HTTP/1.1
/// client must get right, run on both transports wherever the behaviour applies. This file holds
/// the replies scripted byte by byte (``ScriptedReplyServer``, the hostile matrix's server);
/// `ExchangeConformanceTests` holds the exchanges played by CourierTestServer.
///
/// Replies that must end without the server closing are followed by `hold` (the connection stays
/// open): a client that waited for more bytes, or for the close, would hang there, and the
/// suite's hang limit (120 s) would fail it. No request here can time out by itself (the session's
/// clock is a manual one that never moves).
///
/// What each transport does, behaviour by behaviour (both files):
///
/// | Behaviour | curl | URLSession |
/// | --- | --- | --- |
/// | non-HTTP reply (an SSH banner, a TLS alert) | invalidResponse | invalidResponse |
/// | 204 with `Content-Length: 5`, no body, held open | 204, empty body | 204, empty body |
/// | 304 with `Content-Length: 5`, no body, held open | 304, empty body | 304, empty body |
/// | HEAD answered with `Content-Length: 1000`, no body, held open | 200, empty body, the length kept in the fields | same |
/// | fewer body bytes than `Content-Length`, then close | connectionLost | connectionLost |
/// | chunked without the last chunk, then close | connectionLost | connectionLost |
/// | two different `Content-Length` fields; the list `5, 6` | invalidResponse | invalidResponse |
/// | empty chunked response body (`0` CRLF CRLF), held open | 200, empty body | 200, empty body |
/// | empty streamed request body | sent chunked, no data | sent, no data |
/// | a name repeated in the request | each line apart, in order | one line, values joined with `, ` |
/// | a name repeated in the response | each line apart on `headerFields`, in order | one field, values joined with `, ` |
/// | cancel before the head | cancelled; the server sees the client go | same |
/// | cancel after the head, before the body | cancelled, no body byte handed out; the server sees the client go | same |
/// | 1 MiB echo | full duplex (`streamRequest` with a body), byte for byte | plain upload, echoed whole, byte for byte |
/// | under-read (the consumer leaves after one chunk) | cancelled; the server sees the client go; no socket left | same |
/// | drip-read (the consumer pauses at every chunk) | every byte, in order | every byte, in order |
/// | response trailers | on `trailerFields`, in wire order | not run: FoundationNetworking traps the process |
/// | request trailers | sent after the last chunk | refused before sending (invalidConfiguration) |
/// | full duplex, the server answers before reading the body | the answer is handed out before the body ends; the body's producer is ended | refused before sending (invalidConfiguration, full duplex needs curl) |
///
/// Neighbours tested elsewhere (`DuplexStreamTests`, `WebSocketOpeningTests`):
///
/// | Behaviour | curl | URLSession |
/// | --- | --- | --- |
/// | a name repeated in a full-duplex request's headers | each line apart, in order | full duplex refused before sending |
/// | a name repeated in a WebSocket handshake's headers | each line apart, in order | one line, values joined (a `URLRequest`) |
/// | full duplex, the consumer reads nothing of a 64 MiB answer | the server is held back: beyond the socket buffers Courier holds its 1 MiB window and curl's buffer at most; then every byte, in order | refused before sending |
/// | full duplex, the server reads nothing of the body | beyond the socket buffers the body is pulled 256 KiB (the send buffer) and curl's upload buffer ahead at most | refused before sending |
/// | full-duplex echo, servers nobody here wrote | hypercorn over HTTP/1.1 and HTTP/2, Node.js over HTTP/1.1: each piece echoed before the next is written | refused before sending |
/// | trailers both ways, servers nobody here wrote | request trailers read by Node.js (HTTP/1.1) and its response trailers read back, in order; hypercorn's response trailers over HTTP/2 | refused before sending |
@Suite(.hangLimit(.seconds(120))) struct WireConformanceTests {
    typealias Outcome = HostileServerMatrixTests.Outcome

    /// One scripted reply, the method that asks for it, and what each transport must make of it.
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        var method: HTTPMethod = .get
        let script: [ScriptedReplyServer.Step]
        let curl: Outcome
        let urlSession: Outcome

        var testDescription: String { name }
    }

    static func head(_ text: String) -> Data { Data(text.utf8) }
    static let ok = "HTTP/1.1 200 OK\r\n"
    static let empty = Data()

    /// Both transports must end the same way.
    static func both(_ name: String, method: HTTPMethod = .get, _ script: [ScriptedReplyServer.Step], _ outcome: Outcome) -> Case {
        Case(name: name, method: method, script: script, curl: outcome, urlSession: outcome)
    }

    static let cases: [Case] = [
        both(
            "non-HTTP reply: an SSH banner", [.readHead, .write(head("SSH-2.0-OpenSSH_9.6\r\n"))],
            .fails(.invalidResponse)),
        both(
            "non-HTTP reply: a TLS alert", [.readHead, .write(Data([0x15, 0x03, 0x01, 0x00, 0x02, 0x02, 0x28]))],
            .fails(.invalidResponse)),
        both(
            "204 with a Content-Length and no body",
            [.readHead, .write(head("HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n")), .hold],
            .succeeds(status: 204, body: empty)),
        both(
            "304 with a Content-Length and no body",
            [.readHead, .write(head("HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\nETag: \"v1\"\r\n\r\n")), .hold],
            .succeeds(status: 304, body: empty)),
        both(
            "HEAD answered with a Content-Length and no body", method: .head,
            [.readHead, .write(head(ok + "Content-Length: 1000\r\nContent-Type: text/plain\r\n\r\n")), .hold],
            .succeeds(status: 200, body: empty)),
        both(
            "fewer body bytes than Content-Length, then close",
            [.readHead, .write(head(ok + "Content-Length: 100\r\n\r\nonly twenty bytes...."))],
            .fails(.connectionLost)),
        both(
            "chunked without the last chunk, then close",
            [.readHead, .write(head(ok + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n"))],
            .fails(.connectionLost)),
        both(
            "two Content-Length fields that differ",
            [.readHead, .write(head(ok + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")), .hold],
            .fails(.invalidResponse)),
        both(
            "a Content-Length list that differs", [.readHead, .write(head(ok + "Content-Length: 5, 6\r\n\r\nhello!")), .hold],
            .fails(.invalidResponse)),
        both(
            "an empty chunked body", [.readHead, .write(head(ok + "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n")), .hold],
            .succeeds(status: 200, body: empty)),
    ]

    @Test(arguments: TransportUnderTest.available, cases)
    func scriptedReply(transport: TransportUnderTest, reply: Case) async throws {
        let expected = transport == .curl ? reply.curl : reply.urlSession
        let server = try ScriptedReplyServer(reply.script)
        let method = reply.method
        let outcome = try await HostileServerMatrixTests.run(transport, server: server, timeout: 30) { session, url in
            // An empty body is what these replies carry; the serializer takes it for every status.
            await session.request(url, method: method)
                .serializing(using: DataResponseSerializer(emptyResponseCodes: [200, 204, 205, 304])).response
        }
        #expect(server.connectionCount >= 1)
        HostileServerMatrixTests.expect(outcome, endedAs: expected)
        if case .succeeds = expected, method == .head {
            // The length describes what a GET would get; it is kept, not taken as a body to read.
            #expect(outcome.response.headerFields?["Content-Length"] == "1000")
        }
        await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
    }

    /// Full duplex against a server that answers as soon as it has the request head, reads none
    /// of the body and closes: the answer must reach the caller while the body is still open,
    /// and the body's producer must then be ended rather than left waiting. URLSession cannot
    /// stream both ways and refuses before sending.
    @Test(arguments: TransportUnderTest.available)
    func duplexWithAServerThatAnswersBeforeReadingTheBody(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([
            .readHead, .write(Self.head(Self.ok + "Content-Length: 5\r\nConnection: close\r\n\r\nearly")),
        ])
        defer { server.stop() }
        let (body, writer) = AsyncStream.makeStream(of: Data.self)
        let producerEnded = AsyncStream.makeStream(of: Void.self)
        writer.onTermination = { _ in producerEnded.continuation.finish() }
        let session = makeSession(transport)
        let stream = session.streamRequest(server.url, body: body)
        var received = Data()
        var failure: CourierError?
        do throws(CourierError) {
            // Nothing of the body was written yet: the answer comes anyway.
            var replies = stream.streamingData().makeAsyncIterator()
            while received.count < 5, let chunk = try await replies.next() { received += chunk }
            writer.yield(Data(repeating: 0x61, count: 1 << 20))
            writer.finish()
            while let chunk = try await replies.next() { received += chunk }
        } catch {
            failure = error
        }
        switch transport {
        case .curl:
            #expect(failure == nil, "\(failure.map { "\($0)" } ?? "")")
            #expect(received == Data("early".utf8))
            #expect(await stream.response?.statusCode == 200)
            for await _ in producerEnded.stream {}
        case .urlSession:
            #expect(failure?.kind == .invalidConfiguration)
            #expect(received.isEmpty)
            #expect(server.connectionCount == 0)
        }
        await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
    }
}
