import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Courier against httpbin under gunicorn, on every transport.
@Suite(.enabled(if: InteropServer.httpbin != nil, "httpbin is not running (COURIER_HTTPBIN_URL unset)"))
struct HTTPBinInteropTests {
    struct Echo: Decodable, Sendable {
        let args: [String: String]?
        let headers: [String: String]
        let json: [String: String]?
        let url: String
    }

    func session(_ transport: TransportUnderTest) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        return Session(configuration: configuration, baseURL: InteropServer.httpbin, callbackQueue: testCallbackQueue)
    }

    @Test(arguments: TransportUnderTest.available)
    func getEchoesTheQuery(transport: TransportUnderTest) async throws {
        let echo = try await session(transport).request("get", parameters: ["q": "swift", "page": "2", "emoji": "🚀 &"])
            .validate().serializingDecodable(Echo.self).value
        #expect(echo.args == ["q": "swift", "page": "2", "emoji": "🚀 &"])
        #expect(echo.headers["User-Agent"]?.contains("Courier/") == true)
    }

    @Test(arguments: TransportUnderTest.available)
    func postEchoesJSON(transport: TransportUnderTest) async throws {
        let echo = try await session(transport).request("post", method: .post, parameters: ["nick": "bob"], encoder: .json)
            .validate().serializingDecodable(Echo.self).value
        #expect(echo.json == ["nick": "bob"])
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test(arguments: TransportUnderTest.available)
    func statusValidationCarriesTheCode(transport: TransportUnderTest) async throws {
        let error = await session(transport).request("status/418").validate().serializingData().response.error
        #expect(error?.kind == .validationFailed)
        #expect(error?.responseCode == 418)
    }

    @Test(arguments: TransportUnderTest.available, ["gzip", "deflate"])
    func compressedBodiesAreDecoded(transport: TransportUnderTest, encoding: String) async throws {
        let json = try await session(transport).request(encoding).validate().serializingJSON().value
        #expect(json[encoding == "gzip" ? "gzipped" : "deflated"]?.boolValue == true)
    }

    @Test(arguments: TransportUnderTest.available)
    func utf8TextIsDecoded(transport: TransportUnderTest) async throws {
        let text = try await session(transport).request("encoding/utf8").validate().serializingString().value
        #expect(text.contains("∮ E⋅da = Q"))
    }

    @Test(arguments: TransportUnderTest.available)
    func htmlFailsJSONContentTypeValidation(transport: TransportUnderTest) async throws {
        let error = await session(transport).request("html").validate(contentType: ["application/json"]).serializingData().response.error
        #expect(error?.kind == .validationFailed)
        #expect(error?.message.contains("text/html") == true)
        let html = try await session(transport).request("html").validate(contentType: ["text/*"]).serializingString().value
        #expect(html.contains("Herman Melville"))
    }

    @Test(arguments: TransportUnderTest.available)
    func bytesHaveTheAskedSize(transport: TransportUnderTest) async throws {
        let data = try await session(transport).request("bytes/65536").validate().serializingData().value
        #expect(data.count == 65536)
    }

    @Test(arguments: TransportUnderTest.available)
    func redirectsAndCookiesWork(transport: TransportUnderTest) async throws {
        let json = try await session(transport).request("redirect/3").validate().serializingJSON().value
        #expect(json["url"]?.stringValue?.hasSuffix("/get") == true)
    }
}

/// Courier against nginx: static files, gzip, HTTPS with a private CA.
@Suite(.enabled(if: InteropServer.nginx != nil, "nginx is not running (COURIER_NGINX_URL unset)"))
struct NginxInteropTests {
    func session(_ transport: TransportUnderTest, configure: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configure(&configuration)
        return Session(configuration: configuration, baseURL: InteropServer.nginx, callbackQueue: testCallbackQueue)
    }

    @Test(arguments: TransportUnderTest.available)
    func smallJSON(transport: TransportUnderTest) async throws {
        let json = try await session(transport).request("small.json").validate().serializingJSON().value
        #expect(json["name"]?.stringValue == "courier")
    }

    @Test(arguments: TransportUnderTest.available)
    func gzippedTextIsDecodedToTheOriginalBytes(transport: TransportUnderTest) async throws {
        let response = await session(transport).request("text-1m.txt").validate().serializingData().response
        #expect(response.value?.count == 1_048_576)
        #expect(response.response?.value(forHTTPHeaderField: "Content-Encoding") == "gzip")
    }

    @Test(arguments: TransportUnderTest.available)
    func randomBytesArriveIntact(transport: TransportUnderTest) async throws {
        let data = try await session(transport).request("random-1m.bin").validate().serializingData().value
        #expect(data.count == 1_048_576)
    }
}

/// HTTPS against nginx with a certificate from a private CA (made by `.ci/start-servers.sh`).
@Suite(.enabled(if: InteropServer.nginxHTTPS != nil && InteropServer.testCA != nil, "nginx HTTPS is not running (COURIER_NGINX_HTTPS_URL unset)"))
struct NginxTLSInteropTests {
    func session(trusting: Bool) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = .curl
        if trusting, let ca = InteropServer.testCA { configuration.additionalTrustedCertificates = [ca] }
        return Session(configuration: configuration, baseURL: InteropServer.nginxHTTPS, callbackQueue: testCallbackQueue)
    }

    @Test func trustedCAPasses() async throws {
        guard TransportUnderTest.available.contains(.curl) else { return }
        let json = try await session(trusting: true).request("small.json").validate().serializingJSON().value
        #expect(json["name"]?.stringValue == "courier")
    }

    @Test func untrustedCAFailsClearly() async throws {
        guard TransportUnderTest.available.contains(.curl) else { return }
        let error = await session(trusting: false).request("small.json").serializingData().response.error
        #expect(error?.kind == .serverCertificateUntrusted)
        #expect(error?.isSecureConnectionFailure == true)
        #expect(error?.message.isEmpty == false)
    }
}
