import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

extension CourierTestServerTests {
    @Suite struct ResourceRanges {
        static let modified = Date(timeIntervalSince1970: 1_700_000_000)
        static let modifiedText = "Tue, 14 Nov 2023 22:13:20 GMT"
        static let content = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 7) })

        /// A server with a 1000-byte resource at `/file`, tagged `"v1"`.
        static func makeServer() throws -> TestServer {
            let server = try TestServer()
            server.route("/file", Resource(data: content, etag: "\"v1\"", lastModified: modified, contentType: "application/x-test"))
            return server
        }

        static func get(_ server: TestServer, _ headers: [String]) throws -> RawClient.Response {
            try RawClient(port: server.port).get("/file", headers: headers)
        }

        @Test func fullGetCarriesValidators() throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let response = try Self.get(server, [])
            #expect(response.status == 200)
            #expect(Data(response.body) == Self.content)
            #expect(response.headers["Accept-Ranges"] == "bytes")
            #expect(response.headers["ETag"] == "\"v1\"")
            #expect(response.headers["Last-Modified"] == Self.modifiedText)
            #expect(response.headers["Content-Type"] == "application/x-test")
            #expect(response.headers["Content-Length"] == "1000")
        }

        @Test(arguments: [
            ("bytes=0-99", 0, 99),
            ("bytes=990-", 990, 999),
            ("bytes=-10", 990, 999),
            ("bytes=500-5000", 500, 999),
            ("bytes=-5000", 0, 999),
            ("bytes=999-999", 999, 999),
            ("BYTES = 10-19", 10, 19),
        ])
        func satisfiableRangeGets206(range: String, first: Int, last: Int) throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let response = try Self.get(server, ["Range: \(range)"])
            #expect(response.status == 206)
            #expect(response.headers["Content-Range"] == "bytes \(first)-\(last)/1000")
            #expect(response.headers["Content-Length"] == "\(last - first + 1)")
            #expect(Data(response.body) == Self.content[first...last])
            #expect(response.headers["ETag"] == "\"v1\"" && response.headers["Accept-Ranges"] == "bytes")
            #expect(response.headers["Last-Modified"] == Self.modifiedText)
        }

        @Test(arguments: ["bytes=1000-", "bytes=1000-2000", "bytes=-0", "bytes=5000-5001, 2000-"])
        func unsatisfiableRangeGets416(range: String) throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let response = try Self.get(server, ["Range: \(range)"])
            #expect(response.status == 416)
            #expect(response.headers["Content-Range"] == "bytes */1000")
            #expect(response.body.isEmpty)
            #expect(response.headers["ETag"] == "\"v1\"")
        }

        @Test(arguments: ["bytes=0-9,20-29", "bytes=5-4", "bytes=abc", "items=0-9", "bytes=", "bytes=1-2-3"])
        func multipleOrInvalidRangesGet200WithTheFullBody(range: String) throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let response = try Self.get(server, ["Range: \(range)"])
            #expect(response.status == 200)
            #expect(Data(response.body) == Self.content)
            #expect(response.headers["Content-Range"] == nil)
        }

        @Test func ifRangeWithMatchingOrStaleValidators() throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let cases: [(String, Int)] = [
                ("\"v1\"", 206),
                ("\"v0\"", 200),
                ("W/\"v1\"", 200),
                (Self.modifiedText, 206),
                ("Tue, 14 Nov 2023 22:13:21 GMT", 200),
                ("Tuesday, 14-Nov-23 22:13:20 GMT", 206),
                ("Tue Nov 14 22:13:20 2023", 206),
                ("not a date", 200),
            ]
            for (ifRange, status) in cases {
                let response = try Self.get(server, ["Range: bytes=100-199", "If-Range: \(ifRange)"])
                #expect(response.status == status, "If-Range: \(ifRange)")
                #expect(response.body.count == (status == 206 ? 100 : 1000), "If-Range: \(ifRange)")
            }
        }

        @Test func weakEtagNeverMatchesIfRange() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.route("/weak", Resource(data: Self.content, etag: "W/\"w\""))
            let response = try RawClient(port: server.port).get("/weak", headers: ["Range: bytes=0-0", "If-Range: W/\"w\""])
            #expect(response.status == 200)
            let conditional = try RawClient(port: server.port).get("/weak", headers: ["If-None-Match: \"w\""])
            #expect(conditional.status == 304)
        }

        @Test func conditionalRequestsGet304WithoutBody() throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let cases: [([String], Int)] = [
                (["If-None-Match: \"v1\""], 304),
                (["If-None-Match: \"a\", W/\"v1\""], 304),
                (["If-None-Match: *"], 304),
                (["If-None-Match: \"v2\""], 200),
                (["If-Modified-Since: \(Self.modifiedText)"], 304),
                (["If-Modified-Since: Tue, 14 Nov 2023 22:13:19 GMT"], 200),
                (["If-None-Match: \"v2\"", "If-Modified-Since: \(Self.modifiedText)"], 200),
                (["If-None-Match: \"v1\"", "Range: bytes=0-1"], 304),
            ]
            for (headers, status) in cases {
                let response = try Self.get(server, headers)
                #expect(response.status == status, "\(headers)")
                if status == 304 {
                    #expect(response.body.isEmpty && response.headers["ETag"] == "\"v1\"", "\(headers)")
                    #expect(response.headers["Content-Length"] == nil)
                }
            }
        }

        @Test func headAndOtherMethods() throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            let client = try RawClient(port: server.port)
            try client.sendRequest("HEAD", "/file", headers: ["Range: bytes=0-9"])
            let head = try client.readResponse(isHead: true)
            #expect(head.status == 200 && head.headers["Content-Length"] == "1000" && head.body.isEmpty)
            try client.sendRequest("POST", "/file", body: "x")
            let post = try client.readResponse()
            #expect(post.status == 405 && post.headers["Allow"] == "GET, HEAD")
            #expect(try client.get("/file", headers: ["Range: bytes=0-9"]).body.count == 10)
        }

        @Test func ignoresRangeAlwaysSendsTheFullBody() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.route("/plain", Resource(data: Self.content, etag: "\"v1\"", ignoresRange: true))
            let response = try RawClient(port: server.port).get("/plain", headers: ["Range: bytes=0-9"])
            #expect(response.status == 200 && response.body.count == 1000)
            #expect(response.headers["Accept-Ranges"] == nil && response.headers["ETag"] == "\"v1\"")
        }

        @Test func replacingTheResourceInvalidatesTheOldValidators() throws {
            let server = try Self.makeServer()
            defer { expectClean(server.shutdown()) }
            #expect(try Self.get(server, ["Range: bytes=0-9", "If-Range: \"v1\""]).status == 206)
            server.replace(Resource(data: Data("changed".utf8), etag: "\"v2\""), at: "/file")
            let stale = try Self.get(server, ["Range: bytes=0-9", "If-Range: \"v1\""])
            #expect(stale.status == 200 && stale.text == "changed" && stale.headers["ETag"] == "\"v2\"")
            #expect(server.requestCount(path: "/file") == 2)
        }

        @Test func patternResourceServesAnyRangeOfAGibibyteWithoutMaterialisingIt() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let size: Int64 = 1 << 30
            server.route("/big", Resource(pattern: size, seed: 42, etag: "\"big\""))
            let client = try RawClient(port: server.port)
            let tail = try client.get("/big", headers: ["Range: bytes=-100000"])
            #expect(tail.status == 206)
            #expect(tail.headers["Content-Range"] == "bytes \(size - 100_000)-\(size - 1)/\(size)")
            #expect(matchesPattern(tail.body, offset: size - 100_000, seed: 42))
            let middle = try client.get("/big", headers: ["Range: bytes=123456789-123456888"])
            #expect(matchesPattern(middle.body, offset: 123_456_789, seed: 42) && middle.body.count == 100)
            try client.sendRequest("HEAD", "/big")
            #expect(try client.readResponse(isHead: true).headers["Content-Length"] == "\(size)")
            #expect(server.bytesSent(path: "/big") == 100_100)
        }

        @Test func resourceModifiersApplyPerResponse() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let resource = Resource(pattern: 10_000, seed: 9, etag: "\"p\"")
                .header("X-Served-By", "resource")
                .effect(.reset, at: .responseBody(afterBytes: 3000), forFirst: 1)
                .modifying { request, response in
                    response.header("X-Range-Asked", request.headers["Range"] ?? "none")
                }
            server.route("/dl", resource)

            let first = try RawClient(port: server.port)
            try first.sendRequest("GET", "/dl")
            let head = try first.readHead()
            #expect(head.headers["X-Served-By"] == "resource" && head.headers["X-Range-Asked"] == "none")
            let (count, end) = first.countToEnd()
            #expect(count == 3000 && end == .reset)

            let resumed = try RawClient(port: server.port).get("/dl", headers: ["Range: bytes=3000-", "If-Range: \"p\""])
            #expect(resumed.status == 206 && resumed.body.count == 7000)
            #expect(matchesPattern(resumed.body, offset: 3000, seed: 9))
            #expect(resumed.headers["X-Range-Asked"] == "bytes=3000-")
            #expect(server.bytesSent(path: "/dl") == 10_000)
        }
    }
}
