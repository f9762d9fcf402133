import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Methods, parameter encodings and headers as the server receives them.
@Suite struct RequestBuildingTests {
    @Test(arguments: TransportUnderTest.available, [HTTPMethod.get, .post, .put, .patch, .delete, .options])
    func methodReachesTheServer(transport: TransportUnderTest, method: HTTPMethod) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("done"))
            let session = makeSession(transport, server: server)
            let text = try await session.request("thing", method: method).serializingString().value
            let recorded = try await server.takeRequest()
            #expect(text == "done")
            #expect(recorded.method == method.rawValue)
            #expect(recorded.path == "/thing")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headIsAnsweredWithoutABody(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("a body the client must not read"))
            let session = makeSession(transport, server: server)
            let response = await session.request("thing", method: .head).serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.method == "HEAD")
            #expect(response.response?.statusCode == 200)
            #expect(response.value == Data())
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func queryParametersAreSortedEscapedAndNilDropped(transport: TransportUnderTest) async throws {
        struct Search: Encodable, Sendable {
            let q: String
            let page: Int
            let filter: String?
            let tag = "a&b=c d+é/?"
        }
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server)
            _ = await session.request("search?existing=1", parameters: Search(q: "swift", page: 2, filter: nil)).serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.target == "/search?existing=1&page=2&q=swift&tag=a%26b%3Dc%20d%2B%C3%A9/?")
            #expect(recorded.query["tag"] == "a&b=c d+é/?")
            #expect(recorded.query["filter"] == nil)
            #expect(recorded.body.isEmpty)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func dictionaryParametersOfADeleteGoInTheQuery(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server)
            _ = await session.request("items", method: .delete, parameters: ["b": "2", "a": "1"]).serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.target == "/items?a=1&b=2")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func postParametersBecomeAFormBody(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server)
            _ = await session.request("form", method: .post, parameters: ["name": "Bob Smith", "a": "1&2"], encoder: .urlEncodedForm)
                .serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=utf-8")
            #expect(recorded.bodyText == "a=1%262&name=Bob%20Smith")
            #expect(recorded.target == "/form")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func encodableParametersBecomeAJSONBody(transport: TransportUnderTest) async throws {
        struct NewUser: Encodable, Sendable { let nick: String; let level: Int; let motto: String? }
        try await withServer { server async throws in
            server.enqueue(.status(201))
            let session = makeSession(transport, server: server)
            let response = await session.request("users", method: .post, parameters: NewUser(nick: "bob", level: 3, motto: nil), encoder: .json)
                .serializingData().response
            let recorded = try await server.takeRequest()
            #expect(response.response?.statusCode == 201)
            #expect(recorded.headers["Content-Type"] == "application/json")
            #expect(recorded.bodyText == #"{"level":3,"nick":"bob"}"#)
            #expect(recorded.headers["Content-Length"] == "24")
        }
    }

    @Test func unencodableParametersFailThroughTheResponse() async throws {
        let session = makeSession(.urlSession)
        let response = await session.request("http://127.0.0.1:1/x", parameters: [1, 2, 3]).serializingData().response
        #expect(response.error?.kind == .encodingFailed)
        #expect(response.request == nil)
    }

    @Test(arguments: TransportUnderTest.available)
    func requestHeadersOverrideSessionHeaders(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server, headers: ["User-Agent": "MyApp/1.0", "X-Team": "core", "Accept": "text/plain"])
            _ = await session.request("h", headers: [HTTPHeader(name: "x-team", value: "edge"), .authorization(bearerToken: "t0k3n")])
                .serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.headers["User-Agent"] == "MyApp/1.0")
            #expect(recorded.headers.values(for: "X-Team") == ["edge"])
            #expect(recorded.headers["Authorization"] == "Bearer t0k3n")
            #expect(recorded.headers["Accept"] == "text/plain")
            // Under a C locale Courier sends none; FoundationNetworking (URLSession on Linux) then adds its own.
            if transport == .curl || HTTPHeader.defaultAcceptLanguage != nil {
                #expect(recorded.headers["Accept-Language"] == HTTPHeader.defaultAcceptLanguage?.value)
            }
        }
    }

    /// With decompression off nothing would decode a compressed body, so Courier must not ask for
    /// one; a caller's own `Accept-Encoding` still goes out as given.
    @Test(arguments: TransportUnderTest.available, [true, false])
    func acceptEncodingFollowsAutomaticDecompression(transport: TransportUnderTest, decompresses: Bool) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server) { $0.automaticDecompression = decompresses }
            _ = await session.request("default").serializingData().response
            let plain = try await server.takeRequest()
            if decompresses {
                // What the transport decodes here (FieldLinesTests checks the list).
                #expect(plain.headers["Accept-Encoding"] == (transport == .curl ? CurlContentCoding.advertised : plain.headers["Accept-Encoding"]))
                #expect(plain.headers["Accept-Encoding"]?.contains("gzip") == true)
            } else {
                // None, or `identity` where the transport must stop its HTTP stack asking itself (URLSession).
                #expect(plain.headers["Accept-Encoding"] == nil || plain.headers["Accept-Encoding"] == "identity")
            }
            _ = await session.request("own", headers: [.acceptEncoding("br")]).serializingData().response
            let own = try await server.takeRequest()
            #expect(own.headers["Accept-Encoding"] == "br")
        }
    }

    @Test func defaultUserAgentNamesCourier() {
        #expect(HTTPHeader.defaultUserAgent.value.contains("Courier/"))
    }

    @Test(arguments: TransportUnderTest.available)
    func urlRequestConvertibleIsUsedAsIs(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("ok"))
            let session = makeSession(transport)
            var request = URLRequest(url: server.url("/raw?x=1"))
            request.httpMethod = "PUT"
            request.httpBody = Data("payload".utf8)
            request.setValue("yes", forHTTPHeaderField: "X-Raw")
            let text = try await session.request(request).serializingString().value
            let recorded = try await server.takeRequest()
            #expect(text == "ok")
            #expect(recorded.method == "PUT")
            #expect(recorded.target == "/raw?x=1")
            #expect(recorded.bodyText == "payload")
            #expect(recorded.headers["X-Raw"] == "yes")
        }
    }

    @Test func relativePathsResolveAgainstTheBaseURL() throws {
        let session = Session(baseURL: URL(string: "http://127.0.0.1:8080/v2/"))
        #expect(try session.resolve(URL(string: "users/42")!).absoluteString == "http://127.0.0.1:8080/v2/users/42")
        #expect(try session.resolve(URL(string: "/root")!).absoluteString == "http://127.0.0.1:8080/root")
        #expect(try session.resolve(URL(string: "https://other.test/x")!).absoluteString == "https://other.test/x")
        let withoutSlash = Session(baseURL: URL(string: "http://127.0.0.1:8080/v2"))
        #expect(try withoutSlash.resolve(URL(string: "users/42")!).absoluteString == "http://127.0.0.1:8080/v2/users/42")
    }

    @Test func invalidURLsFailThroughTheResponseNotAtTheCallSite() async {
        let session = Session(callbackQueue: testCallbackQueue)
        let noBase = await session.request("users/42").serializingData().response
        #expect(noBase.error?.kind == .invalidURL)
        let garbage = await session.request("ht tp://bad url").serializingData().response
        #expect(garbage.error?.kind == .invalidURL)
        let ftp = await session.request("ftp://127.0.0.1/file").serializingData().response
        #expect(ftp.error?.kind == .invalidURL)
    }
}
