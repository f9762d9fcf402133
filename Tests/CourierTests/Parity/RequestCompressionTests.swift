import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Request-body compression (#26).
@Suite struct RequestCompressionTests {
    struct Batch: Encodable, Sendable { let events: [String] }
    static let batch = Batch(events: (0..<500).map { "event number \($0) happened" })

    /// Decodes a coded body with the transport's own decoder.
    static func decode(_ data: Data, _ coding: String) throws -> Data {
        let decoder = try #require(try CurlContentDecoding.make(contentEncoding: coding))
        var output = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        try data.withUnsafeBytes { raw in
            var input = raw
            repeat {
                let produced = try buffer.withUnsafeMutableBytes { try decoder.decode(&input, into: $0) }
                output.append(contentsOf: buffer[0..<produced])
                if produced == 0 && input.isEmpty { break }
            } while true
        }
        return output
    }

    @Test(arguments: TransportUnderTest.available, [RequestCompressor.Encoding.deflate, .gzip])
    func bodiesAreCompressed(transport: TransportUnderTest, encoding: RequestCompressor.Encoding) async throws {
        try await withServer { server async throws in
            server.route("/events") { _ in .text("ok") }
            let session = makeSession(transport, server: server, interceptor: RequestCompressor(encoding: encoding))
            _ = try await session.request("events", method: .post, parameters: Self.batch, encoder: .json).validate().serializingString().value
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.headers["Content-Encoding"] == encoding.rawValue)
            let plain = try JSONParameterEncoder.makeDefaultEncoder().encode(Self.batch)
            #expect(recorded.body.count < plain.count / 3)
            #expect(try Self.decode(recorded.body, encoding.rawValue) == plain)
            if encoding == .gzip { #expect(recorded.body.starts(with: [0x1F, 0x8B])) } else { #expect(recorded.body.first == 0x78) }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func smallBodiesAndBodiesAlreadyEncodedAreLeftAlone(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/x") { request in .text(request.headers["Content-Encoding"] ?? "none") }
            let session = makeSession(transport, server: server)
            let small = try await session.request(
                "x", method: .post, parameters: ["a": "1"],
                interceptor: .requestCompressor(minimumSize: 1024)
            ).serializingString().value
            #expect(small == "none")
            #expect(server.recordedRequests.last?.body == Data("a=1".utf8))
            let encoded: RequestModifier = { $0.setValue("br", forHTTPHeaderField: "Content-Encoding") }
            let refused = await session.request(
                "x", method: .post, parameters: Self.batch, encoder: .json,
                interceptor: .deflateCompressor, requestModifier: encoded
            ).serializingString().result
            let kinds = [refused.error?.kind, (refused.error?.underlyingError as? CourierError)?.kind]
            #expect(kinds.contains(.encodingFailed))
            let skipped = try await session.request(
                "x", method: .post, parameters: Self.batch, encoder: .json,
                interceptor: .requestCompressor(duplicateHeaderBehavior: .skip),
                requestModifier: encoded
            ).serializingString().value
            #expect(skipped == "br")
            let replaced = try await session.request(
                "x", method: .post, parameters: Self.batch, encoder: .json,
                interceptor: .requestCompressor(encoding: .gzip, duplicateHeaderBehavior: .replace),
                requestModifier: encoded
            ).serializingString().value
            #expect(replaced == "gzip")
            let declined = try await session.request(
                "x", method: .post, parameters: Self.batch, encoder: .json,
                interceptor: RequestCompressor(shouldCompress: { _ in false })
            ).serializingString().value
            #expect(declined == "none")
            _ = try await session.request("x").serializingString().value  // no body: nothing to do
        }
    }
}
