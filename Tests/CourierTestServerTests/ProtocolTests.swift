import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

extension CourierTestServerTests {
    @Suite struct HTTPProtocol {
        @Test func keepAliveReusesTheConnectionAndCountsExchanges() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.dispatcher = { _ in .ok("x") }

            let first = try RawClient(port: server.port)
            for _ in 0..<3 { #expect(try first.get("/k").status == 200) }
            let second = try RawClient(port: server.port)
            #expect(try second.get("/k").status == 200)
            #expect(try first.get("/k").status == 200)

            let indices = server.recordedRequests.map { [$0.connectionIndex, $0.exchangeIndex] }
            #expect(indices == [[0, 0], [0, 1], [0, 2], [1, 0], [0, 3]])
            #expect(server.recordedRequests.map(\.sequenceNumber) == [0, 1, 2, 3, 4])
            #expect(server.connectionCount == 2)
            #expect(server.activeConnectionCount == 2)
        }

        @Test func pipelinedRequestsAreAnsweredInOrder() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue([.ok("one"), .ok("two")])
            let client = try RawClient(port: server.port)
            try client.send("GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\n")
            #expect(try client.readResponse().text == "one")
            #expect(try client.readResponse().text == "two")
            #expect(server.recordedRequests.map(\.exchangeIndex) == [0, 1])
        }

        @Test func connectionCloseFromClientOrScriptClosesAfterTheResponse() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue([.ok("a"), MockResponse.ok("b").connectionClose()])

            let client = try RawClient(port: server.port)
            try client.sendRequest("GET", "/", headers: ["Connection: close"])
            let response = try client.readResponse()
            #expect(response.headers["Connection"] == "close")
            #expect(client.readToEnd().end == .eof)

            let scripted = try RawClient(port: server.port)
            let second = try scripted.get("/")
            #expect(second.text == "b" && second.headers["Connection"] == "close")
            #expect(scripted.readToEnd().end == .eof)
        }

        @Test func http10RequestClosesAfterTheResponse() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.ok("old"))
            let client = try RawClient(port: server.port)
            try client.send("GET /legacy HTTP/1.0\r\n\r\n")
            let response = try client.readResponse()
            #expect(response.text == "old" && response.headers["Connection"] == "close")
            #expect(client.readToEnd().end == .eof)
            #expect(server.recordedRequests.first?.version == "HTTP/1.0")
        }

        @Test func headGetsTheContentLengthOfGetButNoBody() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.route("/h") { _ in .ok("twelve bytes") }
            server.route("/hc") { _ in MockResponse.ok("chunks").chunked(chunkSize: 2) }
            let client = try RawClient(port: server.port)
            try client.sendRequest("HEAD", "/h")
            let head = try client.readResponse(isHead: true)
            #expect(head.headers["Content-Length"] == "12" && head.body.isEmpty)
            try client.sendRequest("HEAD", "/hc")
            let chunkedHead = try client.readResponse(isHead: true)
            #expect(chunkedHead.headers["Transfer-Encoding"] == "chunked")
            // The connection is still in sync: no stray body bytes were sent.
            #expect(try client.get("/h").text == "twelve bytes")
        }

        @Test func contentLengthRulesForSpecialResponses() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue([
                .status(204),
                .status(304),
                MockResponse.ok("body").omitContentLength().connectionClose(),
                MockResponse.ok("xyz").header("Content-Length", "3"),
                MockResponse.ok("dated"),
            ])
            let client = try RawClient(port: server.port)
            let noContent = try client.get("/")
            #expect(noContent.status == 204 && noContent.headers["Content-Length"] == nil)
            let notModified = try client.get("/")
            #expect(notModified.status == 304 && notModified.headers["Content-Length"] == nil)
            let omitted = try client.get("/")
            #expect(omitted.headers["Content-Length"] == nil && omitted.text == "body")

            let other = try RawClient(port: server.port)
            let explicit = try other.get("/")
            #expect(explicit.headers.values(for: "Content-Length") == ["3"])
            #expect(try other.get("/").headers["Date"] == nil)

            var configuration = TestServer.Configuration()
            configuration.sendsDateHeader = true
            let dated = try TestServer(configuration: configuration)
            defer { expectClean(dated.shutdown()) }
            dated.enqueue(.ok("x"))
            let date = try #require(try RawClient(port: dated.port).get("/").headers["Date"])
            #expect(date.hasSuffix(" GMT") && date.count == 29)
        }

        @Test func closeDelimitedBodyEndsWithTheConnection() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(MockResponse.ok("until close").closeDelimited())
            let client = try RawClient(port: server.port)
            let response = try client.get("/")
            #expect(response.headers["Content-Length"] == nil && response.headers["Transfer-Encoding"] == nil)
            #expect(response.text == "until close" && response.earlyEnd == nil)
        }

        @Test(arguments: [
            ("GARBAGE\r\n\r\n", 400),
            ("GET /x HTTP/1.1\r\nBad Header: x\r\n\r\n", 400),
            ("GET /x HTTP/1.1\r\nNoColon\r\n\r\n", 400),
            ("GET /x HTTP/1.1\r\n folded: x\r\n\r\n", 400),
            ("GET /x HTTP/2.0\r\n\r\n", 505),
            ("GET /x HTTP/1.1\r\nContent-Length: 5, 6\r\n\r\n", 400),
            ("GET /x HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 400),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
            ("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n", 400),
        ])
        func malformedRequestsGetAnErrorStatusAndAreRecorded(request: String, status: Int) throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let client = try RawClient(port: server.port)
            try client.send(request)
            let response = try client.readResponse()
            #expect(response.status == status)
            #expect(client.readToEnd().end == .eof)
            let recorded = try #require(server.recordedRequests.first)
            #expect(recorded.error != nil)
            // The deferred check covers what was asserted here: a malformed request is not unexpected.
        }

        @Test func oversizedHeadGets431AndTruncatedRequestsAreRecorded() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let client = try RawClient(port: server.port)
            try client.send("GET / HTTP/1.1\r\nX-Big: " + String(repeating: "a", count: 70 * 1024) + "\r\n\r\n")
            #expect(try client.readResponse().status == 431)

            let partial = try RawClient(port: server.port)
            try partial.send("POST /cut HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc")
            partial.shutdownWrite()
            #expect(partial.readToEnd().bytes.isEmpty)
            let requests = server.recordedRequests
            #expect(requests.count == 2)
            #expect(requests.allSatisfy { $0.error != nil })
            #expect(requests.last?.path == "/cut" && requests.last?.body == Data("abc".utf8))
        }

        @Test func chunkedRequestBodyRecordsSizesExtensionsAndTrailers() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.ok("got it"))
            let client = try RawClient(port: server.port)
            try client.send(
                "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5;name=value\r\nhello\r\n"
                    + "1\r\n \r\n"
                    + "A; quoted=\"a;b\"\r\n0123456789\r\n"
                    + "0\r\nX-Checksum: abc\r\nX-Other: 1\r\n\r\n")
            #expect(try client.readResponse().text == "got it")
            let request = try server.takeRequestBlocking()
            #expect(request.body == Data("hello 0123456789".utf8))
            #expect(request.chunkSizes == [5, 1, 10])
            #expect(request.bodySize == 16)
            #expect(request.trailers["x-checksum"] == "abc" && request.trailers.count == 2)
            #expect(request.error == nil)
        }

        @Test func chunkedResponseBodyIsFramedInChunksOfTheScriptedSize() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let payload = Data((0..<2500).map { UInt8($0 % 251) })
            server.enqueue(MockResponse.ok(payload).chunked(chunkSize: 1000))
            server.enqueue(MockResponse(status: 200, body: .pattern(count: 200_000, seed: 3)).chunked(chunkSize: 100_000))
            server.enqueue(MockResponse.ok("").chunked(chunkSize: 10))
            let client = try RawClient(port: server.port)
            let response = try client.get("/")
            #expect(response.headers["Transfer-Encoding"] == "chunked" && response.headers["Content-Length"] == nil)
            #expect(response.chunkSizes == [1000, 1000, 500])
            #expect(Data(response.body) == payload)
            let large = try client.get("/")
            #expect(large.chunkSizes == [100_000, 100_000])
            #expect(matchesPattern(large.body, offset: 0, seed: 3))
            let empty = try client.get("/")
            #expect(empty.chunkSizes == [] && empty.body.isEmpty)
            #expect(server.bytesSent() == 2500 + 200_000)
        }

        @Test func expectContinueIsAnsweredBeforeTheBodyUnlessScriptedNot() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue([.ok("accepted"), MockResponse.ok("no interim").continueResponse(false)])
            let client = try RawClient(port: server.port)
            try client.send("PUT /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            let interim = try client.readHead()
            #expect(interim.status == 100 && interim.reason == "Continue")
            try client.send("data")
            let final = try client.readResponse()
            #expect(final.text == "accepted")

            try client.send("PUT /up HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
            // Nothing arrives while the server waits for the body the client has not sent (a short
            // wait for that only: a slow machine can make bytes late, not make them appear).
            client.setReceiveTimeout(.milliseconds(300))
            #expect(client.readSome() == .failure(.timeout))
            try client.send("late")
            client.setReceiveTimeout(.seconds(60))
            #expect(try client.readResponse().text == "no interim")
            #expect(server.recordedRequests.map(\.bodyText) == ["data", "late"])
        }

        @Test func arbitraryBytesNeverCrashTheServer() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.dispatcher = { _ in .ok("fine") }
            let prefixes = ["", "GET ", "GET / HTTP/1.1\r\n", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"]
            for seed in 0..<200 {
                let client = try RawClient(port: server.port)
                var input = bytes(prefixes[seed % prefixes.count])
                input += PatternBody.data(offset: 0, count: 1 + seed * 13 % 300, seed: UInt64(seed))
                input += bytes("\r\n\r\n")
                try client.send(input)
                client.shutdownWrite()
                let (_, end) = client.readToEnd()
                #expect(end == .eof || end == .reset)
            }
            // Still serving afterwards.
            #expect(try RawClient(port: server.port).get("/").text == "fine")
            #expect(server.recordedRequests.dropLast().allSatisfy { $0.error != nil || $0.method != "" })
        }

        @Test func routeMethodsMatchExactly() throws {
            let server = try TestServer()
            // The lowercase `propfind` matches no route on purpose and gets the fail-fast 599.
            defer { expectClean(server.shutdown(), unexpectedRequests: 1) }
            server.route("/dav", method: "PROPFIND") { _ in .status(207) }
            server.route("/dav", method: .get) { _ in .ok("get") }
            let client = try RawClient(port: server.port)
            try client.sendRequest("PROPFIND", "/dav")
            #expect(try client.readResponse().status == 207)
            #expect(try client.get("/dav").text == "get")
            try client.sendRequest("propfind", "/dav")
            #expect(try client.readResponse().status == 599)
            #expect(RouteMethod.any.matches("ANYTHING") && !RouteMethod.post.matches("GET"))
        }
    }
}
