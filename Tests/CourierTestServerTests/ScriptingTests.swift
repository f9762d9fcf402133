import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
import XCTest

extension CourierTestServerTests {
    @Suite struct Scripting {
        @Test func queuedResponsesAreServedInOrder() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.ok("first"))
            server.enqueue(MockResponse.status(201).header("X-Second", "yes"))
            server.enqueue(.json(#"{"n":3}"#))

            let client = try RawClient(port: server.port)
            let first = try client.get("/a")
            let second = try client.get("/b")
            let third = try client.get("/c")

            #expect(first.status == 200 && first.text == "first")
            #expect(first.headers["content-type"] == "text/plain; charset=utf-8")
            #expect(first.headers["Content-Length"] == "5")
            #expect(second.status == 201 && second.reason == "Created" && second.headers["x-second"] == "yes")
            #expect(second.body.isEmpty && second.headers["Content-Length"] == "0")
            #expect(third.text == #"{"n":3}"# && third.headers["Content-Type"] == "application/json")
            #expect(server.queuedResponseCount == 0)
        }

        @Test func unscriptedRequestFailsFastWith599AndIsReportedUnexpected() throws {
            let server = try TestServer()
            let client = try RawClient(port: server.port)
            let response = try client.get("/x?y=1")

            #expect(response.status == 599)
            #expect(response.text.contains("no response scripted for GET /x?y=1"))
            let report = server.shutdown()
            #expect(report.unexpectedRequests.map(\.path) == ["/x"])
            #expect(!report.isClean)
            #expect(report.problems == ["1 unexpected requests (expected 0): GET /x?y=1 HTTP/1.1"])
            #expect(report.problems(unexpectedRequests: 1) == [])
            #expect(report.problems(unexpectedRequests: 2).count == 1)
            expectClean(report, unexpectedRequests: 1)
            withKnownIssue("expectClean records the unexpected request") { expectClean(report) }
        }

        @Test func shutdownReportListsUnconsumedResponsesAndIsIdempotent() throws {
            let server = try TestServer()
            server.enqueue(.ok("used"))
            server.enqueue(.status(503))
            server.enqueue(.ok("never"))
            let client = try RawClient(port: server.port)
            _ = try client.get("/")

            let report = server.shutdown()
            #expect(report.unconsumedResponses.map(\.status) == [503, 200])
            #expect(report.unconsumedResponses.last?.body == .text("never"))
            #expect(report.unexpectedRequests.isEmpty)
            #expect(report.problems.count == 1)
            #expect(report.problems.first?.hasPrefix("2 unconsumed responses (expected 0): MockResponse(503") == true)
            #expect(report.problems(unconsumedResponses: 2) == [])
            expectClean(report, unconsumedResponses: 2)
            let again = server.shutdown()
            #expect(again.unconsumedResponses.count == 2)
            #expect(server.isShutDown)
        }

        @Test func routesMatchExactPathAndMethodLatestFirstBeforeTheQueue() throws {
            let server = try TestServer()
            // The last GET /later, after its routes are removed, gets the fail-fast 599 on purpose.
            defer { expectClean(server.shutdown(), unexpectedRequests: 1) }
            server.enqueue(.ok("from queue"))
            server.route("/users/42") { _ in .json(#"{"id":42}"#) }
            server.route("/users/42", method: .post) { _ in .status(201) }
            server.route("/later") { _ in .ok("old") }
            server.route("/later") { _ in .ok("new") }

            let client = try RawClient(port: server.port)
            #expect(try client.get("/users/42?verbose=1").text == #"{"id":42}"#)
            try client.sendRequest("POST", "/users/42", body: "x")
            #expect(try client.readResponse().status == 201)
            #expect(try client.get("/later").text == "new")
            #expect(try client.get("/users/4").text == "from queue")
            #expect(server.requestCount(path: "/users/42") == 2)
            #expect(server.requestCount == 4)

            server.removeRoutes("/later")
            #expect(try client.get("/later").status == 599)
        }

        @Test func dispatcherRunsWhenNoRouteMatchesBeforeTheQueue() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.ok("queued"))
            server.route("/r") { _ in .ok("route") }
            server.dispatcher = { request in .text("dispatched \(request.path)") }

            let client = try RawClient(port: server.port)
            #expect(try client.get("/r").text == "route")
            #expect(try client.get("/other").text == "dispatched /other")
            server.dispatcher = nil
            #expect(try client.get("/other").text == "queued")
        }

        @Test func echoDescribesTheRequestAsJSON() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.route("/echo", method: .any) { request in .echo(request) }

            let client = try RawClient(port: server.port)
            try client.sendRequest("POST", "/echo?a=1&b=%20x", headers: ["X-One: 1", "X-One: 2"], body: "hi \"there\"")
            let text = try client.readResponse().text
            let json = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
            #expect(json["method"] as? String == "POST")
            #expect(json["target"] as? String == "/echo?a=1&b=%20x")
            #expect(json["path"] as? String == "/echo")
            #expect(json["query"] as? [String: String] == ["a": "1", "b": " x"])
            let headers = try #require(json["headers"] as? [[String]])
            #expect(headers.filter { $0.first == "X-One" }.map { $0[1] } == ["1", "2"])
            #expect(json["body"] as? String == "hi \"there\"")
            #expect(json["bodyLength"] as? Int == 10)

            let binary: [UInt8] = [0xFF, 0x00, 0xFE]
            try client.send(bytes("PUT /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\n") + binary)
            let second = try JSONSerialization.jsonObject(with: Data(try client.readResponse().body)) as? [String: Any]
            #expect(second?["bodyBase64"] as? String == Data(binary).base64EncodedString())
            #expect(second?["body"] == nil)
        }

        @Test func recordedRequestCarriesTheParsedRequest() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.ok("a"))
            let client = try RawClient(port: server.port)
            try client.sendRequest("PUT", "/p/a%2Fb?x=1&x=2&flag&e=%E2%82%AC", headers: ["X-Case: Value", "x-case: second"], body: "payload")
            _ = try client.readResponse()

            let request = try await server.takeRequest()
            #expect(request.method == "PUT")
            #expect(request.target == "/p/a%2Fb?x=1&x=2&flag&e=%E2%82%AC")
            #expect(request.path == "/p/a%2Fb")
            #expect(request.query == ["x": "2", "flag": "", "e": "€"])
            #expect(request.queryItems.map(\.name) == ["x", "x", "flag", "e"])
            #expect(request.queryItems.map(\.value) == ["1", "2", "", "€"])
            #expect(request.version == "HTTP/1.1")
            #expect(request.headers["X-CASE"] == "Value")
            #expect(request.headers.values(for: "x-case") == ["Value", "second"])
            #expect(request.headers.map(\.name).contains("Host"))
            #expect(request.body == Data("payload".utf8))
            #expect(request.bodySize == 7 && request.chunkSizes == nil && request.error == nil)
            #expect(request.receivedAt <= .now)
            #expect(server.recordedRequests.count == 1)
        }

        @Test func takeRequestTimesOutThenReturnsInArrivalOrder() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            await #expect(throws: TestServerError.timeout) {
                try await server.takeRequest(timeout: .milliseconds(50))
            }
            #expect(throws: TestServerError.timeout) {
                try server.takeRequestBlocking(timeout: .milliseconds(50))
            }
            server.enqueue([.ok("1"), .ok("2")])
            let port = server.port
            async let waiting = server.takeRequest()
            try await onThread {
                let client = try RawClient(port: port)
                _ = try client.get("/one")
                _ = try client.get("/two")
            }
            #expect(try await waiting.path == "/one")
            #expect(try server.takeRequestBlocking().path == "/two")
            #expect(server.recordedRequests.map(\.path) == ["/one", "/two"])
        }

        @Test func shutdownWakesWaitersAndStillReturnsRecordedRequests() async throws {
            let server = try TestServer()
            let waiting = Task { try await server.takeRequest(timeout: .seconds(60)) }
            // Give the waiter a chance to register; the assertion holds either way.
            await Task.yield()
            expectClean(server.shutdown())
            await #expect(throws: TestServerError.shutdown) { try await waiting.value }
            await #expect(throws: TestServerError.shutdown) { try await server.takeRequest() }

            let second = try TestServer()
            second.enqueue(.ok("x"))
            _ = try RawClient(port: second.port).get("/kept")
            expectClean(second.shutdown())
            #expect(try await second.takeRequest().path == "/kept")
        }

        @Test func takeRequestHonoursTaskCancellation() async throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            let task = Task { try await server.takeRequest(timeout: .seconds(60)) }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }

        @Test func urlHelpersPointAtTheServer() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            #expect(server.port > 0)
            #expect(server.baseURL.absoluteString == "http://127.0.0.1:\(server.port)")
            #expect(server.url("/path?x=1").absoluteString == "http://127.0.0.1:\(server.port)/path?x=1")
            #expect(server.url("/path?x=1").query == "x=1")
        }

        @Test func deinitWithoutShutdownStopsTheServer() throws {
            var server: TestServer? = try TestServer()
            let port = try #require(server?.port)
            server?.enqueue(.ok("x"))
            _ = try RawClient(port: port).get("/")
            server = nil
            #expect(throws: RawClient.ClientError.self) { try RawClient(port: port) }
        }

        @Test func redirectAndFactoryResponses() throws {
            let server = try TestServer()
            defer { expectClean(server.shutdown()) }
            server.enqueue(.redirect(to: "/elsewhere", status: 307))
            server.enqueue(.ok(Data([1, 2, 3])))
            server.enqueue(MockResponse.text("nope", status: 404).reason("Nowhere").removingHeader("Content-Type"))
            let client = try RawClient(port: server.port)
            let redirect = try client.get("/")
            #expect(redirect.status == 307 && redirect.headers["Location"] == "/elsewhere")
            let data = try client.get("/")
            #expect(data.body == [1, 2, 3] && data.headers["Content-Type"] == "application/octet-stream")
            let missing = try client.get("/")
            #expect(missing.status == 404 && missing.reason == "Nowhere" && missing.headers["Content-Type"] == nil)
        }
    }
}

/// XCTest code checks reports with `XCTAssertClean` from CourierTestSupport.
final class ShutdownReportXCTests: XCTestCase {
    func testXCTAssertCleanAcceptsCleanAndExactlyExpectedLeftovers() throws {
        let server = try TestServer()
        server.enqueue(.ok("used"))
        server.enqueue(.ok("left over"))
        let client = try RawClient(port: server.port)
        XCTAssertEqual(try client.get("/").text, "used")
        let report = server.shutdown()
        XCTAssertEqual(report.problems(unconsumedResponses: 1), [])
        XCTAssertClean(report, unconsumedResponses: 1)
        XCTAssertClean(try TestServer().shutdown())
    }
}
