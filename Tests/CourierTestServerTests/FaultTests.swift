import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

extension CourierTestServerTests {
    @Suite struct Faults {
        /// Sends `GET /f` for `response` and reads whatever comes back until the connection ends.
        ///
        /// For a response that stalls after `stallsAfterBodyBytes` body bytes (-1: before the head),
        /// reading waits as long as a hang takes for those bytes, then 300 ms for anything more: a
        /// loaded machine can only make the bytes late, never make a stall that is not there.
        static func exchange(_ response: MockResponse, stallsAfterBodyBytes: Int? = nil) throws -> (
            head: (status: Int, headers: HeaderFields)?, bodyBytes: [UInt8], end: RawClient.ReadEnd
        ) {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            if stallsAfterBodyBytes == -1 {
                // Nothing arrives, so the 300 ms start at once: a busy server may not have taken a
                // queued response by then (its shutdown would report it unconsumed); a route has no queue.
                server.route("/f") { _ in response }
            } else {
                server.enqueue(response)
            }
            let client = try RawClient(port: server.port, receiveTimeout: .seconds(60))
            try client.sendRequest("GET", "/f")
            var all: (bytes: [UInt8], end: RawClient.ReadEnd) = ([], .timeout)
            func arrived(_ bytes: [UInt8]) -> Bool {
                guard let stall = stallsAfterBodyBytes else { return false }
                guard stall >= 0 else { return true }
                guard let split = bytes.indices.first(where: { bytes[$0...].starts(with: [13, 10, 13, 10]) }) else { return false }
                return bytes.count - split - 4 >= stall
            }
            if arrived(all.bytes) { client.setReceiveTimeout(.milliseconds(300)) }
            reading: while true {
                switch client.readSome() {
                case .success(let chunk):
                    all.bytes += chunk
                    if arrived(all.bytes) { client.setReceiveTimeout(.milliseconds(300)) }
                case .failure(let end):
                    all.end = end
                    break reading
                }
            }
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
            let result = try Self.exchange(MockResponse.ok("never").effect(.stall, at: .afterRequest), stallsAfterBodyBytes: -1)
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

            let midStall = try Self.exchange(
                MockResponse(body: .pattern(count: 10_000, seed: 1)).effect(.stall, at: .responseBody(afterBytes: 100)), stallsAfterBodyBytes: 100)
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

        /// The throttle never sends ahead of its schedule (checked at every arrival, which a slow
        /// machine can only delay), and keeps within 20 % of the configured rate: a measured rate,
        /// so that half runs where it is the test's own, alone (`COURIER_RESOURCE_TESTS=1`, a step
        /// of `.ci/run`); in the parallel runs a busy machine slows the server's thread down.
        @Test(arguments: [(10_000, 10), (25_000, 50)])
        func throttleKeepsTheConfiguredRate(bytesPerPeriod: Int, periodMilliseconds: Int) throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let total = 200_000
            server.enqueue(
                MockResponse(body: .pattern(count: Int64(total), seed: 2))
                    .throttle(bytes: bytesPerPeriod, every: .milliseconds(periodMilliseconds)))
            let client = try RawClient(port: server.port)
            let period = Duration.milliseconds(periodMilliseconds)
            let requested = ContinuousClock.now
            try client.sendRequest("GET", "/slow")
            _ = try client.readHead()
            var received = 0
            var firstChunk = 0
            var firstAt: ContinuousClock.Instant?
            var ahead: [String] = []
            while received < total, case .success(let chunk) = client.readSome() {
                let now = ContinuousClock.now
                if firstAt == nil {
                    firstAt = now
                    firstChunk = chunk.count
                }
                received += chunk.count
                // The server starts its schedule after the request arrived, so by `now` it may
                // have sent at most one period's bytes for each period begun since the request.
                let periodsBegun = Int((now - requested) / period) + 1
                if received > periodsBegun * bytesPerPeriod { ahead.append("\(received) B after \(now - requested)") }
            }
            #expect(received == total)
            #expect(ahead.isEmpty, "sent ahead of the schedule: \(ahead.prefix(5))")
            let elapsed = ContinuousClock.now - (firstAt ?? .now)
            // Bytes after the first arrival, over the time they took: the paced rate.
            let measured = Double(received - firstChunk) / (elapsed / .seconds(1))
            let configured = Double(bytesPerPeriod) / (Double(periodMilliseconds) / 1000)
            if TestEnvironment.runsAlone {
                #expect(abs(measured - configured) / configured < 0.2, "measured \(measured) B/s, configured \(configured) B/s")
            }
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
            let bodyAt = ContinuousClock.now
            // Lower bounds only, from the request: a slow machine can make the bytes later, never
            // earlier. The body comes after both delays, so at least 200 ms after the request.
            #expect(headAt - start >= .milliseconds(100))
            #expect(bodyAt - start >= .milliseconds(200))
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
