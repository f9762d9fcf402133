import Testing
import Foundation
@testable @_spi(Transport) import Courier

/// The opening handshake (RFC 6455 §4.1, §4.2.2): the request head, the response head read from
/// any split, and the client's checks of the answer.
struct WebSocketHandshakeTests {
    static let nonce = Array("the sample nonce".utf8)
    static let url = URL(string: "ws://example.com/chat?room=1")!

    static func request(
        _ url: URL = url, protocols: [String] = [], headers: HTTPHeaders = [],
        offersCompression: Bool = false
    ) throws -> WebSocketHandshakeRequest {
        try WebSocketHandshakeRequest(url: url, protocols: protocols, headers: headers, offersCompression: offersCompression, nonce: nonce)
    }

    static func head(_ text: String) throws -> ResponseHead {
        var reader = WebSocketResponseHeadReader(url: url)
        let result = try reader.read(Data(text.utf8))
        return try #require(result).head
    }

    static let accepting =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"

    /// §1.3 and §4.2.2: the RFC's own key and accept value.
    @Test func computesTheRFCAcceptValue() throws {
        let request = try Self.request()
        #expect(request.key == "dGhlIHNhbXBsZSBub25jZQ==")
        #expect(WebSocketHandshakeRequest.accept(forKey: request.key) == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    /// §4.1: the request line and every required header, then the offers and extra headers.
    @Test func buildsTheUpgradeRequestHead() throws {
        let request = try Self.request(
            protocols: ["chat", "superchat"], headers: ["Origin": "http://example.com"],
            offersCompression: true)
        #expect(
            String(decoding: request.head, as: UTF8.self) == """
                GET /chat?room=1 HTTP/1.1\r
                Host: example.com\r
                Upgrade: websocket\r
                Connection: Upgrade\r
                Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r
                Sec-WebSocket-Version: 13\r
                Sec-WebSocket-Protocol: chat, superchat\r
                Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r
                Origin: http://example.com\r
                \r

                """)
    }

    @Test(
        arguments: [
            ("ws://example.com", "GET / HTTP/1.1\r\nHost: example.com\r\n"),
            ("ws://example.com:80/a", "GET /a HTTP/1.1\r\nHost: example.com\r\n"),
            ("wss://example.com:443/a", "GET /a HTTP/1.1\r\nHost: example.com\r\n"),
            ("wss://example.com:8443/a%20b", "GET /a%20b HTTP/1.1\r\nHost: example.com:8443\r\n"),
            ("ws://127.0.0.1:9001/x#fragment", "GET /x HTTP/1.1\r\nHost: 127.0.0.1:9001\r\n"),
            ("ws://[::1]:9001/", "GET / HTTP/1.1\r\nHost: [::1]:9001\r\n"),
            ("https://example.com:80/", "GET / HTTP/1.1\r\nHost: example.com:80\r\n"),
        ] as [(String, String)])
    func writesTheTargetAndHost(url: String, start: String) throws {
        let request = try Self.request(try #require(URL(string: url)))
        #expect(String(decoding: request.head, as: UTF8.self).hasPrefix(start))
    }

    @Test func refusesWhatCannotBeSent() {
        #expect(throws: WebSocketHandshakeFailure.invalidURL("ftp://example.com/")) { try Self.request(URL(string: "ftp://example.com/")!) }
        #expect(throws: WebSocketHandshakeFailure.invalidSubprotocol("a b")) { try Self.request(protocols: ["a b"]) }
        #expect(throws: WebSocketHandshakeFailure.invalidSubprotocol("chat")) { try Self.request(protocols: ["chat", "chat"]) }
        #expect(throws: WebSocketHandshakeFailure.invalidSubprotocol("")) { try Self.request(protocols: [""]) }
        #expect(throws: WebSocketHandshakeFailure.invalidHeader("X Bad")) { try Self.request(headers: ["X Bad": "1"]) }
        #expect(throws: WebSocketHandshakeFailure.invalidHeader("X-Token")) { try Self.request(headers: ["X-Token": "a\r\nHost: evil"]) }
        #expect(throws: WebSocketHandshakeFailure.invalidHeader("host")) { try Self.request(headers: ["host": "other"]) }
        #expect(throws: WebSocketHandshakeFailure.invalidHeader("Sec-WebSocket-Key")) { try Self.request(headers: ["Sec-WebSocket-Key": "x"]) }
    }

    @Test func drawsAFreshKeyEachTime() throws {
        let one = try WebSocketHandshakeRequest(url: Self.url)
        let two = try WebSocketHandshakeRequest(url: Self.url)
        #expect(one.key != two.key)
        #expect(Data(base64Encoded: one.key)?.count == 16)
    }

    // MARK: Reading the response head

    @Test func readsTheHeadFromAnySplitAndKeepsTheBytesAfterIt() throws {
        let text = Self.accepting + "\r\n"
        let stream = Data(text.utf8) + Data([0x81, 0x02, 0x68, 0x69])
        for piece in [1, 2, 3, 7, stream.count] {
            var reader = WebSocketResponseHeadReader(url: Self.url)
            var result: WebSocketResponseHeadReader.Result?
            var offset = 0
            while result == nil, offset < stream.count {
                let end = min(stream.count, offset + piece)
                result = try reader.read(stream.subdata(in: offset..<end))
                offset = end
            }
            let found = try #require(result, "piece \(piece)")
            #expect(found.head.statusCode == 101)
            #expect(found.head.headers["sec-websocket-accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
            #expect(found.remainder + stream.subdata(in: offset..<stream.count) == Data([0x81, 0x02, 0x68, 0x69]), "piece \(piece)")
        }
    }

    @Test func acceptsBareLineFeeds() throws {
        let head = try Self.head("HTTP/1.1 101\nUpgrade: websocket\n\n")
        #expect(head.statusCode == 101 && head.headers["Upgrade"] == "websocket")
    }

    @Test(arguments: [
        "HTTP/2 101\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 1O1 Switching\r\n\r\n",
        "HTTP/1.1 10\r\n\r\n",
        "HTTP/1.1 099 Low\r\n\r\n",
        "HTTP/1.1 101Switching\r\n\r\n",
        "HTTP/1.1 101 OK\r\nNo colon here\r\n\r\n",
        "HTTP/1.1 101 OK\r\nUpgrade: websocket\r\n folded\r\n\r\n",
        "HTTP/1.1 101 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 101 OK\r\n: empty name\r\n\r\n",
    ])
    func refusesMalformedHeads(text: String) {
        var reader = WebSocketResponseHeadReader(url: Self.url)
        #expect(throws: WebSocketHandshakeFailure.self) { try reader.read(Data(text.utf8)) }
    }

    @Test func boundsTheHeadSize() throws {
        var reader = WebSocketResponseHeadReader(url: Self.url, maximumSize: 100)
        #expect(try reader.read(Data("HTTP/1.1 101 OK\r\n".utf8)) == nil)
        #expect(throws: WebSocketHandshakeFailure.responseHeadTooLarge(limit: 100)) {
            try reader.read(Data(String(repeating: "X", count: 90).utf8))
        }
        var lines = WebSocketResponseHeadReader(url: Self.url, maximumSize: 100)
        #expect(throws: WebSocketHandshakeFailure.responseHeadTooLarge(limit: 100)) {
            try lines.read(Data(("HTTP/1.1 101 OK\r\n" + String(repeating: "A: b\r\n", count: 20)).utf8))
        }
    }

    // MARK: Verifying the answer

    @Test func acceptsAValidAnswerAndExposesTheChosenSubprotocol() throws {
        let request = try Self.request(protocols: ["chat", "superchat"])
        #expect(try request.verify(Self.head(Self.accepting + "\r\n")) == .init(subprotocol: nil))
        let chosen = try Self.head(Self.accepting + "Sec-WebSocket-Protocol: superchat\r\n\r\n")
        #expect(try request.verify(chosen) == .init(subprotocol: "superchat"))
        // Header names and the Upgrade and Connection values compare without case; Connection is a list.
        let relaxed = try Self.head(
            "HTTP/1.1 101 x\r\nupgrade: WebSocket\r\nconnection: keep-alive, upgrade\r\nsec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        #expect(try request.verify(relaxed) == .init(subprotocol: nil))
    }

    @Test(
        arguments: [
            ("HTTP/1.1 200 OK\r\n\r\n", WebSocketHandshakeFailure.unexpectedStatus(200)),
            ("HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\n\r\n", .unexpectedStatus(302)),
            ("HTTP/1.0 403 Forbidden\r\n\r\n", .unexpectedStatus(403)),
            ("HTTP/1.1 101 x\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n", .missingUpgrade),
            ("HTTP/1.1 101 x\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n", .missingUpgrade),
            ("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: keep-alive\r\n\r\n", .missingConnectionUpgrade),
            ("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", .invalidAccept(nil)),
            ("HTTP/1.1 101 x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: AAAA\r\n\r\n", .invalidAccept("AAAA")),
            (accepting + "Sec-WebSocket-Protocol: other\r\n\r\n", .unexpectedSubprotocol("other")),
            (accepting + "Sec-WebSocket-Protocol: chat\r\nSec-WebSocket-Protocol: chat\r\n\r\n", .unexpectedSubprotocol("chat, chat")),
            (accepting + "Sec-WebSocket-Extensions: permessage-deflate\r\n\r\n", .unexpectedExtension("permessage-deflate")),
        ] as [(String, WebSocketHandshakeFailure)])
    func refusesInvalidAnswers(text: String, failure: WebSocketHandshakeFailure) throws {
        let request = try Self.request(protocols: ["chat"])
        let head = try Self.head(text)
        #expect(throws: failure) { try request.verify(head) }
    }
}
