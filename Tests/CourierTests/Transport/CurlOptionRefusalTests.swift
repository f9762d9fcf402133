@_spi(Transport) @testable import Courier
import CCurl
import CourierTestServer
import Foundation
import Testing

/// Options libcurl refuses fail the transfer (or the loop) with `.transportFailed` naming the
/// option, instead of being ignored (issue 25).
@Suite("Curl transport: refused options")
struct CurlOptionRefusalTests {
    /// A fresh easy handle; throws when libcurl is not loadable.
    private static func easyHandle() throws -> CurlEasyHandle {
        try CurlTestSupport.requireLibcurl()
        return try #require(CurlEasyHandle())
    }

    @Test("an easy option libcurl refuses throws .transportFailed naming it, with libcurl's code and text")
    func refusedEasyOption() throws {
        let easy = try Self.easyHandle()
        let unknown = CurlOption(name: "CURLOPT_SSLVERSION_FROM_THE_FUTURE", number: 99_999)
        do {
            try easy.set(unknown, 1)
            Issue.record("an unknown option was accepted")
        } catch {
            #expect(error.kind == .transportFailed)
            #expect(error.message.hasPrefix("libcurl refused CURLOPT_SSLVERSION_FROM_THE_FUTURE (error 48: "), "\(error.message)")
            #expect((error.underlyingError as? CurlError)?.code == 48)
        }
        // CURLOPT_SSLVERSION (32) with a version past the last one libcurl knows.
        let sslVersion = CurlOption(name: "CURLOPT_SSLVERSION", number: 32)
        #expect(throws: CourierError.self) { try easy.set(sslVersion, 1_000) }
        do {
            try easy.set(sslVersion, 1_000)
        } catch {
            #expect(error.kind == .transportFailed)
            #expect(error.message.contains("libcurl refused CURLOPT_SSLVERSION (error "), "\(error.message)")
        }
        try easy.set(.noSignal, 1)
    }

    @Test("a multi option libcurl refuses throws .transportFailed naming it")
    func refusedMultiOption() throws {
        try CurlTestSupport.requireLibcurl()
        let multi = try #require(ccurl_multi_init())
        defer { ccurl_multi_cleanup(multi) }
        do {
            try CurlEventLoop.set(CurlMultiOption(name: "CURLMOPT_FROM_THE_FUTURE", number: 99_999), 1, on: multi)
            Issue.record("an unknown multi option was accepted")
        } catch {
            #expect(error.kind == .transportFailed)
            #expect(error.message.hasPrefix("libcurl refused CURLMOPT_FROM_THE_FUTURE (error 6: "), "\(error.message)")
        }
        try CurlEventLoop.set(.maxConnects, 8, on: multi)
    }

    @Test("a method libcurl refuses (longer than its 8 MB string limit) fails the transfer naming CURLOPT_CUSTOMREQUEST")
    func refusedMethodFailsTheTransfer() async throws {
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        // Nothing listens there: with the refusal ignored, libcurl would send a GET and fail to connect.
        let url = URL(string: "http://127.0.0.1:\(try CurlTestSupport.closedPort())/")!
        let method = HTTPMethod(rawValue: String(repeating: "X", count: 8_000_001))
        let result = try await CurlTestSupport.run(TransportRequest(url: url, method: method), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error?.kind == .transportFailed)
        #expect(
            result.error?.message.contains("libcurl refused CURLOPT_CUSTOMREQUEST (error 43: ") == true,
            "\(String(describing: result.error))")
        #expect(result.error?.url == url)
        #expect(result.head == nil)

        // The loop goes on: the next transfer on it runs as usual.
        let next = try await CurlTestSupport.run(TransportRequest(url: url), on: transport)
        #expect(next.error?.kind == .cannotConnect)
    }
}
