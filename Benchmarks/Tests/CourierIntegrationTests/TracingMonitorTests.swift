import Courier
import CourierTestServer
@testable import CourierTracing
import Foundation
import InMemoryTracing
import Testing
import Tracing

/// CourierTracing: a client span per exchange, W3C trace context in each exchange's headers,
/// OpenTelemetry's HTTP client attributes (#40).
@Suite struct TracingMonitorTests {
    @Test(arguments: TransportUnderTest.available)
    func eachAttemptAndRedirectIsAClientSpanUnderTheCallersSpanAndCarriesItsTraceparent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.status(503), .redirect(to: "/b"), .ok("done")])
            let tracer = W3CInMemoryTracer()
            let retry = RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0, jitter: false)
            let session = transport.session(server, interceptor: retry, monitors: [TracingMonitor(tracer: tracer)])
            let parent = tracer.startSpan("checkout", context: .topLevel, ofKind: .server)
            let text = try await ServiceContext.withValue(parent.context) {
                try await session.request("a").validate().serializingString().value
            }
            parent.end()
            #expect(text == "done")

            let spans = tracer.spans.finishedSpans.filter { $0.operationName == "GET" }
            #expect(spans.count == 3)
            #expect(spans.allSatisfy { $0.kind == .client && $0.traceID == parent.traceID && $0.parentSpanID == parent.spanID })
            #expect(spans.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() } == [.int64(503), .int64(302), .int64(200)])
            #expect(spans.map { $0.attributes["http.request.resend_count"]?.toSpanAttribute() } == [nil, .int64(1), .int64(2)])
            #expect(
                spans.map { $0.attributes["url.full"]?.toSpanAttribute() } == [
                    .string(server.baseURL.appendingPathComponent("a").absoluteString),
                    .string(server.baseURL.appendingPathComponent("a").absoluteString),
                    .string(server.baseURL.appendingPathComponent("b").absoluteString),
                ])
            #expect(spans.allSatisfy { $0.attributes["http.request.method"]?.toSpanAttribute() == .string("GET") })
            #expect(spans.allSatisfy { $0.attributes["server.address"]?.toSpanAttribute() == .string("127.0.0.1") })
            #expect(spans.allSatisfy { $0.attributes["server.port"]?.toSpanAttribute() == .int64(Int64(server.baseURL.port ?? 0)) })
            // Where the transport knows it: curl does, URLSession on Linux does not report it.
            let version: SpanAttribute? = transport == .curl ? .string("1.1") : nil
            #expect(spans.allSatisfy { $0.attributes["network.protocol.version"]?.toSpanAttribute() == version })
            #expect(spans[0].attributes["error.type"]?.toSpanAttribute() == .string("503"))
            #expect(spans[0].status?.code == .error)
            #expect(spans[2].status == nil)

            // What each exchange carried: its own span's W3C trace context.
            var sent: [String] = []
            for _ in 0..<3 { sent.append(try await server.takeRequest().headers["traceparent"] ?? "none") }
            #expect(sent == spans.map { "00-\($0.traceID)-\($0.spanID)-01" })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aTransportFailureEndsTheSpanWithTheErrorKind(transport: TransportUnderTest) async throws {
        let closed = try TestServer()
        _ = closed.shutdown()
        let tracer = W3CInMemoryTracer()
        var configuration = SessionConfiguration()
        configuration.transport = transport == .curl ? .curl : .urlSession(.ephemeral)
        let session = Session(configuration: configuration, baseURL: closed.baseURL, eventMonitors: [TracingMonitor(tracer: tracer)])
        await #expect(throws: CourierError.self) { try await session.request("a").serializingString().value }
        let span = try #require(tracer.spans.finishedSpans.first)
        #expect(span.attributes["error.type"]?.toSpanAttribute() == .string("cannotConnect"))
        #expect(span.status?.code == .error)
        #expect(span.errors.count == 1)
        #expect(tracer.spans.activeSpans.isEmpty)
    }

    @Test func requestsMadeUnderASpanAndReleasedUnstartedAreNotKeptForever() throws {
        let tracer = W3CInMemoryTracer()
        let monitor = TracingMonitor(tracer: tracer)
        let session = Session()
        let url = try #require(URL(string: "http://127.0.0.1:9/never-sent"))
        let parent = tracer.startSpan("screen", context: .topLevel, ofKind: .internal)
        // The monitor keeps the creating context for each request until it finishes; a request made
        // and dropped without starting never finishes, so its trace must be swept out instead.
        let held = session.request(url)
        ServiceContext.withValue(parent.context) {
            monitor.requestDidCreate(held)
            for _ in 0..<2_000 { monitor.requestDidCreate(session.request(url)) }
        }
        parent.end()
        #expect(monitor.tracedRequestCount >= 1)
        #expect(monitor.tracedRequestCount < 128)
        withExtendedLifetime(held) {}
    }

    @Test func credentialsInTheURLAreRedacted() throws {
        let url = try #require(URL(string: "https://user:secret@api.example.com/v1?q=1"))
        #expect(TracingMonitor.redacted(url) == "https://REDACTED:REDACTED@api.example.com/v1?q=1")
    }
}
