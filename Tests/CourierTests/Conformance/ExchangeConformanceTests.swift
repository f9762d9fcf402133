import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Conformance-style checks (#39) played by CourierTestServer: fields and bodies both ways,
/// cancelling, reading too little or slowly, trailers. The table of what each transport does is
/// at the top of `WireConformanceTests`.
@Suite(.hangLimit(.seconds(120))) struct ExchangeConformanceTests {
    /// The values of `name` across every line, each line's comma-separated list split: what a
    /// recipient may make of repeated lines (RFC 9110 §5.3), whether they came apart or joined.
    static func combined(_ lines: [String]) -> [String] {
        lines.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
    }

    /// Where two bodies first differ (the shorter one's length when one is a prefix of the
    /// other), or nil when they are equal. Large bodies are compared with this, not `==`: on a
    /// mismatch, Swift Testing's message diffs the two collections, which for megabytes of
    /// different bytes runs for minutes and stalls the whole run.
    static func firstDifference(_ received: Data, _ expected: Data) -> Int? {
        if received == expected { return nil }
        let common = min(received.count, expected.count)
        let received = [UInt8](received), expected = [UInt8](expected)
        return (0..<common).first { received[$0] != expected[$0] } ?? common
    }

    // MARK: - Fields

    @Test(arguments: TransportUnderTest.available)
    func aNameRepeatedInTheRequestKeepsEveryValueInOrder(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            var headers: HTTPHeaders = ["X-Multi": "first"]
            headers.append(name: "X-Other", value: "between")
            headers.append(name: "x-multi", value: "second")
            _ = await makeSession(transport, server: server).request("m", headers: headers).serializingData().response
            let sent = try await server.takeRequest().headers.values(for: "X-Multi")
            #expect(Self.combined(sent) == ["first", "second"])
            switch transport {
            case .curl: #expect(sent == ["first", "second"], "each value on its own line")
            case .urlSession: #expect(sent == ["first, second"], "FoundationNetworking joins the lines")
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aNameRepeatedInTheResponseKeepsEveryValueInOrder(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(
                MockResponse.ok("body").header("X-Multi", "one").header("X-Other", "between").header("X-Multi", "two")
                    .header("x-multi", "three"))
            let response = await makeSession(transport, server: server).request("m").serializingString().response
            #expect(response.value == "body")
            let fields = try #require(response.headerFields)
            let values = Self.combined(fields.values(for: "X-Multi"))
            switch transport {
            case .curl:
                #expect(fields.values(for: "X-Multi") == ["one", "two", "three"], "each line apart, in wire order")
                let names = fields.map(\.name).filter { $0.lowercased() == "x-multi" || $0 == "X-Other" }
                #expect(names == ["X-Multi", "X-Other", "X-Multi", "x-multi"], "wire order, names as sent")
            case .urlSession:
                // FoundationNetworking joins the lines of one spelling and keeps no order between
                // spellings (seen: "two" before "one" across `X-Multi` and `x-multi`); every value
                // is still there, and the same-spelling lines keep their order.
                #expect(Set(values) == ["one", "two", "three"])
                #expect(values.count == 3)
                #expect(values.firstIndex(of: "one") ?? 9 < values.firstIndex(of: "two") ?? 0)
            }
        }
    }

    // MARK: - Cancelling

    @Test(arguments: TransportUnderTest.available)
    func cancellingBeforeTheHeadEndsTheRequestAndItsConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/slow") { _ in MockResponse.ok("too late").waiting(for: gate) }
            let request = makeSession(transport, server: server).request("slow")
            let task = Task { await request.serializingData().response }
            #expect(await gate.waitUntilWaiting(count: 1))
            request.cancel()
            let response = await task.value
            #expect(response.error?.kind == .cancelled)
            #expect(response.response == nil)
            // The server notices the client left while it still holds the answer.
            let gone = try await server.waitForClientDisconnect(path: "/slow", timeout: .seconds(120))
            #expect(gone.count == 1)
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingAfterTheHeadBeforeTheBodyEndsTheRequestAndItsConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held", Resource(pattern: 100_000, seed: 7).pausing(afterBytes: 0, until: gate))
            let heads = AsyncStream.makeStream(of: Int.self)
            let stream = makeSession(transport, server: server).streamRequest("held")
                .onHTTPResponse { heads.continuation.yield($0.statusCode) }
            let consumer = Task { () -> (Int, CourierError?) in
                var received = 0
                do throws(CourierError) {
                    for try await chunk in stream.streamingData() { received += chunk.count }
                    return (received, nil)
                } catch {
                    return (received, error)
                }
            }
            var statuses = heads.stream.makeAsyncIterator()
            #expect(await statuses.next() == 200)
            stream.cancel()
            let (received, error) = await consumer.value
            #expect(error?.kind == .cancelled)
            #expect(received == 0)
            let gone = try await server.waitForClientDisconnect(path: "/held", timeout: .seconds(120))
            #expect(gone.count == 1)
            gate.open()
        }
    }

    // MARK: - Bodies

    /// 1 MiB goes out and comes back byte for byte: in full duplex on curl (the echo streams back
    /// while the body is still being sent), as a plain upload echoed whole on URLSession.
    @Test(arguments: TransportUnderTest.available)
    func aMebibyteEchoesBackByteForByte(transport: TransportUnderTest) async throws {
        let size = 1 << 20
        let expected = StreamUploadTests.pattern(size)
        try await withServer { server async throws in
            server.routeDuplexEcho("/duplex")
            server.route("/whole") { request in MockResponse.ok(request.body) }
            let session = makeSession(transport, server: server)
            switch transport {
            case .curl:
                let stream = session.streamRequest("duplex", body: PatternChunks(total: size))
                var echoed = Data()
                for try await chunk in stream.streamingData() { echoed += chunk }
                #expect(echoed.count == size)
                #expect(Self.firstDifference(echoed, expected) == nil)
                #expect(try #require(server.recordedRequests.first).chunkSizes != nil, "sent chunked, length unknown")
            case .urlSession:
                let echoed = try await session.upload(expected, to: "whole").validate().serializingData().value
                #expect(echoed.count == size)
                #expect(Self.firstDifference(echoed, expected) == nil)
            }
            #expect(Self.firstDifference(server.recordedRequests.first?.body ?? Data(), expected) == nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEmptyStreamedRequestBodyArrivesEmpty(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let text = try await makeSession(transport, server: server)
                .upload(PatternChunks(total: 0), to: "up").validate().serializingString().value
            #expect(text == "0")
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.body.isEmpty)
            if transport == .curl { #expect(recorded.chunkSizes == [], "the last chunk alone") }
        }
    }

    /// The consumer takes one chunk of a 64 MiB body and leaves the loop: the request ends as
    /// cancelled, the server sees the client go, and no socket to it is left.
    @Test(arguments: TransportUnderTest.available)
    func underReadingEndsTheRequestAndLeavesNothingOpen(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/big", Resource(pattern: 64 << 20, seed: 1))
            let stream = makeSession(transport, server: server).streamRequest("big")
            var first = Data()
            for try await chunk in stream.streamingData() {
                first = chunk
                break
            }
            #expect(!first.isEmpty)
            #expect(Self.firstDifference(first, PatternBody.data(offset: 0, count: first.count, seed: 1)) == nil)
            #expect(await eventually { await stream.state == .cancelled })
            let gone = try await server.waitForClientDisconnect(path: "/big", timeout: .seconds(120))
            #expect(gone.count == 1)
            #expect(server.bytesSent(path: "/big") < 64 << 20, "the server did not get to send it all")
            #expect(await eventually { server.activeConnectionCount == 0 })
            await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
        }
    }

    /// The consumer pauses at every chunk (a slow reader, not a synchronisation): the body still
    /// comes whole and in order, and the request ends cleanly.
    @Test(arguments: TransportUnderTest.available)
    func dripReadingGetsEveryByteInOrder(transport: TransportUnderTest) async throws {
        let size = 2 << 20
        try await withServer { server async throws in
            server.route("/drip", Resource(pattern: Int64(size), seed: 3))
            let stream = makeSession(transport, server: server).streamRequest("drip")
            var received = Data()
            var chunks = 0
            for try await chunk in stream.streamingData() {
                received += chunk
                chunks += 1
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(received.count == size)
            #expect(Self.firstDifference(received, PatternBody.data(offset: 0, count: size, seed: 3)) == nil)
            #expect(chunks > 1)
            #expect(await stream.error == nil)
        }
    }

    // MARK: - Trailers

    /// Request trailers go after the last chunk and response trailers come back on
    /// `trailerFields`, in wire order, on curl. URLSession refuses request trailers before sending,
    /// and is not given response trailers: FoundationNetworking traps the process at a chunked
    /// trailer section.
    @Test(arguments: TransportUnderTest.available)
    func trailersGoBothWays(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/t") { request in
                MockResponse.ok("\(request.bodySize)")
                    .trailer("X-Seen", request.trailers["X-Sent"] ?? "none").trailer("X-Order", "1").trailer("x-order", "2")
            }
            // URLSession is sent where no trailers come back, so that a request it failed to refuse
            // fails this test instead of trapping the process.
            server.route("/plain") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server)
                .upload(PatternChunks(total: 50_000), to: transport == .curl ? "t" : "plain") { ["X-Sent": "checksum-1"] }
                .serializingString().response
            switch transport {
            case .curl:
                #expect(response.value == "50000")
                #expect(server.recordedRequests.first?.trailers["X-Sent"] == "checksum-1")
                let trailers = try #require(response.trailerFields)
                #expect(trailers.map(\.description) == ["X-Seen: checksum-1", "X-Order: 1", "x-order: 2"])
            case .urlSession:
                #expect(response.error?.kind == .invalidConfiguration)
                #expect(server.recordedRequests.isEmpty)
            }
        }
    }
}
