import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Courier's Basic and Digest answers (#26) against httpbin's `/basic-auth` and `/digest-auth`.
@Suite(.enabled(if: InteropServer.httpbin != nil, "httpbin is not running (COURIER_HTTPBIN_URL unset)"))
struct HTTPBinAuthInteropTests {
    struct Authenticated: Decodable, Sendable { let authenticated: Bool; let user: String }

    func session(_ transport: TransportUnderTest) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        // httpbin's digest endpoint sets a cookie on the challenge and wants it back with the answer.
        configuration.cookies = .storage(HTTPCookieStorage.makeIsolated())
        return Session(configuration: configuration, baseURL: InteropServer.httpbin, callbackQueue: testCallbackQueue)
    }

    @Test(
        arguments: TransportUnderTest.available,
        [
            "basic-auth/bob/s3cret", "digest-auth/auth/bob/s3cret/MD5",
            "digest-auth/auth/bob/s3cret/SHA-256",
        ])
    func challengesAreAnswered(transport: TransportUnderTest, path: String) async throws {
        let answer = try await session(transport).request(path).authenticate(with: HTTPCredential(username: "bob", password: "s3cret"))
            .validate().serializingDecodable(Authenticated.self).value
        #expect(answer.authenticated && answer.user == "bob")
    }

    @Test(arguments: TransportUnderTest.available)
    func aWrongPasswordEndsWithThe401(transport: TransportUnderTest) async throws {
        let error = await session(transport).request("digest-auth/auth/bob/s3cret/SHA-256")
            .authenticate(with: HTTPCredential(username: "bob", password: "wrong")).validate().serializingData().result.error
        #expect(error?.validationFailure == .unacceptableStatusCode(401))
    }

    @Test(arguments: TransportUnderTest.available)
    func preemptiveBasicNeedsNoChallenge(transport: TransportUnderTest) async throws {
        let answer = try await session(transport).request("basic-auth/bob/s3cret").authenticate(username: "bob", password: "s3cret")
            .validate().serializingDecodable(Authenticated.self).value
        #expect(answer.authenticated)
    }
}
