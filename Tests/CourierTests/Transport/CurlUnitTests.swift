@_spi(Transport) @testable import Courier
import CCurl
import Foundation
import Testing

/// The curl transport's pure parts: response parsing, request planning, metrics, error mapping.
@Suite("Curl transport pieces")
struct CurlUnitTests {
    private let url = URL(string: "http://example.test/x")!

    private func parse(_ lines: [String]) -> (heads: [ResponseHead], parser: CurlResponseParser) {
        var parser = CurlResponseParser()
        var heads: [ResponseHead] = []
        for line in lines {
            var bytes = Array(line.utf8)
            if let head = bytes.withUnsafeMutableBytes({ parser.consume(UnsafeRawBufferPointer($0), url: url) }) {
                heads.append(head)
            }
            bytes.removeAll()
        }
        return (heads, parser)
    }

    @Test(
        "the per-host limit is shared out between event loops, never exceeded, at least one each",
        arguments: [(1, 2, 1), (2, 2, 2), (3, 2, 2), (8, 2, 2), (8, 1, 1), (8, 16, 4), (3, 16, 3), (0, 4, 1)])
    func loopPlan(limit: Int, processors: Int, expectedLoops: Int) {
        let plan = CurlLoopPlan(maximumConnectionsPerHost: limit, processors: processors)
        #expect(plan.loopCount == expectedLoops)
        let shares = (0..<plan.loopCount).map(plan.connectionsPerHost(forLoop:))
        // The overflow loop's HTTP/2 connection is taken from the limit: a home loop's share plus
        // it stays within the limit, so there is none with a single loop.
        #expect(plan.allowsOverflow == (plan.loopCount >= 2))
        if plan.allowsOverflow { #expect((shares.max() ?? limit) + CurlLoopPlan.overflowConnectionsPerHost <= limit) }
        #expect(shares.reduce(0, +) == max(1, limit))
        #expect(shares.allSatisfy { $0 >= 1 })
        // The first loop, which takes ties, never has the smaller share.
        #expect(shares == shares.sorted(by: >))
    }

    @Test("which requests may go to the overflow loop once their HTTP/2 origin's home has 100 in flight")
    func overflowRouting() {
        let secure = URL(string: "https://example.test/x")!
        let cleartext = URL(string: "http://example.test/x")!
        func request(_ url: URL, _ version: HTTPVersion) -> TransportRequest {
            var request = TransportRequest(url: url)
            request.httpVersion = version
            return request
        }
        let table: [(url: URL, version: HTTPVersion, overflows: Bool)] = [
            (secure, .automatic, true),
            (secure, .http2, true),
            (secure, .http2PriorKnowledge, true),
            (cleartext, .http2PriorKnowledge, CurlLibrary.reusesCleartextHTTP2),
            (secure, .http1_1, false),
            (secure, .http3, false),
        ]
        for row in table {
            #expect(CurlTransport.mayOverflow(request(row.url, row.version)) == row.overflows, "\(row.url) \(row.version)")
        }
        #expect(CurlLoopPlan.streamsBeforeOverflow == 100 && CurlLoopPlan.overflowConnectionsPerHost == 1)
    }

    @Test("parses the final head, skipping 100 Continue and ignoring trailers")
    func parsesHead() throws {
        let (heads, parser) = parse([
            "HTTP/1.1 100 Continue\r\n", "\r\n",
            "HTTP/1.1 201 Created\r\n", "Content-Type: text/plain\r\n", "Set-Cookie: a=1\r\n",
            "X-Multi: one\r\n", "set-cookie: b=2\r\n", "X-Multi:   two  \r\n", "X-Folded: first\r\n", " second\r\n",
            "x-multi: three\r\n", "\r\n",
            "X-Trailer: late\r\n", "\r\n",
        ])
        #expect(heads.count == 1)
        #expect(parser.isComplete)
        let head = try #require(heads.first)
        #expect(head.statusCode == 201)
        #expect(head.httpVersion == "HTTP/1.1")
        #expect(head.headers["Content-Type"] == "text/plain")
        #expect(head.headers["X-Multi"] == "one, two, three")
        #expect(head.headers["X-Folded"] == "first second")
        #expect(head.setCookies == ["a=1", "b=2"])
        #expect(head.headers["X-Trailer"] == nil)
        #expect(head.url == url)
    }

    @Test("the announced length: Content-Length, unless a content coding or a repeat makes it unusable")
    func announcedLength() {
        func length(_ fields: [(String, String)]) -> Int64 {
            ResponseHead(statusCode: 200, fields: fields.map { (name: $0.0, value: $0.1) }, url: url, httpVersion: "HTTP/1.1")
                .expectedContentLength
        }
        #expect(length([("Content-Length", " 10 ")]) == 10)
        #expect(length([("content-length", "10"), ("ETag", "x"), ("Date", "d")]) == 10)
        #expect(length([("Content-Length", "10"), ("Content-Encoding", "gzip")]) == -1)
        #expect(length([("CONTENT-ENCODING", " identity"), ("Content-Length", "10")]) == 10)
        #expect(length([("Content-Language", "en"), ("Content-Length", "10")]) == 10)
        #expect(length([("Content-Length", "10"), ("Content-Length", "10")]) == -1)
        #expect(length([("Content-Type", "text/plain")]) == -1)
        #expect(length([("Content-Length", "-1")]) == -1)
    }

    @Test("HTTP/2 status lines, empty values and Latin-1 bytes")
    func otherShapes() throws {
        var parser = CurlResponseParser()
        var head: ResponseHead?
        let lines: [[UInt8]] = [
            Array("HTTP/2 204\r\n".utf8), Array("x-empty:\r\n".utf8),
            Array("x-latin: caf".utf8) + [0xE9] + Array("\r\n".utf8), Array("\r\n".utf8),
        ]
        for line in lines {
            head = line.withUnsafeBytes { parser.consume($0, url: url) } ?? head
        }
        let final = try #require(head)
        #expect(final.statusCode == 204)
        #expect(final.httpVersion == "HTTP/2")
        #expect(final.headers["x-empty"] == "")
        #expect(final.headers["x-latin"] == "café")
    }

    @Test("plans methods the way libcurl needs them")
    func plansMethods() throws {
        func plan(_ method: HTTPMethod, _ body: TransportBody = .empty) throws -> CurlRequestBuilder.Plan.Method {
            try CurlRequestBuilder.plan(for: TransportRequest(url: url, method: method, body: body)).method
        }
        #expect(try plan(.get) == .get)
        #expect(try plan(.head) == .head)
        #expect(try plan(.post, .data(Data("abc".utf8))) == .upload("POST", length: 3))
        #expect(try plan(.post) == .upload("POST", length: 0))
        #expect(try plan(.put, .file(URL(fileURLWithPath: "/tmp/f"), length: 9)) == .upload("PUT", length: 9))
        #expect(try plan(.patch) == .upload("PATCH", length: 0))
        #expect(try plan(.delete) == .custom("DELETE"))
        #expect(try plan(.delete, .data(Data("x".utf8))) == .upload("DELETE", length: 1))
        #expect(try plan(.get, .data(Data("x".utf8))) == .upload("GET", length: 1))
        #expect(try plan("PURGE") == .custom("PURGE"))
    }

    @Test("header lines keep order, send empty values, and suppress Expect unless asked")
    func plansHeaders() throws {
        let headers: HTTPHeaders = ["X-B": "2", "Accept": "application/json", "X-Empty": "", "X-A": "1"]
        let get = try CurlRequestBuilder.plan(for: TransportRequest(url: url, headers: headers))
        #expect(get.headerLines == ["X-B: 2", "Accept: application/json", "X-Empty;", "X-A: 1", "Accept-Encoding: deflate, gzip, br, zstd"])
        let post = try CurlRequestBuilder.plan(for: TransportRequest(url: url, method: .post, headers: headers, body: .data(Data([1]))))
        #expect(post.headerLines.last == "Expect:")
        let expecting = try CurlRequestBuilder.plan(
            for: TransportRequest(
                url: url, method: .post, headers: ["Expect": "100-continue"],
                body: .data(Data([1]))))
        #expect(expecting.headerLines == ["Expect: 100-continue", "Accept-Encoding: deflate, gzip, br, zstd"])
    }

    @Test("decoding on advertises everything; off sends nothing extra")
    func plansDecoding() throws {
        #expect(try CurlRequestBuilder.plan(for: TransportRequest(url: url)).acceptEncoding == "deflate, gzip, br, zstd")
        #expect(try CurlRequestBuilder.plan(for: TransportRequest(url: url)).fields["Accept-Encoding"] == "deflate, gzip, br, zstd")
        #expect(try CurlRequestBuilder.plan(for: TransportRequest(url: url, headers: [.acceptEncoding("br")])).acceptEncoding == nil)
        #expect(try CurlRequestBuilder.plan(for: TransportRequest(url: url, automaticDecompression: false)).acceptEncoding == nil)
    }

    @Test("rejects header names and values libcurl would mangle")
    func rejectsBadHeaders() {
        for headers in [HTTPHeaders(["Bad Name": "x"]), ["X-Injected": "a\r\nEvil: 1"], ["": "x"]] {
            #expect(throws: CourierError.self) { try CurlRequestBuilder.plan(for: TransportRequest(url: url, headers: headers)) }
        }
    }

    @Test("metrics turn cumulative timings into phases; reused connections have none")
    func metricsPhases() {
        let timeline = CurlMetrics.Timeline(nameLookup: 100, connect: 300, appConnect: 1300, startTransfer: 2000, total: 2500)
        let fresh = CurlMetrics.phases(of: timeline, reused: false)
        #expect(fresh.dnsLookup == .microseconds(100))
        #expect(fresh.connect == .microseconds(200))
        #expect(fresh.tlsHandshake == .microseconds(1000))
        #expect(fresh.timeToFirstByte == .microseconds(2000))
        #expect(fresh.total == .microseconds(2500))
        #expect(fresh.transport == "curl")
        let plain = CurlMetrics.phases(of: CurlMetrics.Timeline(nameLookup: 10, connect: 20, startTransfer: 30, total: 40), reused: false)
        #expect(plain.tlsHandshake == nil)
        let reused = CurlMetrics.phases(of: timeline, reused: true)
        #expect(reused.dnsLookup == nil && reused.connect == nil && reused.tlsHandshake == nil)
        #expect(reused.connectionReused == true)
        #expect(CurlMetrics.httpVersion(CCURL_HTTP_VERSION_2_0) == "HTTP/2")
        #expect(CurlMetrics.httpVersion(0) == nil)
        #expect(CurlMetrics.remoteAddress(ip: "::1", port: 80) == "[::1]:80")
    }

    @Test("TLS failures are told apart by libcurl's code and OpenSSL's text (as seen against nginx and Python)")
    func tlsKinds() throws {
        _ = try CurlLibrary.load()
        let cases: [(Int32, String, CourierError.Kind)] = [
            (CCURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: certificate has expired", .serverCertificateHasBadDate),
            (CCURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: certificate is not yet valid", .serverCertificateHasBadDate),
            (
                CCURLE_PEER_FAILED_VERIFICATION, "SSL: no alternative certificate subject name matches target host name '127.0.0.1'",
                .serverCertificateHostnameMismatch
            ),
            (CCURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: self-signed certificate", .serverCertificateUntrusted),
            (CCURLE_PEER_FAILED_VERIFICATION, "SSL certificate problem: unable to get local issuer certificate", .serverCertificateUntrusted),
            (CCURLE_SSL_PINNEDPUBKEYNOTMATCH, "SSL: public key does not match pinned public key", .pinMismatch),
            (CCURLE_SSL_CONNECT_ERROR, "OpenSSL/3.0.19: error:0A00042E:SSL routines::tlsv1 alert protocol version", .tlsVersionUnsupported),
            (
                CCURLE_RECV_ERROR, "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A00045C:SSL routines::tlsv13 alert certificate required, errno 0",
                .clientCertificateRejected
            ),
            (
                CCURLE_RECV_ERROR, "OpenSSL SSL_read: OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca, errno 0",
                .clientCertificateRejected
            ),
            (CCURLE_SSL_CONNECT_ERROR, "OpenSSL/3.0.19: error:0A000418:SSL routines::tlsv1 alert unknown ca", .clientCertificateRejected),
            (CCURLE_SSL_CERTPROBLEM, "could not parse PKCS12 file, check password", .invalidConfiguration),
            (CCURLE_SSL_CONNECT_ERROR, "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure", .secureConnectionFailed),
            (CCURLE_RECV_ERROR, "Connection reset by peer", .connectionLost),
        ]
        for (code, detail, kind) in cases {
            let error = CourierError(curl: code, detail: detail, url: url)
            #expect(error.kind == kind, "\(code) \(detail)")
            #expect(error.message.contains(detail))
            if kind != .connectionLost, kind != .invalidConfiguration { #expect(error.isSecureConnectionFailure) }
        }
    }

    @Test("a proxy's refusal to open a tunnel cannot connect, with the proxy's status")
    func refusedTunnel() {
        let url = URL(string: "wss://example.com/live")!
        let refused = CourierError(curl: CCURLE_RECV_ERROR, detail: "CONNECT tunnel failed, response 403", url: url)
        #expect(refused.kind == .cannotConnect)
        #expect(refused.message == "The proxy refused to open a tunnel to example.com (it answered CONNECT with 403).")
        #expect(CourierError(curl: CCURLE_RECV_ERROR, detail: "CONNECT tunnel failed", url: url).kind == .connectionLost)
        #expect(CourierError(curl: CCURLE_RECV_ERROR, detail: "Connection reset by peer", url: url).kind == .connectionLost)
    }

    @Test("curl result codes map to Courier kinds")
    func errorKinds() throws {
        _ = try CurlLibrary.load()
        let cases: [(Int32, CourierError.Kind)] = [
            (CCURLE_COULDNT_RESOLVE_HOST, .cannotFindHost), (CCURLE_COULDNT_CONNECT, .cannotConnect),
            (CCURLE_OPERATION_TIMEDOUT, .timedOut), (CCURLE_PARTIAL_FILE, .connectionLost),
            (CCURLE_RECV_ERROR, .connectionLost), (CCURLE_SEND_ERROR, .connectionLost), (CCURLE_GOT_NOTHING, .connectionLost),
            (CCURLE_SSL_CONNECT_ERROR, .secureConnectionFailed), (CCURLE_PEER_FAILED_VERIFICATION, .serverCertificateUntrusted),
            (CCURLE_SSL_PINNEDPUBKEYNOTMATCH, .pinMismatch), (CCURLE_SSL_CERTPROBLEM, .invalidConfiguration),
            (CCURLE_BAD_CONTENT_ENCODING, .invalidResponse), (CCURLE_READ_ERROR, .fileSystem),
            (CCURLE_OUT_OF_MEMORY, .transportFailed),
        ]
        for (code, kind) in cases {
            let error = CourierError(curl: code, detail: "", url: url)
            #expect(error.kind == kind, "CURLcode \(code)")
            #expect((error.underlyingError as? CurlError)?.code == code)
            #expect(error.url == url)
            #expect(!error.message.isEmpty)
        }
        #expect(
            CourierError(curl: CCURLE_PARTIAL_FILE, detail: "transfer closed with 5 bytes remaining to read", url: url).message
                == "transfer closed with 5 bytes remaining to read")
    }

    @Test("libcurl loads and reports its version and codings")
    func library() throws {
        let library = try CurlLibrary.load()
        #expect(library.versionNumber >= 0x074400)
        #expect(!library.version.isEmpty)
        #expect(library.summary.hasPrefix("libcurl/"))
        if library.features.contains(.libz) { #expect(library.contentCodings.contains("gzip")) }
    }
}
