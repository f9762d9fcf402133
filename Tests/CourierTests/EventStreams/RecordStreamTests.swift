import Testing
import Foundation
@testable import Courier
import CourierTestServer

/// JSON records streamed as JSON Lines and as RFC 7464 JSON text sequences, on both transports:
/// each record decoded as it completes, a malformed one named by its number (or skipped), and
/// one record bounded in size.
@Suite struct RecordStreamTests {
    struct Entry: Decodable, Sendable, Equatable { let n: Int }

    @Test(arguments: TransportUnderTest.available)
    func jsonLinesDecodeRecordByRecordAndAMalformedOneIsNamed(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let body = "{\"n\":1}\r\n\n{\"n\":2}\n{\"n\":oops}\n{\"n\":4}\n{\"n\":5}"
            server.route("/lines") { _ in MockResponse.ok(body).header("Content-Type", "application/x-ndjson").chunked(chunkSize: 3) }
            let session = makeSession(transport, server: server)

            var entries: [Entry] = []
            do throws(CourierError) {
                for try await entry in session.streamRequest("lines").streamingDecodable(of: Entry.self) { entries.append(entry) }
                Issue.record("a malformed record fails the stream")
            } catch {
                #expect(error.kind == .serializationFailed)
                #expect(error.message.contains("Record 3"), "\(error.message)")
            }
            #expect(entries == [Entry(n: 1), Entry(n: 2)])

            let skipped = try await collect(session.streamRequest("lines").streamingDecodable(of: Entry.self, malformedRecords: .skip))
            #expect(skipped == [Entry(n: 1), Entry(n: 2), Entry(n: 4), Entry(n: 5)], "the last record needs no line break")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func jsonTextSequencesSplitAtTheRecordSeparator(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let body = "\u{1E}{\"n\":1}\n\u{1E}  {\"n\":2}\n\u{1E}{\"n\":\n3}\n"
            server.route("/seq") { _ in MockResponse.ok(body).header("Content-Type", "application/json-seq").chunked(chunkSize: 2) }
            let session = makeSession(transport, server: server)
            let entries = try await collect(session.streamRequest("seq").streamingDecodable(of: Entry.self, framing: .jsonSequence))
            #expect(entries == [Entry(n: 1), Entry(n: 2), Entry(n: 3)])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aRecordPastTheLimitEndsTheStream(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let body = "{\"n\":1}\n{\"n\":\(String(repeating: "1", count: 5000))}\n"
            server.route("/big") { _ in MockResponse.ok(body).chunked(chunkSize: 512) }
            let session = makeSession(transport, server: server)
            var entries: [Entry] = []
            do throws(CourierError) {
                for try await entry in session.streamRequest("big").streamingDecodable(of: Entry.self, maximumRecordSize: 1024) {
                    entries.append(entry)
                }
                Issue.record("expected .responseTooLarge")
            } catch {
                #expect(error.kind == .responseTooLarge)
                #expect(error.message.contains("Record 2"))
            }
            #expect(entries == [Entry(n: 1)])
        }
    }
}
