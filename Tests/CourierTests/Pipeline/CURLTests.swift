import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

extension Pipeline {
    /// `cURLDescription()`: the command re-run with the real curl sends what Courier sent.
    @Suite("Pipeline: cURL") struct CURLTests {
        static let curlAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")

        /// Headers curl and the transports each manage themselves.
        private static let transportOwned: Set<String> = ["host", "connection", "content-length", "expect", "te", "keep-alive"]

        /// Sends `request` with Courier, then runs its cURL description; returns both recorded requests.
        private func replay(_ request: some DataResponseRequest, on server: TestServer) async throws -> (
            courier: RecordedRequest, curl: RecordedRequest, command: String
        ) {
            server.enqueue([.ok("first"), .ok("second")])
            _ = try await request.serializingData().value
            let courier = try await server.takeRequest()
            let command = await request.cURLDescription(redacting: .none)
            let status = try await runShell(command)
            #expect(status == 0, "curl failed: \(command)")
            let curl = try await server.takeRequest()
            return (courier, curl, command)
        }

        private func expectSame(_ pair: (courier: RecordedRequest, curl: RecordedRequest, command: String)) {
            let (courier, curl, command) = pair
            #expect(curl.method == courier.method, "\(command)")
            #expect(curl.target == courier.target, "\(command)")
            #expect(curl.body == courier.body, "command:\n\(command)")
            // Under a C locale Courier sends no Accept-Language, and FoundationNetworking (URLSession on
            // Linux) adds its own, which is then the transport's, like Host.
            let transportOwned = Self.transportOwned.union(HTTPHeader.defaultAcceptLanguage == nil ? ["accept-language"] : [])
            for (name, value) in courier.headers where !transportOwned.contains(name.lowercased()) {
                #expect(curl.headers[name] == value, "\(name) differs; command:\n\(command)")
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func getWithQuery(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server, headers: ["X-Client": "tests"])
                let request = session.request("search", parameters: ["q": "swift & curl", "page": "2"], headers: ["Accept": "application/json"])
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.courier.query["q"] == "swift & curl")
                #expect(!pair.command.contains("-X"))
                #expect(pair.command.contains("--compressed"))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func postJSON(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let request = session.request(
                    "orders", method: .post, parameters: ["item": "42", "note": "it's \"quoted\"\nand multi-line"],
                    encoder: .json, headers: [.authorization(bearerToken: "abc")])
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.curl.headers["Content-Type"] == "application/json")
                #expect(pair.command.hasPrefix("curl -X POST '"))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func putForm(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let request = session.request("profile", method: .put, parameters: ["name": "Zoë", "tags": "a+b c"])
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.curl.method == "PUT")
                #expect(pair.curl.headers["Content-Type"]?.hasPrefix("application/x-www-form-urlencoded") == true)
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func headerWithASingleQuoteAndAnEmptyHeader(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let request = session.request("quote", headers: ["X-Quote": "it's O'Brien's", "X-Empty": ""])
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.curl.headers["X-Quote"] == "it's O'Brien's")
                #expect(pair.command.contains(#"-H 'X-Quote: it'\''s O'\''Brien'\''s'"#))
                #expect(pair.curl.headers.contains("X-Empty"))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func binaryBodyAndCookiesFromTheStorage(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let cookie = try #require(HTTPCookie(properties: [.name: "session", .value: "s3cr3t", .domain: "127.0.0.1", .path: "/"]))
                session.configuration.cookies.storage?.setCookie(cookie)
                let bytes = Data([0, 1, 2, 0x27, 0x5C, 0x25, 0xFF, 0x0A, 0x40])
                let request = session.upload(bytes, to: "blob", method: .patch)
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.curl.body == bytes)
                #expect(pair.curl.headers["Cookie"] == "session=s3cr3t")
                #expect(pair.command.hasPrefix(#"printf '%b' '\0000\0001\0002\0047\0134\0045\0377\0012@' | curl -X PATCH '"#))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func fileUploadReadsThePath(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier curl '\(UUID().uuidString)'.txt")
                try Data("from a file\n".utf8).write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                let session = makeSession(transport, server: server)
                let pair = try await replay(session.upload(fileURL: file, to: "files"), on: server)
                expectSame(pair)
                #expect(pair.curl.bodyText == "from a file\n")
                #expect(pair.command.contains("--data-binary '@"))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func multipartFormIsInlined(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let request = session.upload(
                    multipartFormData: { form in
                        form.append("value", withName: "field")
                        form.append(Data([0, 1, 2, 0xFE]), withName: "blob", fileName: "b.bin", mimeType: "application/octet-stream")
                    }, to: "form")
                let pair = try await replay(request, on: server)
                expectSame(pair)
                #expect(pair.curl.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
                #expect(pair.command.hasPrefix("printf '%b' '--"))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func headUsesTheHeadOption(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server)
                let pair = try await replay(session.request("resource", method: .head), on: server)
                expectSame(pair)
                #expect(pair.command.hasPrefix("curl --head "))
            }
        }

        @Test(.enabled(if: curlAvailable), arguments: TransportUnderTest.available)
        func adaptedHeadersAreIncluded(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let session = makeSession(transport, server: server, interceptor: Interceptor(adapters: [ChainAdapter(label: "signed")]))
                let pair = try await replay(session.request("adapted"), on: server)
                expectSame(pair)
                #expect(pair.curl.headers["X-Chain"] == "signed")
            }
        }

        @Test func beforeSendingItDescribesTheBuiltRequest() async throws {
            let session = Session(baseURL: URL(string: "http://127.0.0.1:9/api/"))
            let request = session.request("items", parameters: ["a": "1"])
            let description = await request.cURLDescription()
            #expect(description.hasPrefix("# Not sent (yet)"))
            #expect(description.contains("'http://127.0.0.1:9/api/items?a=1'"))
        }

        @Test func anInvalidRequestGivesAComment() async throws {
            let session = Session()
            let description = await session.request("no base URL").cURLDescription()
            #expect(description.hasPrefix("# The request could not be built"))
            #expect(!description.contains("\n"))
        }

        @Test func shellQuoting() {
            #expect(Shell.quote("plain") == "'plain'")
            #expect(Shell.quote("it's") == #"'it'\''s'"#)
            #expect(Shell.quote("$HOME `x` \\ \"") == #"'$HOME `x` \ "'"#)
            #expect(Shell.word("POST") == "POST")
            #expect(Shell.word("/tmp/a-b_c.txt") == "/tmp/a-b_c.txt")
            #expect(Shell.word("a b") == "'a b'")
            #expect(Shell.word("") == "''")
            #expect(Shell.word("é") == "'é'")
            #expect(Shell.printfArgument(for: Data("a%b\\c'd\u{7F}".utf8)) == #"'a\0045b\0134c\0047d\0177'"#)
        }
    }

    /// HTTP caching: Courier's transports never store responses.
    @Suite("Pipeline: Caching") struct CachingTests {
        @Test(arguments: TransportUnderTest.available)
        func cacheableResponsesAreFetchedAgain(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.route("/cacheable") { _ in
                    MockResponse.ok("fresh").header("Cache-Control", "public, max-age=300").header("ETag", "\"v1\"")
                }
                let session = makeSession(transport, server: server)
                for _ in 0..<2 {
                    #expect(try await session.request("cacheable").serializingString().value == "fresh")
                }
                #expect(server.requestCount(path: "/cacheable") == 2)
                let second = server.recordedRequests.last
                #expect(second?.headers["If-None-Match"] == nil)
            }
        }
    }
}
