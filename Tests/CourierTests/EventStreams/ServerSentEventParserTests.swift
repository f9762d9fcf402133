import Testing
import Foundation
@testable import Courier

/// The WHATWG "server-sent events" parsing rules, one case per rule. Every case is also fed one byte
/// at a time, split at every position into two chunks, and (when short) at every pair of positions
/// into three: the parser must give the same events, last event ID and retry every way.
struct ServerSentEventParserTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let stream: [UInt8]
        let events: [ServerSentEvent]
        var lastEventID: String? = nil
        var reconnectionTime: Int? = nil
        var testDescription: String { name }

        init(_ name: String, _ stream: String, _ events: [ServerSentEvent], lastEventID: String? = nil, retry: Int? = nil) {
            self.init(name, Array(stream.utf8), events, lastEventID: lastEventID, retry: retry)
        }

        init(_ name: String, _ stream: [UInt8], _ events: [ServerSentEvent], lastEventID: String? = nil, retry: Int? = nil) {
            self.name = name
            self.stream = stream
            self.events = events
            self.lastEventID = lastEventID
            self.reconnectionTime = retry
        }
    }

    static let cases: [Case] = [
        Case("one data line", "data: hello\n\n", [ServerSentEvent(data: "hello")]),
        Case("no space after the colon", "data:hello\n\n", [ServerSentEvent(data: "hello")]),
        Case("only one leading space is stripped", "data:  two\n\n", [ServerSentEvent(data: " two")]),
        Case("data lines are joined with LF", "data: a\ndata: b\ndata: c\n\n", [ServerSentEvent(data: "a\nb\nc")]),
        Case("a field without a colon is a field with an empty value", "data\n\n", [ServerSentEvent(data: "")]),
        Case("two empty data lines", "data\ndata\n\n", [ServerSentEvent(data: "\n")]),
        Case("an empty data value", "data:\n\n", [ServerSentEvent(data: "")]),
        Case("CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", [ServerSentEvent(data: "a"), ServerSentEvent(data: "b")]),
        Case("CR line ends", "data: a\r\rdata: b\r\r", [ServerSentEvent(data: "a"), ServerSentEvent(data: "b")]),
        Case("mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", [ServerSentEvent(data: "a\nb\nc")]),
        Case(
            "CR CR is two line ends, LF CR two, CR LF one",
            "data: a\r\r" + "data: b\n\r" + "data: c\r\n\n", [ServerSentEvent(data: "a"), ServerSentEvent(data: "b"), ServerSentEvent(data: "c")]),
        Case("a leading byte-order mark is dropped", [0xEF, 0xBB, 0xBF] + Array("data: a\n\n".utf8), [ServerSentEvent(data: "a")]),
        Case("a second byte-order mark is part of the field name", [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("data: a\n\n".utf8), []),
        Case(
            "a byte-order mark later in the stream is data", Array("data: ".utf8) + [0xEF, 0xBB, 0xBF] + Array("x\n\n".utf8),
            [ServerSentEvent(data: "\u{FEFF}x")]),
        Case(
            "event sets the type of one event", "event: ping\ndata: x\n\ndata: y\n\n",
            [ServerSentEvent(event: "ping", data: "x"), ServerSentEvent(data: "y")]),
        Case("an empty event type is message", "event:\ndata: x\n\n", [ServerSentEvent(data: "x")]),
        Case(
            "the last event ID carries over", "id: 1\ndata: a\n\ndata: b\n\n",
            [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(id: "1", data: "b")], lastEventID: "1"),
        Case(
            "an empty id resets it", "id: 1\ndata: a\n\nid\ndata: b\n\n",
            [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(data: "b")]),
        Case(
            "an id containing NUL is ignored", "id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n",
            [ServerSentEvent(id: "1", data: "a"), ServerSentEvent(id: "1", data: "b")], lastEventID: "1"),
        Case("an id without data still becomes the last event ID", "id: 7\n\n", [], lastEventID: "7"),
        Case(
            "an id of an unfinished event is not yet the last event ID", "id: 1\ndata: a\n\nid: 2\ndata: b\n",
            [ServerSentEvent(id: "1", data: "a")], lastEventID: "1"),
        Case("retry sets the reconnection time", "retry: 1500\ndata: x\n\n", [ServerSentEvent(data: "x", retry: 1500)], retry: 1500),
        Case(
            "retry with a non-digit is ignored", "retry: 15x\ndata: x\n\nretry: -1\n\nretry: 1.5\n\nretry:\n\nretry: \n\n",
            [ServerSentEvent(data: "x")]),
        Case("retry alone changes the reconnection time", "retry: 10\n\nretry: 20\n\n", [], retry: 20),
        Case("retry past Int's range saturates", "retry: 99999999999999999999999\n\n", [], retry: Int.max),
        Case("comments are ignored", ": comment\ndata: x\n: another\n\n:\n\n", [ServerSentEvent(data: "x")]),
        Case("unknown fields are ignored", "foo: bar\ndata: x\nDATA: y\ndata : z\n\n", [ServerSentEvent(data: "x")]),
        Case("an event with no data is not dispatched", "event: x\n\ndata: y\n\n", [ServerSentEvent(data: "y")]),
        Case("blank lines alone dispatch nothing", "\n\n\r\n\r", []),
        Case("an unterminated final event is discarded", "data: a\n\ndata: b\n", [ServerSentEvent(data: "a")]),
        Case("an unterminated final line is discarded", "data: a\n\ndata: b", [ServerSentEvent(data: "a")]),
        Case("a colon in the value is kept", "data: a: b\n\n", [ServerSentEvent(data: "a: b")]),
        Case("invalid UTF-8 becomes U+FFFD", Array("data: ".utf8) + [0xFF, 0x41] + Array("\n\n".utf8), [ServerSentEvent(data: "\u{FFFD}A")]),
        Case("multi-byte characters survive any split", "data: héllo 日本 🎉\n\n", [ServerSentEvent(data: "héllo 日本 🎉")]),
        Case(
            "an LLM-style stream", "event: message\ndata: {\"token\":\"Hel\"}\n\ndata: {\"token\":\"lo\"}\n\ndata: [DONE]\n\n",
            [ServerSentEvent(data: "{\"token\":\"Hel\"}"), ServerSentEvent(data: "{\"token\":\"lo\"}"), ServerSentEvent(data: "[DONE]")]),
    ]

    @Test(arguments: cases)
    func parsesTheSameEveryWayTheStreamIsSplit(_ testCase: Case) throws {
        let stream = Data(testCase.stream)
        var splits: [[Int]] = [[], Array(1..<max(1, stream.count))]
        for cut in 1..<max(1, stream.count) { splits.append([cut]) }
        if stream.count <= 48 {
            for first in 1..<max(1, stream.count) {
                for second in (first + 1)..<max(first + 1, stream.count) { splits.append([first, second]) }
            }
        }
        for cuts in splits {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            var previous = 0
            for cut in cuts + [stream.count] {
                events += try parser.parse(stream.subdata(in: previous..<cut))
                previous = cut
            }
            #expect(events == testCase.events, "split at \(cuts)")
            #expect(parser.lastEventID == testCase.lastEventID, "split at \(cuts)")
            #expect(parser.reconnectionTime == testCase.reconnectionTime, "split at \(cuts)")
        }
    }

    /// The error parsing `stream` in pieces of `piece` bytes ends with, if any.
    static func failure(feeding stream: Data, inPiecesOf piece: Int, maximumEventSize: Int) -> CourierError? {
        var parser = ServerSentEventParser(maximumEventSize: maximumEventSize)
        var offset = 0
        while offset < stream.count {
            let end = min(stream.count, offset + piece)
            do { _ = try parser.parse(stream.subdata(in: offset..<end)) } catch { return error }
            offset = end
        }
        return nil
    }

    @Test func anEventPastTheLimitFailsWhateverTheSplit() throws {
        let stream = Data("data: 0123456789\ndata: 0123456789\n\n".utf8)
        for piece in [1, 3, 7, stream.count] {
            let failure = Self.failure(feeding: stream, inPiecesOf: piece, maximumEventSize: 20)
            #expect(failure?.kind == .responseTooLarge, "pieces of \(piece)")
            #expect(failure?.message.contains("20 bytes") == true)
        }
        // At the limit passes: the last line (16 bytes) and the data before it (11) are 27 bytes.
        var parser = ServerSentEventParser(maximumEventSize: 27)
        #expect(try parser.parse(stream) == [ServerSentEvent(data: "0123456789\n0123456789")])
    }

    /// Found by the fuzzer: a long line of an unknown field passed when it came in one chunk and
    /// failed when split; every line now counts against the limit, however it arrives.
    @Test func aLongLineFailsTheSameWhetherSplitOrNot() throws {
        let stream = Data((String(repeating: "x", count: 35) + "\ndata: z\n\n").utf8)
        for piece in [1, 3, stream.count] {
            let failure = Self.failure(feeding: stream, inPiecesOf: piece, maximumEventSize: 7)
            #expect(failure?.kind == .responseTooLarge, "pieces of \(piece)")
        }
    }

    @Test func aLineWithoutEndIsBoundedToo() throws {
        var parser = ServerSentEventParser(maximumEventSize: 1024)
        let comment = Data((": " + String(repeating: "x", count: 600)).utf8)
        _ = try parser.parse(comment)
        #expect(throws: CourierError.self) { _ = try parser.parse(comment) }
    }

    /// A stream over several connections (issue 36): each connection starts from a clean state,
    /// only the last event ID and the reconnection time carry over.
    struct Reconnection: Sendable, CustomTestStringConvertible {
        let name: String
        let connections: [[UInt8]]
        let events: [ServerSentEvent]
        var lastEventID: String? = nil
        var reconnectionTime: Int? = nil
        var testDescription: String { name }

        init(_ name: String, _ connections: [String], _ events: [ServerSentEvent], lastEventID: String? = nil, retry: Int? = nil) {
            self.init(name, connections.map { Array($0.utf8) }, events, lastEventID: lastEventID, retry: retry)
        }

        init(_ name: String, _ connections: [[UInt8]], _ events: [ServerSentEvent], lastEventID: String? = nil, retry: Int? = nil) {
            self.name = name
            self.connections = connections
            self.events = events
            self.lastEventID = lastEventID
            self.reconnectionTime = retry
        }
    }

    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    static let reconnections: [Reconnection] = [
        Reconnection(
            "an unterminated event is dropped", ["id: 1\ndata: one\n\ndata: partial\n", "data: two\n\n"],
            [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "1", data: "two")], lastEventID: "1"),
        Reconnection(
            "an unterminated line is dropped", ["data: one\n\ndata: par", "tial\n\ndata: two\n\n"],
            [ServerSentEvent(data: "one"), ServerSentEvent(data: "two")]),
        Reconnection(
            "a CR ending a connection does not swallow the next one's LF", ["data: one\n\ndata: x\r", "\ndata: two\n\n"],
            [ServerSentEvent(data: "one"), ServerSentEvent(data: "two")]),
        Reconnection(
            "the id of an unterminated event is not the last event ID", ["id: 1\ndata: one\n\nid: 2\ndata: partial\n", "data: two\n\n"],
            [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "1", data: "two")], lastEventID: "1"),
        Reconnection(
            "the type of an unterminated event is dropped", ["event: ping\ndata: partial\n", "data: two\n\n"], [ServerSentEvent(data: "two")]),
        Reconnection(
            "a retry of an unterminated event still applies", ["retry: 750\ndata: partial\n", "data: two\n\n"],
            [ServerSentEvent(data: "two")], retry: 750),
        Reconnection(
            "the last event ID carries over", ["id: 7\ndata: a\n\n", "data: b\n\n"],
            [ServerSentEvent(id: "7", data: "a"), ServerSentEvent(id: "7", data: "b")], lastEventID: "7"),
        Reconnection(
            "every connection may start with a byte-order mark",
            [bom + Array("data: one\n\n".utf8), bom + Array("data: two\n\n".utf8), Array("data: three\n\n".utf8)],
            [ServerSentEvent(data: "one"), ServerSentEvent(data: "two"), ServerSentEvent(data: "three")]),
        Reconnection(
            "a connection that ends inside a byte-order mark", [Array("data: one\n\n".utf8), [0xEF, 0xBB], bom + Array("data: two\n\n".utf8)],
            [ServerSentEvent(data: "one"), ServerSentEvent(data: "two")]),
        Reconnection(
            "a second byte-order mark is still part of the field name", [Array("data: one\n\n".utf8), bom + bom + Array("data: two\n\n".utf8)],
            [ServerSentEvent(data: "one")]),
    ]

    /// Every connection is also split at each position: the outcome may not depend on it.
    @Test(arguments: reconnections)
    func eachConnectionStartsFromACleanState(_ testCase: Reconnection) throws {
        let longest = testCase.connections.map(\.count).max() ?? 0
        for cut in 0...longest {
            var parser = ServerSentEventParser()
            var events: [ServerSentEvent] = []
            for (index, connection) in testCase.connections.enumerated() {
                if index > 0 { parser.beginNewConnection() }
                let bytes = Data(connection)
                let split = min(cut, bytes.count)
                events += try parser.parse(bytes.prefix(split))
                events += try parser.parse(bytes.suffix(from: split))
            }
            #expect(events == testCase.events, "split at \(cut)")
            #expect(parser.lastEventID == testCase.lastEventID, "split at \(cut)")
            #expect(parser.reconnectionTime == testCase.reconnectionTime, "split at \(cut)")
        }
    }

    @Test func theWireFormRoundTrips() throws {
        let events = [ServerSentEvent(id: "42", event: "update", data: "line 1\nline 2", retry: 500), ServerSentEvent(id: "42", data: "x")]
        var parser = ServerSentEventParser()
        #expect(
            try parser.parse(Data(events.map(\.description).joined().utf8)) == [
                ServerSentEvent(id: "42", event: "update", data: "line 1\nline 2", retry: 500), ServerSentEvent(id: "42", data: "x"),
            ])
    }
}
