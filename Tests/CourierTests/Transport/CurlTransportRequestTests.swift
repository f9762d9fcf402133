@_spi(Transport) @testable import Courier
import CourierTestServer
import Foundation
import Testing
import CourierTestSupport

/// CurlTransport against the in-process test server: methods, bodies, headers, connections, codings.
@Suite("Curl transport requests")
struct CurlTransportRequestTests {
    @Test("GET delivers head, body and metrics")
    func get() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("hello courier").header("X-Test", "1"))

        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/hello")), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        let head = try #require(result.head)
        #expect(head.statusCode == 200)
        #expect(head.httpVersion == "HTTP/1.1")
        #expect(head.headers["X-Test"] == "1")
        #expect(head.url == server.url("/hello"))
        #expect(String(decoding: result.body, as: UTF8.self) == "hello courier")
        let metrics = try #require(result.metrics)
        #expect(metrics.transport == "curl")
        #expect(metrics.bytesReceived == 13)
        #expect(metrics.httpVersion == "HTTP/1.1")
        #expect(metrics.remoteAddress == "127.0.0.1:\(server.port)")
        #expect(metrics.connectionReused == false)
        #expect(metrics.total > .zero)
        let request = try await server.takeRequest()
        #expect(request.method == "GET")
        #expect(request.path == "/hello")
    }

    @Test("HEAD receives the head and no body")
    func head() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.ok("not sent"))

        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/h"), method: .head), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.head?.statusCode == 200)
        #expect(result.head?.expectedContentLength == 8)
        #expect(result.body.isEmpty)
        #expect(try await server.takeRequest().method == "HEAD")
    }

    @Test("POST and PUT send data bodies byte-exact with Content-Length and no Expect")
    func dataBodies() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        for method in [HTTPMethod.post, .put, "REPORT"] {
            let body = PatternBody.data(offset: 0, count: 2_500_000, seed: 3)
            server.enqueue(MockResponse.status(201))
            let result = try await CurlTestSupport.run(
                TransportRequest(
                    url: server.url("/upload"), method: method, headers: ["Content-Type": "application/x-test"],
                    body: .data(body)), on: transport)
            CurlTestSupport.expectContract(result)
            #expect(result.error == nil)
            #expect(result.head?.statusCode == 201)
            let progress = result.uploadProgress
            #expect(progress.last?.sent == Int64(body.count) && progress.last?.total == Int64(body.count))
            #expect(progress.count <= 110)
            let request = try await server.takeRequest()
            #expect(request.method == method.rawValue)
            #expect(request.body == body)
            #expect(request.headers["Content-Length"] == String(body.count))
            #expect(request.headers["Content-Type"] == "application/x-test")
            #expect(!request.headers.contains("Expect"))
            #expect(!request.headers.contains("Transfer-Encoding"))
        }
    }

    @Test("a file body is streamed byte-exact and its progress ends at the total")
    func fileBody() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let contents = PatternBody.data(offset: 0, count: 3_000_001, seed: 11)
        let file = try CurlTestSupport.temporaryFile(contents)
        defer { try? FileManager.default.removeItem(at: file) }
        server.enqueue(MockResponse.status(204))

        let result = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/file"), method: .put, body: .file(file, length: Int64(contents.count))), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.head?.statusCode == 204)
        #expect(result.uploadProgress.last?.sent == Int64(contents.count))
        #expect(result.metrics?.bytesSent == Int64(contents.count))
        let request = try await server.takeRequest()
        #expect(request.method == "PUT")
        #expect(request.bodySize == Int64(contents.count))
        #expect(request.body == contents)
    }

    @Test("a missing or short body file fails with .fileSystem")
    func fileBodyErrors() async throws {
        let server = try TestServer()
        // The short file is refused when it is opened (its size is not the announced length), so
        // nothing reaches the server and the scripted response stays queued.
        defer { expectClean(server.shutdown(), unconsumedResponses: 1) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let missing = URL(fileURLWithPath: "/nonexistent/courier-\(UUID().uuidString)")
        let absent = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/f"), method: .post, body: .file(missing, length: 10)), on: transport)
        CurlTestSupport.expectContract(absent)
        #expect(absent.error?.kind == .fileSystem)
        #expect(absent.error?.message.contains(missing.path) == true)

        let short = try CurlTestSupport.temporaryFile(Data(repeating: 7, count: 100))
        defer { try? FileManager.default.removeItem(at: short) }
        server.enqueue(MockResponse.status(200).continueResponse(false))
        let truncated = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/f"), method: .post, body: .file(short, length: 1000)), on: transport)
        CurlTestSupport.expectContract(truncated)
        #expect(truncated.error?.kind == .fileSystem)
        #expect(truncated.error?.message.contains("changed size (100 bytes where 1000 were announced)") == true)
        #expect(server.requestCount == 0)
    }

    @Test("methods without a body: DELETE sends no length, an empty POST sends Content-Length 0")
    func bodilessMethods() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue([MockResponse.status(204), MockResponse.status(200)])
        _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/d"), method: .delete), on: transport)
        let delete = try await server.takeRequest()
        #expect(delete.method == "DELETE")
        #expect(!delete.headers.contains("Content-Length"))
        _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/p"), method: .post), on: transport)
        let post = try await server.takeRequest()
        #expect(post.method == "POST")
        #expect(post.headers["Content-Length"] == "0")
        #expect(post.body.isEmpty)
    }

    @Test("headers go out exactly as given, in order; the caller's Accept replaces curl's")
    func headersInOrder() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.status(200))
        let headers: HTTPHeaders = [
            "X-First": "1", "Accept": "application/json", "X-Empty": "", "X-Second": "two words", "User-Agent": "courier-test",
        ]
        _ = try await CurlTestSupport.run(TransportRequest(url: server.url("/h"), headers: headers, automaticDecompression: false), on: transport)
        let request = try await server.takeRequest()
        let sent = request.headers.filter { name, _ in headers.contains(name) }
        #expect(sent.map(\.name) == headers.map(\.name))
        #expect(sent.map(\.value) == headers.map(\.value))
        #expect(request.headers.values(for: "Accept") == ["application/json"])
        #expect(!request.headers.contains("Accept-Encoding"))
    }

    @Test("Expect: 100-continue is sent only when the caller asks, and the body still arrives")
    func expectContinue() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let body = Data(repeating: 0x42, count: 100_000)
        server.enqueue(MockResponse.status(200))
        let result = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/e"), method: .post, headers: ["Expect": "100-continue"], body: .data(body)), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.head?.statusCode == 200)
        let request = try await server.takeRequest()
        #expect(request.headers["Expect"] == "100-continue")
        #expect(request.body == body)
    }

    @Test("sequential requests reuse one connection")
    func keepAlive() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        // Reuse is asserted only while every gap between two requests was provably short (IdleWindow).
        var window = IdleWindow()
        var gapsWereShort = true
        for index in 0..<5 {
            server.enqueue(MockResponse.ok("response \(index)"))
            let next = IdleWindow()
            let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/k\(index)")), on: transport)
            if index > 0, !window.provesReuse("keepAlive") { gapsWereShort = false }
            window = next
            #expect(result.error == nil)
            if gapsWereShort { #expect(result.metrics?.connectionReused == (index > 0)) }
        }
        for index in 0..<5 {
            let request = try await server.takeRequest()
            if gapsWereShort {
                #expect(request.connectionIndex == 0)
                #expect(request.exchangeIndex == index)
            }
        }
        if gapsWereShort { #expect(server.connectionCount == 1) }
    }

    @Test("maximumConnectionsPerHost caps concurrent connections")
    func connectionLimit() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport(maximumConnectionsPerHost: 2)
        defer { transport.shutdown() }
        let gate = Gate()
        server.enqueue(Array(repeating: MockResponse.ok("held").waiting(for: gate), count: 6))
        let sinks = (0..<6).map { CurlTestSupport.start(TransportRequest(url: server.url("/held/\($0)")), on: transport).0 }
        #expect(await gate.waitUntilWaiting(count: 2))
        #expect(server.connectionCount == 2)
        gate.open()
        for sink in sinks {
            let result = try await sink.completion()
            CurlTestSupport.expectContract(result)
            #expect(result.error == nil)
            #expect(String(decoding: result.body, as: UTF8.self) == "held")
        }
        #expect(server.connectionCount == 2)
        #expect(server.requestCount == 6)
    }

    /// Concurrent transfers to one origin spread over several event loops, each with a share of the
    /// limit: together they still use every allowed connection at once, and never more.
    @Test("transfers to one origin overlap up to the limit, whichever loops carry them", arguments: [2, 3, 5])
    func overlappingTransfersUseEveryAllowedConnection(limit: Int) async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport(maximumConnectionsPerHost: limit)
        defer { transport.shutdown() }
        let gate = Gate()
        let count = limit + 2
        server.enqueue(Array(repeating: MockResponse.ok("held").waiting(for: gate), count: count))
        let sinks = (0..<count).map { CurlTestSupport.start(TransportRequest(url: server.url("/held/\($0)")), on: transport).0 }
        #expect(await gate.waitUntilWaiting(count: limit))
        #expect(server.connectionCount == limit)
        gate.open()
        for sink in sinks {
            let result = try await sink.completion()
            #expect(result.error == nil)
            #expect(String(decoding: result.body, as: UTF8.self) == "held")
        }
        #expect(server.connectionCount == limit)
        #expect(server.requestCount == count)
    }

    @Test("chunked responses are reassembled byte-exact")
    func chunked() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue(MockResponse.status(200).body(.pattern(count: 1_000_003, seed: 5)).chunked(chunkSize: 7_000))
        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/c")), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.head?.headers["Transfer-Encoding"] == "chunked")
        #expect(result.head?.expectedContentLength == -1)
        #expect(result.body == PatternBody.data(offset: 0, count: 1_000_003, seed: 5))
    }

    @Test("gzip bodies are decoded, and the caller's Accept-Encoding is sent as given")
    func gzip() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let original = PatternBody.data(offset: 0, count: 300_000, seed: 9)
        server.enqueue([MockResponse.ok(original).gzip(), MockResponse.ok(original).deflate()])

        let decoded = try await CurlTestSupport.run(TransportRequest(url: server.url("/gz")), on: transport)
        CurlTestSupport.expectContract(decoded)
        #expect(decoded.error == nil)
        #expect(decoded.head?.headers["Content-Encoding"] == "gzip")
        #expect(decoded.body == original)
        let first = try await server.takeRequest()
        let advertised = first.headers.values(for: "Accept-Encoding")
        #expect(advertised.count == 1)
        #expect(advertised.first?.contains("gzip") == true)

        let custom = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/deflate"), headers: ["Accept-Encoding": "deflate"]), on: transport)
        #expect(custom.error == nil)
        #expect(custom.body == original)
        #expect(try await server.takeRequest().headers.values(for: "Accept-Encoding") == ["deflate"])
    }

    @Test("with decompression off nothing is advertised and encoded bytes arrive as sent")
    func decompressionOff() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let original = Data("courier ".utf8.flatMap { Array(repeating: $0, count: 50) })
        server.enqueue(MockResponse.ok(original).gzip())
        let result = try await CurlTestSupport.run(TransportRequest(url: server.url("/raw"), automaticDecompression: false), on: transport)
        CurlTestSupport.expectContract(result)
        #expect(result.error == nil)
        #expect(result.body.prefix(2) == Data([0x1F, 0x8B]))
        #expect(result.head?.headers["Content-Length"] == String(result.body.count))
        #expect(try await server.takeRequest().headers.contains("Accept-Encoding") == false)
    }

    @Test("non-2xx statuses, redirects included, are delivered as responses, not errors or followed")
    func statuses() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        server.enqueue([MockResponse.status(404).body(.text("missing")), MockResponse.redirect(to: "/elsewhere", status: 302)])
        let missing = try await CurlTestSupport.run(TransportRequest(url: server.url("/404")), on: transport)
        #expect(missing.error == nil)
        #expect(missing.head?.statusCode == 404)
        #expect(String(decoding: missing.body, as: UTF8.self) == "missing")
        let redirect = try await CurlTestSupport.run(TransportRequest(url: server.url("/302")), on: transport)
        #expect(redirect.error == nil)
        #expect(redirect.head?.statusCode == 302)
        #expect(redirect.head?.headers["Location"] == "/elsewhere")
        #expect(server.requestCount == 2)
    }

    @Test("proxy settings follow libcurl's environment rules")
    func proxyEnvironmentRules() {
        let empty = CurlProxyEnvironment(environment: [:])
        #expect(empty.proxy(for: "http://a/") == "" && empty.proxy(for: "https://a/") == "" && empty.noProxy == nil)
        // Scheme-specific first; HTTP_PROXY in capitals is ignored as libcurl does; all_proxy fills in.
        let specific = CurlProxyEnvironment(environment: [
            "http_proxy": "h:1", "HTTP_PROXY": "ignored:2", "HTTPS_PROXY": "s:3",
            "ALL_PROXY": "all:4", "NO_PROXY": "internal",
        ])
        #expect(specific.proxy(for: "http://a/") == "h:1")
        #expect(specific.proxy(for: "HTTPS://a/") == "s:3")
        #expect(specific.noProxy == "internal")
        let fallback = CurlProxyEnvironment(environment: [
            "HTTP_PROXY": "ignored:2", "all_proxy": "all:5", "ALL_PROXY": "all:4",
            "no_proxy": "lower", "NO_PROXY": "upper",
        ])
        #expect(fallback.proxy(for: "http://a/") == "all:5" && fallback.proxy(for: "https://a/") == "all:5")
        #expect(fallback.noProxy == "lower")
        // An empty value means "no proxy" and does not fall back.
        #expect(CurlProxyEnvironment(environment: ["http_proxy": "", "all_proxy": "all:5"]).proxy(for: "http://a/") == "")
    }

    @Test("requests go through the proxy the environment names, except to no_proxy hosts")
    func proxiedRequests() async throws {
        let proxy = try TestServer()
        defer { expectClean(proxy.shutdown()) }
        let origin = try TestServer()
        defer { expectClean(origin.shutdown()) }
        let transport = try CurlTestSupport.transport(
            proxies: CurlProxyEnvironment(
                environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)", "no_proxy": "localhost"]))
        defer { transport.shutdown() }

        proxy.enqueue(MockResponse.ok("via proxy"))
        let target = URL(string: "http://courier-proxy-test.invalid/thing?x=1")!
        let proxied = try await CurlTestSupport.run(TransportRequest(url: target), on: transport)
        #expect(proxied.error == nil)
        #expect(String(decoding: proxied.body, as: UTF8.self) == "via proxy")
        let seen = try await proxy.takeRequest()
        #expect(seen.target == "http://courier-proxy-test.invalid/thing?x=1")
        #expect(seen.headers["Host"] == "courier-proxy-test.invalid")

        origin.enqueue(MockResponse.ok("direct"))
        let direct = try await CurlTestSupport.run(TransportRequest(url: URL(string: "http://localhost:\(origin.port)/d")!), on: transport)
        #expect(direct.error == nil)
        #expect(String(decoding: direct.body, as: UTF8.self) == "direct")
        #expect(try await origin.takeRequest().target == "/d")
        #expect(proxy.recordedRequests.count == 1)
    }
}
