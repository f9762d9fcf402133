import CourierLocking
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Full-duplex streams (#39): `streamRequest(_:method:headers:body:...)` sends its body while the
/// response is read. Each test writes a piece and waits for the server's echo of it before writing
/// the next, which a half-duplex client (the response only after the whole body) cannot pass.
@Suite(.enabled(if: TransportUnderTest.available.contains(.curl), "needs the curl transport"))
struct DuplexStreamTests {
    /// Writes each of `pieces`, waiting for its echo (however the server or the network split it)
    /// before the next; returns what came back after the body ended.
    static func converse(
        _ pieces: [Data], writer: AsyncStream<Data>.Continuation, replies: inout DataStream.Iterator
    ) async throws -> Data {
        for piece in pieces {
            writer.yield(piece)
            var echoed = Data()
            while echoed.count < piece.count, let chunk = try await replies.next() { echoed += chunk }
            #expect(echoed == piece)
        }
        writer.finish()
        var rest = Data()
        while let chunk = try await replies.next() { rest += chunk }
        return rest
    }

    static let pieces = (0..<8).map { Data("piece \($0) of the conversation;".utf8) } + [Data(repeating: 0x5A, count: 200_000)]

    @Test(.hangLimit(.seconds(120)))
    func eachPieceIsEchoedBeforeTheNextIsWrittenOverHTTP1() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let (body, writer) = AsyncStream.makeStream(of: Data.self)
            let stream = makeSession(.curl, server: server).streamRequest("echo", body: body)
            var replies = stream.streamingData().makeAsyncIterator()
            let rest = try await Self.converse(Self.pieces, writer: writer, replies: &replies)
            #expect(rest.isEmpty)
            #expect(await stream.error == nil)
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.method == "POST")
            #expect(recorded.body == Self.pieces.reduce(Data(), +))
            #expect(recorded.chunkSizes != nil)
            #expect(recorded.headers["Content-Type"] == "application/octet-stream")
        }
    }

    @Test(.hangLimit(.seconds(120)))
    func theHeadArrivesBeforeTheBodyEnds() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let (body, writer) = AsyncStream.makeStream(of: Data.self)
            let heads = AsyncStream.makeStream(of: Int.self)
            let stream = makeSession(.curl, server: server).streamRequest("echo", method: .put, body: body)
                .onHTTPResponse { heads.continuation.yield($0.statusCode) }
            var replies = stream.streamingData().makeAsyncIterator()
            // Nothing of the body yet: the head comes anyway.
            var statuses = heads.stream.makeAsyncIterator()
            #expect(await statuses.next() == 200)
            writer.yield(Data("late".utf8))
            writer.finish()
            var received = Data()
            while let chunk = try await replies.next() { received += chunk }
            #expect(received == Data("late".utf8))
        }
    }

    @Test(.hangLimit(.seconds(120)))
    func trailersGoBothWays() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let (body, writer) = AsyncStream.makeStream(of: Data.self)
            let stream = makeSession(.curl, server: server).streamRequest("echo", body: body) { ["X-Pieces": "9"] }
            var replies = stream.streamingData().makeAsyncIterator()
            _ = try await Self.converse(Self.pieces, writer: writer, replies: &replies)
            #expect(await stream.trailerFields?.value(for: "X-Pieces") == "9")
            #expect(server.recordedRequests.first?.trailers["X-Pieces"] == "9")
        }
    }

    /// The caller's field lines go out as given: a repeated name as separate lines, in order.
    @Test(.hangLimit(.seconds(120)))
    func theCallersRepeatedHeaderLinesGoOutApartAndInOrder() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            var headers: HTTPHeaders = ["X-Multi": "first"]
            headers.append(name: "X-Other", value: "between")
            headers.append(name: "x-multi", value: "second")
            let stream = makeSession(.curl, server: server).streamRequest("echo", headers: headers, body: PatternChunks(total: 10))
            var received = 0
            for try await chunk in stream.streamingData() { received += chunk.count }
            #expect(received == 10)
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.headers.values(for: "X-Multi") == ["first", "second"])
            let names = recorded.headers.map(\.name).filter { ["x-multi", "x-other"].contains($0.lowercased()) }
            #expect(names == ["X-Multi", "X-Other", "x-multi"])
        }
    }

    @Test(.hangLimit(.seconds(120)))
    func cancellingTheStreamEndsTheBodysProducer() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let (body, writer) = AsyncStream.makeStream(of: Data.self)
            let ended = AsyncStream.makeStream(of: Void.self)
            writer.onTermination = { _ in ended.continuation.finish() }
            let stream = makeSession(.curl, server: server).streamRequest("echo", body: body)
            var replies = stream.streamingData().makeAsyncIterator()
            writer.yield(Data("one".utf8))
            #expect(try await replies.next() == Data("one".utf8))
            stream.cancel()
            // The producer's sequence is cancelled: its termination handler runs.
            for await _ in ended.stream {}
            await #expect(throws: CourierError.self) { while try await replies.next() != nil {} }
            #expect(await stream.error?.kind == .cancelled)
        }
    }

    @Test(.hangLimit(.seconds(120)))
    func aFailingProducerFailsTheStream() async throws {
        struct ProducerFailure: Error {}
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let (body, writer) = AsyncThrowingStream.makeStream(of: Data.self)
            let stream = makeSession(.curl, server: server).streamRequest("echo", body: body)
            var replies = stream.streamingData().makeAsyncIterator()
            writer.yield(Data("one".utf8))
            #expect(try await replies.next() == Data("one".utf8))
            writer.finish(throwing: ProducerFailure())
            let error = await #expect(throws: CourierError.self) { while try await replies.next() != nil {} }
            #expect(error?.kind == .bodyStreamFailed)
        }
    }

    @Test func theURLSessionTransportRefusesAFullDuplexStreamBeforeSending() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let stream = makeSession(.urlSession, server: server).streamRequest("echo", body: PatternChunks(total: 10))
            let error = await #expect(throws: CourierError.self) { for try await _ in stream.streamingData() {} }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains("full-duplex") == true)
            #expect(server.recordedRequests.isEmpty)
        }
    }

    /// Over HTTP/2 against hypercorn (`.ci/h3-server.py`'s ASGI `/echo`), which nobody here wrote;
    /// skipped when `.ci/start-servers.sh` did not start it.
    @Test(.hangLimit(.seconds(120)))
    func eachPieceIsEchoedBeforeTheNextIsWrittenOverHTTP2() async throws {
        guard let h3 = InteropServer.http3 else { return }
        let session = try HTTPSInterop.session(baseURL: h3) { $0.httpVersion = .http2 }
        let (body, writer) = AsyncStream.makeStream(of: Data.self)
        // hypercorn sends response trailers only to a client that says it takes them.
        let stream = session.streamRequest("echo", headers: ["TE": "trailers"], body: body)
        var replies = stream.streamingData().makeAsyncIterator()
        let rest = try await Self.converse(Self.pieces, writer: writer, replies: &replies)
        #expect(rest.isEmpty)
        #expect(await stream.error == nil)
        #expect(await stream.metrics?.httpVersion == "HTTP/2")
        #expect(await stream.trailerFields?.value(for: "x-echo-end") == "1")
    }

    /// Over HTTP/1.1 against hypercorn (h11, `.ci/h3-server.py`'s ASGI `/echo`), which answers while
    /// it reads; skipped when `.ci/start-servers.sh` did not start it.
    @Test(.hangLimit(.seconds(120)))
    func eachPieceIsEchoedBeforeTheNextIsWrittenOverHTTP1ByHypercorn() async throws {
        guard let h3 = InteropServer.http3 else { return }
        let session = try HTTPSInterop.session(baseURL: h3) { $0.httpVersion = .http1_1 }
        let (body, writer) = AsyncStream.makeStream(of: Data.self)
        let stream = session.streamRequest("echo", body: body)
        var replies = stream.streamingData().makeAsyncIterator()
        let rest = try await Self.converse(Self.pieces, writer: writer, replies: &replies)
        #expect(rest.isEmpty)
        #expect(await stream.error == nil)
        #expect(await stream.metrics?.httpVersion == "HTTP/1.1")
    }

    /// Against Node.js's HTTP/1.1 server (`.ci/echo-server.js`): each piece echoed before the next
    /// is written, the request's trailers read by that server (it sends back what it received, in
    /// order, and their count), and its response trailers read here. Skipped when
    /// `.ci/start-servers.sh` found no node.
    @Test(.hangLimit(.seconds(120)))
    func nodeEchoesEachPieceAndTheRequestTrailersOverHTTP1() async throws {
        guard let node = InteropServer.nodeEcho else { return }
        var configuration = SessionConfiguration.testing
        configuration.transport = .curl
        configuration.requestTimeout = 30
        let session = Session(configuration: configuration, baseURL: node, callbackQueue: testCallbackQueue)
        let (body, writer) = AsyncStream.makeStream(of: Data.self)
        let stream = session.streamRequest("echo", body: body) {
            var trailers: HTTPHeaders = ["X-Checksum": "c0ffee"]
            trailers.append(name: "X-Note", value: "one")
            trailers.append(name: "x-note", value: "two")
            return trailers
        }
        var replies = stream.streamingData().makeAsyncIterator()
        let rest = try await Self.converse(Self.pieces, writer: writer, replies: &replies)
        #expect(rest.isEmpty)
        #expect(await stream.error == nil)
        #expect(await stream.metrics?.httpVersion == "HTTP/1.1")
        let trailers = try #require(await stream.trailerFields)
        #expect(trailers.map(\.description) == ["X-Checksum: c0ffee", "X-Note: one", "x-note: two", "X-Request-Trailer-Count: 3"])
    }
}
