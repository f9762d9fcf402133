import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Response heads are limited too: by field count and size (Courier's own limits), and by
/// libcurl's 300 KiB cap, which arrives as `.responseTooLarge` rather than a lost connection.
@Suite struct ResponseHeadLimitTests {
    static func fields(_ count: Int, valueLength: Int) -> MockResponse {
        var response = MockResponse.ok("x")
        for index in 0..<count { response = response.header("X-F\(index)", String(repeating: "b", count: valueLength)) }
        return response
    }

    @Test(arguments: TransportUnderTest.available)
    func tooManyHeaderFieldsFail(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/many") { _ in Self.fields(1_500, valueLength: 4) }
            let session = makeSession(transport, server: server)
            let response = await session.request("many").serializingData().response
            #expect(response.error?.kind == .responseTooLarge)
            #expect(response.error?.message.contains("maximumResponseHeaderCount (1000)") == true, "\(response.error.map { "\($0)" } ?? "")")
            let lifted = makeSession(transport, server: server) { $0.maximumResponseHeaderCount = nil }
            #expect(try await lifted.request("many").serializingString().value == "x")
        }
    }

    /// Courier keeps every line of a repeated name (`headerFields`), so each one counts (#39).
    @Test(arguments: TransportUnderTest.available)
    func repeatedLinesOfOneNameCountEach(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/repeated") { _ in
                var response = MockResponse.ok("x")
                for index in 0..<1_500 { response = response.header("X-Same", "\(index)") }
                return response
            }
            let session = makeSession(transport, server: server)
            let response = await session.request("repeated").serializingData().response
            switch transport {
            case .curl:
                #expect(response.error?.kind == .responseTooLarge)
                #expect(response.error?.message.contains("maximumResponseHeaderCount (1000)") == true, "\(response.error.map { "\($0)" } ?? "")")
            case .urlSession:
                // FoundationNetworking hands over one joined field: one line, well within the limit.
                #expect(response.error == nil)
                #expect(response.headerFields?.values(for: "X-Same").count == 1)
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headSizeLimitIsConfigurable(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // 200 fields of 1000 bytes: 200 KB, under the 256 KiB default and libcurl's 300 KiB.
            server.route("/big") { _ in Self.fields(200, valueLength: 1_000) }
            let session = makeSession(transport, server: server)
            #expect(try await session.request("big").serializingString().value == "x")
            let strict = makeSession(transport, server: server) { $0.maximumResponseHeadSize = 64 << 10 }
            let response = await strict.request("big").serializingData().response
            #expect(response.error?.kind == .responseTooLarge)
            #expect(response.error?.message.contains("maximumResponseHeadSize") == true, "\(response.error.map { "\($0)" } ?? "")")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func libcurlsHeadCapIsResponseTooLarge(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/huge") { _ in Self.fields(5_000, valueLength: 80) }
            let session = makeSession(transport, server: server)
            let response = await session.request("huge").serializingData().response
            #expect(response.error?.kind == .responseTooLarge, "\(response.error.map { "\($0)" } ?? "")")
            #expect(response.error?.message.contains("response head") == true)
        }
    }
}
