import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

extension CourierTestServerTests {
    @Suite struct Faults {
        /// Sends `GET /f` for `response` and reads whatever comes back, with a 300 ms read timeout.
        static func exchange(_ response: MockResponse) throws -> (
            head: (status: Int, headers: HeaderFields)?, bodyBytes: [UInt8], end: RawClient.ReadEnd
        ) {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(response)
            let client = try RawClient(port: server.port, receiveTimeout: .milliseconds(300))
            try client.sendRequest("GET", "/f")
            let all = client.readToEnd()
            guard let split = all.bytes.indices.first(where: { all.bytes[$0...].starts(with: [13, 10, 13, 10]) }) else {
                return (nil, all.bytes, all.end)
            }
            let headText = String(decoding: all.bytes[..<split], as: UTF8.self)
            let lines = headText.components(separatedBy: "\r\n")
            var headers: HeaderFields = [:]
            for line in lines.dropFirst() {
                let parts = line.split(separator: ":", maxSplits: 1)
                headers.add(String(parts[0]), parts[1].trimmingCharacters(in: .whitespaces))
            }
            let status = Int(lines[0].split(separator: " ")[1]) ?? 0
            return ((status, headers), Array(all.bytes[(split + 4)...]), all.end)
        }

        @Test func closeAfterRequestIsSeenAsEndOfStream() throws {
            let result = try Self.exchange(MockResponse.ok("never").effect(.close, at: .afterRequest))
            #expect(result.head == nil && result.bodyBytes.isEmpty)
            #expect(result.end == .eof)
        }

        @Test func resetAfterRequestIsSeenAsConnectionReset() throws {
            let result = try Self.exchange(MockResponse.ok("never").effect(.reset, at: .afterRequest))
            #expect(result.head == nil && result.bodyBytes.isEmpty)
            #expect(result.end == .reset)
        }

        @Test func stallAfterRequestIsSeenAsReadTimeout() throws {
            let result = try Self.exchange(MockResponse.ok("never").effect(.stall, at: .afterRequest))
            #expect(result.head == nil && result.bodyBytes.isEmpty)
            #expect(result.end == .timeout)
        }

        @Test func truncationSendsFewerBytesThanContentLengthThenEOF() throws {
            let body = Data(repeating: 0x61, count: 1000)
            let result = try Self.exchange(MockResponse.ok(body).truncated(afterBytes: 300))
            #expect(result.head?.headers["Content-Length"] == "1000")
            #expect(result.bodyBytes.count == 300)
            #expect(result.end == .eof)
        }

        @Test func effectsAtResponseStartBodyAndEnd() throws {
            let startClose = try Self.exchange(MockResponse.ok("body").effect(.close, at: .responseStart))
            #expect(startClose.head?.status == 200 && startClose.bodyBytes.isEmpty && startClose.end == .eof)

            let midStall = try Self.exchange(MockResponse(body: .pattern(count: 10_000, seed: 1)).effect(.stall, at: .responseBody(afterBytes: 100)))
            #expect(midStall.bodyBytes.count == 100 && midStall.end == .timeout)
            #expect(matchesPattern(midStall.bodyBytes, offset: 0, seed: 1))

            let endClose = try Self.exchange(MockResponse.ok("whole").effect(.close, at: .responseEnd))
            #expect(endClose.bodyBytes == bytes("whole") && endClose.end == .eof)
            #expect(endClose.head?.headers["Connection"] == nil)

            let endShutdown = try Self.exchange(MockResponse.ok("half").effect(.shutdownOutput, at: .responseEnd))
            #expect(endShutdown.bodyBytes == bytes("half") && endShutdown.end == .eof)

            let chunkedCut = try Self.exchange(MockResponse.ok("0123456789").chunked(chunkSize: 4).truncated(afterBytes: 6))
            #expect(String(decoding: chunkedCut.bodyBytes, as: UTF8.self) == "4\r\n0123\r\n4\r\n45")
            #expect(chunkedCut.end == .eof)

            let earliestWins = try Self.exchange(MockResponse.ok("abc").effect(.reset, at: .responseEnd).effect(.close, at: .responseStart))
            #expect(earliestWins.bodyBytes.isEmpty && earliestWins.end == .eof)
        }

        @Test func resetPartWayThroughALargeBody() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(MockResponse(body: .pattern(count: 1_000_000, seed: 5)).effect(.reset, at: .responseBody(afterBytes: 300_000)))
            let client = try RawClient(port: server.port)
            try client.sendRequest("GET", "/big")
            let head = try client.readHead()
            #expect(head.headers["Content-Length"] == "1000000")
            let (count, end) = client.countToEnd()
            // A reset discards whatever the client had not read yet, so it may see fewer bytes.
            #expect(count <= 300_000)
            #expect(end == .reset)
            #expect(server.bytesSent(path: "/big") == 300_000)
        }

        @Test(arguments: [(10_000, 10), (25_000, 50)])
        func throttleKeepsTheConfiguredRate(bytesPerPeriod: Int, periodMilliseconds: Int) throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let total = 200_000
            server.enqueue(
                MockResponse(body: .pattern(count: Int64(total), seed: 2))
                    .throttle(bytes: bytesPerPeriod, every: .milliseconds(periodMilliseconds)))
            let client = try RawClient(port: server.port)
            try client.sendRequest("GET", "/slow")
            _ = try client.readHead()
            var received = 0
            var firstChunk = 0
            var firstAt: ContinuousClock.Instant?
            while received < total, case .success(let chunk) = client.readSome() {
                if firstAt == nil {
                    firstAt = .now
                    firstChunk = chunk.count
                }
                received += chunk.count
            }
            let elapsed = ContinuousClock.now - (firstAt ?? .now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            // Bytes after the first arrival, over the time they took: the paced rate.
            let measured = Double(received - firstChunk) / seconds
            let configured = Double(bytesPerPeriod) / (Double(periodMilliseconds) / 1000)
            #expect(received == total)
            #expect(abs(measured - configured) / configured < 0.2, "measured \(measured) B/s, configured \(configured) B/s")
        }

        @Test func headersAndBodyDelaysHoldTheResponse() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(MockResponse.ok("late").headersDelay(.milliseconds(100)).bodyDelay(.milliseconds(100)))
            let client = try RawClient(port: server.port)
            let start = ContinuousClock.now
            try client.sendRequest("GET", "/")
            _ = try client.readHead()
            let headAt = ContinuousClock.now
            #expect(try client.readSome().get() == bytes("late"))
            #expect(headAt - start >= .milliseconds(100))
            #expect(ContinuousClock.now - headAt >= .milliseconds(90))
        }

        @Test func gateHoldsResponsesUntilOpened() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("released").waiting(for: gate) }
            let port = server.port
            let clients = (0..<3).map { _ in
                Task { try await onThread { try RawClient(port: port).get("/held").text } }
            }
            #expect(await gate.waitUntilWaiting(count: 3))
            #expect(gate.waitingCount == 3 && !gate.isOpen)
            #expect(server.requestCount(path: "/held") == 3)
            #expect(server.bytesSent() == 0)
            gate.open()
            for client in clients { #expect(try await client.value == "released") }
            #expect(gate.waitingCount == 0)
            #expect(await gate.waitUntilWaiting(count: 1, timeout: .milliseconds(20)) == false)
        }

        @Test func shutdownReleasesHeldResponsesAndOpensTheirGates() async throws {
            let server = try TestServer()
            let gate = Gate()
            server.enqueue(MockResponse.ok("held").waiting(for: gate))
            let port = server.port
            let client = Task { try await onThread { try RawClient(port: port).readAfterGet("/x") } }
            #expect(await gate.waitUntilWaiting(count: 1))
            // The held response was taken off the queue when the request arrived, so nothing is left over.
            expectClean(server.shutdown())
            #expect(gate.isOpen)
            let (count, end) = try await client.value
            #expect(count == 0 && end == .eof)
        }

        @Test func clientDisconnectIsNoticedWhileAResponseIsHeldOrStreaming() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("x").waiting(for: gate) }
            server.route("/stalled") { _ in MockResponse.ok("x").effect(.stall, at: .responseStart) }
            server.route("/slow") { _ in MockResponse(body: .pattern(count: 10_000_000, seed: 1)).throttle(bytes: 1000, every: .milliseconds(10)) }
            server.route("/fine") { _ in .ok("x") }

            for path in ["/held", "/stalled", "/slow"] {
                let client = try RawClient(port: server.port)
                try client.sendRequest("GET", path)
                if path == "/held" {
                    #expect(await gate.waitUntilWaiting(count: 1))
                } else {
                    _ = try client.readHead()
                }
                withExtendedLifetime(client) {}
                // Dropping the client closes its socket.
            }
            let gone = try await server.waitForClientDisconnect(count: 3)
            #expect(Set(gone.map(\.path)) == ["/held", "/stalled", "/slow"])
            #expect(try await server.waitForClientDisconnect(path: "/slow").count == 1)
            _ = try RawClient(port: server.port).get("/fine")
            #expect(server.clientDisconnectCount() == 3)
            #expect(server.clientDisconnectCount(path: "/fine") == 0)
            #expect(server.recordedRequests.filter(\.clientDisconnected).count == 3)
            await #expect(throws: TestServerError.timeout) {
                try await server.waitForClientDisconnect(path: "/fine", timeout: .milliseconds(50))
            }
        }
    }
}

extension RawClient {
    /// Sends a GET and counts what arrives until the connection ends.
    func readAfterGet(_ target: String) throws -> (count: Int, end: ReadEnd) {
        try sendRequest("GET", target)
        return countToEnd()
    }
}

extension CourierTestServerTests.Faults {
    @Test func aBodyPauseHoldsTheRestUntilTheGateOpens() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 2)).pausing(afterBytes: 30_000, until: gate))
        let client = try RawClient(port: server.port)
        try client.send("GET /p HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(await gate.waitUntilWaiting(count: 1))
        #expect(server.bytesSent() == 30_000)
        gate.open()
        let response = try client.readResponse()
        #expect(Data(response.body) == PatternBody.data(offset: 0, count: 100_000, seed: 2))
    }
}
