import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Streams read as text, lines and JSON Lines (#26).
@Suite struct TypedStreamTests {
    static let text = "plain ascii, é (2 bytes), € (3 bytes), 🚀 (4 bytes)\nsecond line 日本語\r\nthird without break 👍🏽"

    // MARK: Decoders, chunk boundary by chunk boundary

    @Test func textPiecesNeverSplitACharacterWhateverTheChunking() {
        let bytes = Data(Self.text.utf8)
        for size in 1...8 {
            var pieces = UTF8Pieces()
            var output: [String] = []
            var offset = 0
            while offset < bytes.count {
                output += pieces.feed(bytes.subdata(in: offset..<min(offset + size, bytes.count))).values
                offset += size
            }
            output += pieces.finish().values
            #expect(output.joined() == Self.text, "chunk size \(size)")
            #expect(!output.joined().contains("\u{FFFD}"), "chunk size \(size)")
        }
    }

    @Test func invalidBytesBecomeReplacementCharactersWithoutStalling() {
        var pieces = UTF8Pieces()
        let first = pieces.feed(Data([0x61, 0xFF, 0x62])).values
        let second = pieces.feed(Data([0xE2, 0x82])).values
        let last = pieces.finish().values
        #expect(first == ["a\u{FFFD}b"])
        #expect(second == [])
        #expect(last == ["\u{FFFD}"])
    }

    @Test func linesAreWholeAcrossChunksWithCRLFAndAFinalLineWithoutBreak() {
        let bytes = Data(Self.text.utf8)
        for size in [1, 2, 3, 5, 13, bytes.count] {
            var lines = LineValues<String>(maximumLineLength: 1000) { String(decoding: $0, as: UTF8.self) }
            var output: [String] = []
            var offset = 0
            while offset < bytes.count {
                let fed = lines.feed(bytes.subdata(in: offset..<min(offset + size, bytes.count)))
                #expect(fed.failure == nil)
                output += fed.values
                offset += size
            }
            output += lines.finish().values
            #expect(
                output == ["plain ascii, é (2 bytes), € (3 bytes), 🚀 (4 bytes)", "second line 日本語", "third without break 👍🏽"],
                "chunk size \(size)")
        }
    }

    @Test func aLineLongerThanTheLimitIsAnErrorBeforeItGrowsFurther() {
        var lines = LineValues<Data>(maximumLineLength: 10) { $0 }
        let ten = lines.feed(Data("0123456789".utf8))
        let carriageReturn = lines.feed(Data("\r".utf8))  // a pending \r is not counted
        let two = lines.feed(Data("\n0123456789\nab".utf8))
        let tooLong = lines.feed(Data("c\n01234567890".utf8))
        #expect(ten.failure == nil && carriageReturn.failure == nil && two.failure == nil)
        #expect(two.values.count == 2)
        // The values before the too-long line still come, then the error.
        #expect(tooLong.values == [Data("abc".utf8)])
        #expect(tooLong.failure?.kind == .responseTooLarge)
        #expect(tooLong.failure?.message.contains("10 bytes") == true)
    }

    // MARK: Over the network

    struct Tick: Codable, Sendable, Equatable {
        let symbol: String
        let price: Double
    }

    static func jsonLines(_ count: Int) -> (Data, [Tick]) {
        let ticks = (0..<count).map { Tick(symbol: "S\($0)-€", price: Double($0) / 4) }
        let encoder = JSONEncoder()
        var body = Data()
        for (index, tick) in ticks.enumerated() {
            body.append((try? encoder.encode(tick)) ?? Data())
            body.append(contentsOf: index % 3 == 0 ? [0x0D, 0x0A] : [0x0A])
            if index % 5 == 0 { body.append(contentsOf: [0x20, 0x0A]) }  // blank lines are skipped
        }
        return (body, ticks)
    }

    @Test(arguments: TransportUnderTest.available)
    func stringsLinesAndDecodablesOverTheNetwork(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let text = String(repeating: Self.text + "\n", count: 2_000)
            server.route("/text", Resource(data: Data(text.utf8)))
            let (body, ticks) = Self.jsonLines(5_000)
            server.route("/ticks", Resource(data: body))
            let session = makeSession(transport, server: server)

            var pieces: [String] = []
            for try await piece in session.streamRequest("text").streamingStrings() { pieces.append(piece) }
            #expect(pieces.joined() == text)

            var lines: [String] = []
            for try await line in session.streamRequest("text").streamingLines() { lines.append(line) }
            #expect(lines.count == 6_000)
            #expect(lines.prefix(3) == ["plain ascii, é (2 bytes), € (3 bytes), 🚀 (4 bytes)", "second line 日本語", "third without break 👍🏽"])

            var decoded: [Tick] = []
            for try await tick in session.streamRequest("ticks").streamingDecodables(Tick.self) { decoded.append(tick) }
            #expect(decoded == ticks)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aTooLongLineEndsTheStreamWithABoundedErrorAndCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            // 8 MB without a line break, and the server would send more after the gate.
            server.route("/flood", Resource(data: Data(repeating: 0x41, count: 8 << 20)).pausing(afterBytes: 4 << 20, until: gate))
            defer { gate.open() }
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("flood")
            do throws(CourierError) {
                for try await _ in request.streamingLines(maximumLineLength: 64 << 10) {}
                Issue.record("a too-long line must end the stream")
            } catch {
                #expect(error.kind == .responseTooLarge)
            }
            #expect(await request.state == .cancelled)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aLineThatDoesNotDecodeIsASerializationFailure(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("{\"symbol\":\"A\",\"price\":1}\n{\"symbol\":2}\n{\"symbol\":\"C\",\"price\":3}\n"))
            let session = makeSession(transport, server: server)
            var decoded: [Tick] = []
            do throws(CourierError) {
                for try await tick in session.streamRequest("ticks").streamingDecodables(Tick.self) { decoded.append(tick) }
                Issue.record("the second line must fail")
            } catch {
                #expect(error.kind == .serializationFailed)
                #expect(error.underlyingError is DecodingError)
            }
            #expect(decoded == [Tick(symbol: "A", price: 1)])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func callbackFormsDeliverEveryValueThenTheEnd(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let (body, ticks) = Self.jsonLines(300)
            server.route("/ticks", Resource(data: body))
            server.route("/text", Resource(data: Data(Self.text.utf8)))
            let session = makeSession(transport, server: server)

            let values = Collected<Tick>()
            let end: DataStreamCompletion = await withCheckedContinuation { continuation in
                session.streamRequest("ticks").responseStreamDecodable(of: Tick.self) { event in
                    switch event {
                    case .value(let tick): values.append(tick)
                    case .complete(let completion): continuation.resume(returning: completion)
                    }
                }
            }
            #expect(end.error == nil)
            #expect(values.all == ticks)

            let text = Collected<String>()
            _ = await withCheckedContinuation { continuation in
                session.streamRequest("text").responseStreamString { event in
                    if case .value(let piece) = event { text.append(piece) } else { continuation.resume() }
                }
            }
            #expect(text.all.joined() == Self.text)

            let lines = Collected<String>()
            let linesEnd: DataStreamCompletion = await withCheckedContinuation { continuation in
                session.streamRequest("text").responseStreamLines(maximumLineLength: 20) { event in
                    switch event {
                    case .value(let line): lines.append(line)
                    case .complete(let completion): continuation.resume(returning: completion)
                    }
                }
            }
            #expect(linesEnd.error?.kind == .responseTooLarge)
            #expect(lines.all == [])
        }
    }
}
