import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierTestSupport

/// Courier follows redirects itself, identically on every transport.
@Suite struct RedirectTests {
    @Test(arguments: TransportUnderTest.available)
    func redirectsAreFollowed(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.redirect(to: "/step2", status: 301))
            server.enqueue(.redirect(to: server.url("/final").absoluteString, status: 302))
            server.enqueue(.ok("arrived"))
            let recorder = EventRecorder()
            let session = makeSession(transport, server: server, monitors: [recorder])
            let response = await session.request("start").serializingString().response
            #expect(response.value == "arrived")
            #expect(response.response?.url?.path == "/final")
            #expect(response.request?.url?.path == "/final")
            #expect(response.metrics?.redirectCount == 2)
            #expect(recorder.recorded.filter { $0.hasPrefix("redirect") } == ["redirect(301 → /step2)", "redirect(302 → /final)"])
        }
    }

    @Test(arguments: TransportUnderTest.available, [(301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")])
    func methodAndBodyFollowTheStatus(transport: TransportUnderTest, redirect: (Int, String)) async throws {
        try await withServer { server async throws in
            server.enqueue(.redirect(to: "/target", status: redirect.0))
            server.enqueue(.ok("ok"))
            let session = makeSession(transport, server: server)
            _ = await session.request("form", method: .post, parameters: ["a": "1"], encoder: .json).serializingData().response
            _ = try await server.takeRequest()
            let second = try await server.takeRequest()
            #expect(second.method == redirect.1)
            #expect(second.path == "/target")
            if redirect.1 == "POST" {
                #expect(second.bodyText == #"{"a":"1"}"#)
                #expect(second.headers["Content-Type"] == "application/json")
            } else {
                #expect(second.body.isEmpty)
                #expect(second.headers["Content-Type"] == nil)
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func credentialsAreNotSentToAnotherOrigin(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let other = try TestServer()
            defer { expectClean(other.shutdown()) }
            server.enqueue(.redirect(to: "/same", status: 302))
            server.enqueue(.redirect(to: other.url("/elsewhere").absoluteString, status: 302))
            other.enqueue(.ok("there"))
            let session = makeSession(transport, server: server)
            let headers: HTTPHeaders = [
                .authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "s=1"), HTTPHeader(name: "X-Keep", value: "yes"),
            ]
            let text = try await session.request("start", headers: headers).serializingString().value
            _ = try await server.takeRequest()
            let sameOrigin = try await server.takeRequest()
            let crossOrigin = try await other.takeRequest()
            #expect(text == "there")
            #expect(sameOrigin.headers["Authorization"] == "Bearer secret")
            #expect(crossOrigin.headers["Authorization"] == nil)
            #expect(crossOrigin.headers["Cookie"] == nil)
            #expect(crossOrigin.headers["X-Keep"] == "yes")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func loopsAndLimitsFailReadably(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/a") { _ in .redirect(to: "/b") }
            server.route("/b") { _ in .redirect(to: "/a") }
            for index in 0..<5 { server.route("/hop\(index)") { _ in .redirect(to: "/hop\(index + 1)") } }
            let session = makeSession(transport, server: server) { $0.maximumRedirects = 3 }
            let loop = await session.request("a").serializingData().response.error
            #expect(loop?.kind == .tooManyRedirects)
            #expect(loop?.message.contains("loop") == true)
            let limit = await session.request("hop0").serializingData().response.error
            #expect(limit?.kind == .tooManyRedirects)
            #expect(limit?.message.contains("3 redirects") == true)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func redirectsCanBeTurnedOff(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.redirect(to: "/elsewhere", status: 302))
            let session = makeSession(transport, server: server) { $0.maximumRedirects = 0 }
            let response = await session.request("start").serializingData().response
            #expect(response.response?.statusCode == 302)
            #expect(response.response?.value(forHTTPHeaderField: "Location") == "/elsewhere")
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cookiesAreStoredAndSentBack(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(
                MockResponse.redirect(to: "/next", status: 302).header("Set-Cookie", "session=abc; Path=/").header("Set-Cookie", "theme=dark; Path=/")
            )
            server.enqueue(.ok("next"))
            server.enqueue(.ok("later"))
            let storage = HTTPCookieStorage.makeIsolated()
            let session = makeSession(transport, server: server) { $0.cookies = .storage(storage) }
            _ = try await session.request("login").serializingString().value
            _ = try await session.request("later").serializingString().value
            _ = try await server.takeRequest()
            let redirected = try await server.takeRequest()
            let later = try await server.takeRequest()
            #expect(redirected.headers["Cookie"]?.contains("session=abc") == true)
            #expect(later.headers["Cookie"]?.contains("theme=dark") == true)
            #expect(storage.cookies?.count == 2)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func noCookiesMeansNone(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("a").header("Set-Cookie", "session=abc; Path=/"))
            server.enqueue(.ok("b"))
            let session = makeSession(transport, server: server) { $0.cookies = .none }
            _ = try await session.request("a").serializingString().value
            _ = try await session.request("b").serializingString().value
            _ = try await server.takeRequest()
            #expect(try await server.takeRequest().headers["Cookie"] == nil)
        }
    }
}

@Suite struct RedirectPolicyTests {
    @Test(arguments: TransportUnderTest.available)
    func requestPolicyBeatsSessionPolicy(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.redirect(to: "/a", status: 302))
            server.enqueue(.redirect(to: "/b", status: 302))
            server.enqueue(.ok("modified"))
            let session = makeSession(transport, server: server) { $0.redirectPolicy = .doNotFollow }
            let stopped = await session.request("start").serializingData().response
            #expect(stopped.response?.statusCode == 302)
            let modified = try await session.request("start2").redirect(
                using: .modify { proposed, _ in
                    var request = proposed
                    request.setValue("1", forHTTPHeaderField: "X-Redirected")
                    return request
                }
            ).serializingString().value
            #expect(modified == "modified")
            _ = try await server.takeRequest()
            _ = try await server.takeRequest()
            let followed = try await server.takeRequest()
            #expect(followed.headers["X-Redirected"] == "1")
            #expect(followed.path == "/b")
        }
    }
}
