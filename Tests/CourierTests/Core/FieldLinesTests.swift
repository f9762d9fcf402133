import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Repeated field lines both ways (#39): `HTTPHeaders.append` adds a line that never replaces,
/// requests keep every line in order to the wire (each its own line on curl, joined on URLSession),
/// and responses keep every line in wire order on `headerFields`.
@Suite struct FieldLinesTests {
    // MARK: - HTTPHeaders, without I/O

    @Test func appendAddsALineThatNeverReplaces() {
        var headers: HTTPHeaders = ["Accept": "*/*"]
        headers.append(name: "X-Test", value: "a")
        headers.append(HTTPHeader(name: "x-test", value: "b"))
        #expect(Array(headers).map(\.description) == ["Accept: */*", "X-Test: a", "x-test: b"])
        #expect(headers.values(for: "X-TEST") == ["a", "b"])
        #expect(headers.values(for: "Missing") == [])
        // One field for the readers of one value: joined as HTTP joins list fields.
        #expect(headers["x-test"] == "a, b")
        #expect(headers.value(for: "Accept") == "*/*")
        #expect(headers.contains("X-TEST"))
    }

    @Test func addAndUpdateStillReplaceEveryLineOfTheName() {
        var headers: HTTPHeaders = ["X-Test": "a", "Accept": "*/*"]
        headers.append(name: "X-Test", value: "b")
        headers.add(name: "x-test", value: "c")
        #expect(Array(headers).map(\.description) == ["x-test: c", "Accept: */*"])
        headers.append(name: "X-Test", value: "d")
        headers["X-Test"] = "e"
        #expect(Array(headers).map(\.description) == ["X-Test: e", "Accept: */*"])
        headers.append(name: "X-Test", value: "f")
        headers.append(name: "Accept", value: "text/plain")
        headers.remove(name: "x-test")
        #expect(Array(headers).map(\.description) == ["Accept: */*", "Accept: text/plain"])
    }

    @Test func theDictionaryJoinsRepeatedNamesInsteadOfDroppingOne() {
        var headers: HTTPHeaders = ["X-Test": "a"]
        headers.append(name: "x-test", value: "b")
        headers.append(name: "Cookie", value: "a=1")
        headers.append(name: "cookie", value: "b=2")
        #expect(headers.dictionary == ["X-Test": "a, b", "Cookie": "a=1; b=2"])
        #expect(headers["cookie"] == "a=1; b=2")
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        request.headers = headers
        #expect(request.value(forHTTPHeaderField: "X-Test") == "a, b")
    }

    @Test func mergingReplacesANameWithEveryLineOfTheOther() {
        var session: HTTPHeaders = ["X-Test": "session", "Accept": "*/*"]
        session.append(name: "X-Test", value: "session 2")
        var request: HTTPHeaders = ["X-Test": "a"]
        request.append(name: "X-Other", value: "o")
        request.append(name: "X-Test", value: "b")
        let merged = session.merging(request)
        #expect(Array(merged).map(\.description) == ["X-Test: a", "X-Test: b", "Accept: */*", "X-Other: o"])
        #expect(session.merging([:]) == session)
    }

    /// The engine reads a `URLRequest`'s headers back (one value per name, in no order) and
    /// restores the lines wherever the request still says what they join to.
    @Test func linesAreRestoredOnlyWhereTheRequestStillAgrees() {
        var lines: HTTPHeaders = ["User-Agent": "ua", "X-Test": "a"]
        lines.append(name: "X-Test", value: "b")
        lines.append(name: "X-Gone", value: "1")
        lines.append(name: "Cookie", value: "a=1")
        lines.append(name: "Cookie", value: "b=2")
        let cases: [(read: [String: String], sent: [String])] = [
            // Untouched: every line, in order; a name only the request has comes after.
            (
                ["X-Test": "a, b", "user-agent": "ua", "Cookie": "a=1; b=2", "X-New": "n"],
                ["user-agent: ua", "X-Test: a", "X-Test: b", "Cookie: a=1", "Cookie: b=2", "X-New: n"]
            ),
            // An adapter changed X-Test: its value, one line, at the first line's place.
            (["X-Test": "c", "User-Agent": "ua"], ["User-Agent: ua", "X-Test: c"]),
            // A value that only looks like a join of other lines is sent as it is.
            (["X-Test": "a,b", "User-Agent": "other"], ["User-Agent: other", "X-Test: a,b"]),
            // Removed stays removed.
            ([:], []),
        ]
        for (read, sent) in cases {
            #expect(Array(HTTPHeaders(read).restoringLines(of: lines)).map(\.description) == sent, "\(read)")
        }
        // Lines of different names interleaved stay so.
        var interleaved: HTTPHeaders = ["X-Test": "a"]
        interleaved.append(name: "X-Other", value: "o")
        interleaved.append(name: "X-Test", value: "b")
        let restored = HTTPHeaders(["X-Other": "o", "X-Test": "a, b"]).restoringLines(of: interleaved)
        #expect(Array(restored).map(\.description) == ["X-Test: a", "X-Other: o", "X-Test: b"])
        #expect(HTTPHeaders(["Accept": "*/*"]).merging(interleaved).map(\.description) == ["Accept: */*", "X-Test: a", "X-Other: o", "X-Test: b"])
    }

    // MARK: - Requests, end to end

    /// Session lines, request lines, an adapter that changes nothing and a modifier that adds a
    /// header: the curl transport sends every line as its own, in order; URLSession joins a name's
    /// lines into one field (FoundationNetworking holds one value per name).
    @Test(arguments: TransportUnderTest.available)
    func repeatedRequestLinesReachTheServerInOrder(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            for _ in 0..<3 { server.enqueue(.ok("")) }
            var sessionHeaders: HTTPHeaders = ["X-Session": "s1"]
            sessionHeaders.append(name: "X-Session", value: "s2")
            let session = makeSession(transport, server: server, headers: sessionHeaders, interceptor: Interceptor(adapters: [Untouched()]))
            var headers: HTTPHeaders = ["X-Test": "a"]
            headers.append(name: "X-Other", value: "o")
            headers.append(name: "X-Test", value: "b")
            _ = await session.request("get", headers: headers) { $0.setValue("m", forHTTPHeaderField: "X-Modifier") }
                .serializingData().response
            _ = await session.upload(Data("body".utf8), to: "upload", headers: headers).serializingData().response
            _ = await session.request("plain").serializingData().response
            for path in ["/get", "/upload"] {
                let recorded = try await server.takeRequest()
                #expect(recorded.path == path)
                switch transport {
                case .curl:
                    #expect(recorded.headers.values(for: "X-Test") == ["a", "b"], "\(path)")
                    #expect(recorded.headers.values(for: "X-Session") == ["s1", "s2"], "\(path)")
                    let names = recorded.headers.names.filter { $0.hasPrefix("X-") }
                    let expected = ["X-Session", "X-Session", "X-Test", "X-Other", "X-Test"]
                    #expect(Array(names.prefix(5)) == expected, "\(path): \(names)")
                case .urlSession:
                    #expect(recorded.headers.values(for: "X-Test") == ["a, b"], "\(path)")
                    #expect(recorded.headers.values(for: "X-Session") == ["s1, s2"], "\(path)")
                }
                #expect(recorded.headers["X-Other"] == "o")
            }
            let plain = try await server.takeRequest()
            #expect(plain.headers.values(for: "X-Session") == (transport == .curl ? ["s1", "s2"] : ["s1, s2"]))
        }
    }

    /// An adapter that rewrites a repeated name wins: its value goes out as one line.
    @Test(arguments: TransportUnderTest.available)
    func anAdaptersValueReplacesTheLines(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server, interceptor: Interceptor(adapters: [Rewriting()]))
            var headers: HTTPHeaders = ["X-Test": "a"]
            headers.append(name: "X-Test", value: "b")
            _ = await session.request("get", headers: headers).serializingData().response
            let recorded = try await server.takeRequest()
            #expect(recorded.headers.values(for: "X-Test") == ["adapted"])
        }
    }

    /// A field that takes one value (framing, routing, credentials) is refused when repeated,
    /// before anything is sent, instead of leaving the choice to each server.
    @Test(arguments: TransportUnderTest.available)
    func aRepeatedSingleValueFieldIsRefusedBeforeAnythingIsSent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok(""))
            let session = makeSession(transport, server: server)
            for name in ["Content-Length", "host", "Authorization"] {
                var headers: HTTPHeaders = [name: "1"]
                headers.append(name: name, value: "2")
                let response = await session.request("refused", method: .post, headers: headers).serializingData().response
                #expect(response.error?.kind == .invalidRequest, "\(name)")
            }
            _ = await session.request("sent").serializingData().response
            #expect(try await server.takeRequest().path == "/sent")
        }
    }

    private struct Untouched: RequestAdapter {
        func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
            var request = urlRequest
            request.setValue("yes", forHTTPHeaderField: "X-Adapted")
            return request
        }
    }

    private struct Rewriting: RequestAdapter {
        func adapt(_ urlRequest: URLRequest, for session: Session) async throws -> URLRequest {
            var request = urlRequest
            request.setValue("adapted", forHTTPHeaderField: "X-Test")
            return request
        }
    }

    // MARK: - Responses, end to end

    static func repeatedFieldsResponse() -> MockResponse {
        MockResponse.ok("body").header("X-B", "1").header("Set-Cookie", "a=1; Path=/").header("X-A", "2")
            .header("Set-Cookie", "b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT").header("x-b", "3")
    }

    /// The curl transport keeps every line in wire order (each `Set-Cookie` apart) on every
    /// response type; URLSession gives what FoundationNetworking kept, one line per name.
    @Test(arguments: TransportUnderTest.available)
    func responsesKeepEveryFieldLineInWireOrder(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            for _ in 0..<3 { server.enqueue(Self.repeatedFieldsResponse()) }
            let session = makeSession(transport, server: server)
            let request = session.request("data")
            let data = await request.serializingData().response
            let download = await session.download("file").serializingDownloadedFileURL().response
            let stream = session.streamRequest("stream")
            for try await _ in stream.streamingData() {}
            let streamed = await stream.headerFields
            for (name, fields) in [
                ("data", data.headerFields), ("request", await request.headerFields), ("download", download.headerFields), ("stream", streamed),
            ] {
                let fields = try #require(fields, "\(name)")
                switch transport {
                case .curl:
                    let ours = fields.filter { ["x-a", "x-b", "set-cookie"].contains($0.name.lowercased()) }.map(\.description)
                    #expect(
                        ours == ["X-B: 1", "Set-Cookie: a=1; Path=/", "X-A: 2", "Set-Cookie: b=2; Expires=Wed, 21 Oct 2037 07:28:00 GMT", "x-b: 3"],
                        "\(name)")
                    #expect(fields.values(for: "Set-Cookie").count == 2)
                case .urlSession:
                    // FoundationNetworking joins a name's lines (keeping names that differ in case
                    // apart on Linux), and keeps no order.
                    #expect(Set(fields.values(for: "X-B").flatMap { $0.components(separatedBy: ", ") }) == ["1", "3"], "\(name)")
                    #expect(fields["X-A"] == "2")
                }
            }
            // HTTPURLResponse still has them, joined.
            #expect(data.response?.value(forHTTPHeaderField: "X-B")?.contains("3") == true)
        }
    }

    // MARK: - Accept-Encoding

    /// Without an Accept-Encoding of the caller's, the transport lists what it decodes here (curl:
    /// br and zstd when their libraries load); a caller's value, on the session or the request, is
    /// sent unchanged.
    @Test(arguments: TransportUnderTest.available)
    func acceptEncodingListsWhatTheTransportDecodesUnlessTheCallerSetsOne(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            for _ in 0..<4 { server.enqueue(.ok("")) }
            let session = makeSession(transport, server: server)
            _ = await session.request("default").serializingData().response
            _ = await session.request("own", headers: [.acceptEncoding("gzip, deflate")]).serializingData().response
            let byDefault = try await server.takeRequest().headers.values(for: "Accept-Encoding")
            let own = try await server.takeRequest().headers.values(for: "Accept-Encoding")
            switch transport {
            case .curl:
                let advertised = try #require(CurlContentCoding.advertised)
                #expect(byDefault == [advertised])
                #expect(advertised.contains("br") == CurlContentCoding.br.isAvailable)
                #expect(advertised.contains("zstd") == CurlContentCoding.zstd.isAvailable)
            case .urlSession:
                // What FoundationNetworking adds and decodes itself, not Courier's former fixed list.
                #expect(byDefault.count == 1)
                #expect(byDefault.first?.contains("gzip") == true)
                #expect(byDefault.first != "gzip, deflate")
            }
            #expect(own == ["gzip, deflate"])

            let sessionOwn = makeSession(transport, server: server, headers: [.acceptEncoding("identity")])
            _ = await sessionOwn.request("session").serializingData().response
            _ = await sessionOwn.request("request", headers: [.acceptEncoding("br")]).serializingData().response
            #expect(try await server.takeRequest().headers.values(for: "Accept-Encoding") == ["identity"])
            #expect(try await server.takeRequest().headers.values(for: "Accept-Encoding") == ["br"])
        }
    }

    /// Every coding the default Accept-Encoding lists decodes: a server that answers in the
    /// first of br and zstd the request offers gets its body decoded on either transport.
    @Test(arguments: TransportUnderTest.available)
    func theAdvertisedCodingsDecode(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/coded") { request in
                let offered = (request.headers["Accept-Encoding"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                for (coding, text) in [("br", CurlContentDecodingTests.brotliJSONLines), ("zstd", CurlContentDecodingTests.zstdJSONLines)]
                where offered.contains(coding) {
                    return MockResponse.ok(Data(base64Encoded: text) ?? Data()).header("Content-Encoding", coding)
                }
                return MockResponse.ok(CurlContentDecodingTests.jsonLines)
            }
            let session = makeSession(transport, server: server)
            let response = await session.request("coded").serializingData().response
            #expect(response.error == nil, "\(String(describing: response.error))")
            #expect(response.data == CurlContentDecodingTests.jsonLines)
            let sent = try await server.takeRequest().headers["Accept-Encoding"] ?? ""
            if transport == .curl, CurlContentCoding.br.isAvailable || CurlContentCoding.zstd.isAvailable {
                #expect(sent.contains("br") || sent.contains("zstd"))
                #expect(response.headerFields?["Content-Encoding"] != nil)
            }
        }
    }
}
