import CourierLocking
import CourierTestServer
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Trailer fields (#39): response trailers reach completed and streamed responses in wire order,
/// held to the head's limits; request trailers follow a streamed body on curl, and every request
/// that cannot carry them fails before anything is sent.
@Suite struct TrailerTests {
    /// The field lines of `headers`, in order, as `Name: value`.
    private static func lines(_ headers: HTTPHeaders?) -> [String]? {
        headers.map { $0.map { "\($0.name): \($0.value)" } }
    }

    // MARK: - Reading a trailer line (no I/O)

    @Test(
        arguments: [
            ("X-Checksum: abc\r\n", "X-Checksum|abc"),
            ("X-Empty:\r\n", "X-Empty|"),
            ("X-Spaced:   padded value \t\r\n", "X-Spaced|padded value"),
            ("\r\n", nil),
            ("HTTP/1.1 200 OK\r\n", nil),
            ("no colon here\r\n", nil),
            (": no name\r\n", nil),
        ] as [(String, String?)])
    func aTrailerLineIsReadAsOneField(line: String, field: String?) {
        let parsed = Array(line.utf8).withUnsafeBytes { CurlResponseParser.trailerField($0) }
        #expect(parsed.map { "\($0.name)|\($0.value)" } == field)
    }

    // MARK: - Response trailers

    // FoundationNetworking traps the process at a chunked trailer section (see ChoosingATransport),
    // so only the curl transport is tried with trailers.
    @Test func aCompletedResponseHasItsTrailersInWireOrder() async throws {
        try await withServer { server async throws in
            server.route("/t") { _ in
                .text("body").trailer("X-Checksum", "abc").trailer("X-Note", "one").trailer("x-checksum", "def")
            }
            let response = await makeSession(.curl, server: server).request("t").serializingString().response
            #expect(response.value == "body")
            #expect(Self.lines(response.trailerFields) == ["X-Checksum: abc", "X-Note: one", "x-checksum: def"])
            #expect(response.trailerFields?.value(for: "X-NOTE") == "one")
            #expect(response.metrics?.trailerFields == response.trailerFields)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aResponseWithoutTrailersHasNone(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/chunked") { _ in .text("body").chunked(chunkSize: 2) }
            server.route("/plain") { _ in .text("body") }
            let session = makeSession(transport, server: server)
            #expect(await session.request("chunked").serializingString().response.trailerFields == nil)
            #expect(await session.request("plain").serializingString().response.trailerFields == nil)
        }
    }

    @Test func aStreamedResponseHasItsTrailersOnceTheStreamEnded() async throws {
        try await withServer { server async throws in
            server.route("/s") { _ in .text(String(repeating: "x", count: 100_000)).chunked(chunkSize: 4096).trailer("Grpc-Status", "0") }
            let stream = makeSession(.curl, server: server).streamRequest("s")
            var received = 0
            for try await chunk in stream.streamingData() { received += chunk.count }
            #expect(received == 100_000)
            #expect(Self.lines(await stream.trailerFields) == ["Grpc-Status: 0"])
        }
    }

    @Test func aStreamCallbackCompletionCarriesTheTrailers() async throws {
        try await withServer { server async throws in
            server.route("/s") { _ in .text("abc").trailer("X-Done", "yes") }
            let completion = await withCheckedContinuation { (continuation: CheckedContinuation<DataStreamCompletion, Never>) in
                makeSession(.curl, server: server).streamRequest("s").responseStream { event in
                    if case .complete(let completion) = event { continuation.resume(returning: completion) }
                }
            }
            #expect(completion.error == nil)
            #expect(Self.lines(completion.trailerFields) == ["X-Done: yes"])
        }
    }

    @Test func trailersOverTheSessionsFieldCountFailTheRequest() async throws {
        try await withServer { server async throws in
            server.route("/t") { _ in .text("body").trailer("A", "1").trailer("B", "2").trailer("C", "3") }
            let session = makeSession(.curl, server: server) { $0.maximumResponseHeaderCount = 2 }
            let error = await session.request("t").serializingData().response.error
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.message.contains("trailer") == true)
        }
    }

    @Test func trailersOverTheSessionsHeadSizeFailTheRequest() async throws {
        try await withServer { server async throws in
            server.route("/t") { _ in .text("body").trailer("X-Big", String(repeating: "v", count: 2000)) }
            let session = makeSession(.curl, server: server) { $0.maximumResponseHeadSize = 1024 }
            let error = await session.request("t").serializingData().response.error
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.message.contains("trailer section") == true)
        }
    }

    @Test func anEndlessTrailerSectionIsCutOffByTheTransport() async throws {
        try await withServer { server async throws in
            // 400 trailer lines of 1 KiB: past the transport's 300 KiB for a trailer section.
            var response = MockResponse.text("body")
            for index in 0..<400 { response = response.trailer("X-Filler-\(index)", String(repeating: "f", count: 1000)) }
            server.route("/t") { [response] _ in response }
            let session = makeSession(.curl, server: server) {
                $0.maximumResponseHeadSize = nil
                $0.maximumResponseHeaderCount = nil
            }
            let error = await session.request("t").serializingData().response.error
            #expect(error?.kind == .responseTooLarge)
            #expect(error?.message.contains("trailer section is larger than the transport accepts") == true)
        }
    }

    // MARK: - Request trailers

    @Test func aStreamedUploadSendsItsTrailersAfterTheBody() async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let text = try await makeSession(.curl, server: server)
                .upload(PatternChunks(total: 200_000), to: "up", method: .put) {
                    ["X-Checksum": "abc123", "X-Count": "200000"]
                }
                .validate().serializingString().value
            #expect(text == "200000")
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.body == StreamUploadTests.pattern(200_000))
            #expect(recorded.chunkSizes != nil)
            #expect(recorded.trailers["X-Checksum"] == "abc123")
            #expect(recorded.trailers["X-Count"] == "200000")
            #expect(recorded.version == "HTTP/1.1")
        }
    }

    @Test func theTrailersAreAskedForOnlyOnceTheBodyEnded() async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let (chunks, producer) = AsyncStream.makeStream(of: Data.self)
            producer.yield(Data("first".utf8))
            producer.yield(Data("second".utf8))
            producer.finish()
            let count = Locked(0)
            let text = try await makeSession(.curl, server: server)
                .upload(chunks, to: "up") {
                    count.withLock { $0 += 1 }
                    return ["X-Seen": "11"]
                }
                .validate().serializingString().value
            #expect(text == "11")
            #expect(count.withLock { $0 } == 1)
            #expect(server.recordedRequests.first?.trailers["X-Seen"] == "11")
        }
    }

    @Test func aTrailerThatFramesTheMessageFailsTheUpload() async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let error = await makeSession(.curl, server: server)
                .upload(PatternChunks(total: 10), to: "up") { ["Content-Length": "10"] }
                .serializingString().response.error
            #expect(error?.kind == .bodyStreamFailed)
            #expect(error?.message.contains("Content-Length") == true)
            // The body never ended on the wire: the server saw no complete request.
            #expect(server.recordedRequests.allSatisfy { $0.trailers.isEmpty })
        }
    }

    @Test func requestTrailersOverHTTP2AreRefusedBeforeSending() async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let error = await makeSession(.curl, server: server)
                .upload(PatternChunks(total: 10), to: "up") { ["X-A": "1"] }
                .httpVersion(.http2PriorKnowledge)
                .serializingString().response.error
            #expect(error?.kind == .httpVersionUnavailable)
            #expect(server.recordedRequests.isEmpty)
        }
    }

    @Test func requestTrailersWithADeclaredLengthAreRefusedBeforeSending() async throws {
        try await withServer { server async throws in
            server.routeDuplexEcho("/echo")
            let stream = makeSession(.curl, server: server)
                .streamRequest("echo", body: PatternChunks(total: 10), length: 10) { ["X-A": "1"] }
            let error = await #expect(throws: CourierError.self) { for try await _ in stream.streamingData() {} }
            #expect(error?.kind == .invalidRequest)
            #expect(server.recordedRequests.isEmpty)
        }
    }

    @Test func theURLSessionTransportRefusesRequestTrailersBeforeSending() async throws {
        try await withServer { server async throws in
            server.route("/up") { request in .text("\(request.bodySize)") }
            let error = await makeSession(.urlSession, server: server)
                .upload(PatternChunks(total: 10), to: "up") { ["X-A": "1"] }
                .serializingString().response.error
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains("trailers") == true)
            #expect(server.recordedRequests.isEmpty)
        }
    }
}
