import Courier
import CourierTestServer
import Foundation
import InMemoryTracing
import Synchronization
import Tracing

/// The transports every integration test runs on.
enum TransportUnderTest: String, CaseIterable, Sendable, CustomStringConvertible {
    case curl
    case urlSession

    /// The transports that can run here: URLSession always, curl when libcurl loads.
    static let available: [TransportUnderTest] = {
        var configuration = SessionConfiguration()
        configuration.transport = .curl
        return Session(configuration: configuration).transportName == "curl" ? [.curl, .urlSession] : [.urlSession]
    }()

    var description: String { rawValue }

    /// A session on this transport talking to `server`.
    func session(_ server: TestServer, interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor]) -> Session {
        var configuration = SessionConfiguration()
        configuration.transport = self == .curl ? .curl : .urlSession(.ephemeral)
        return Session(configuration: configuration, baseURL: server.baseURL, interceptor: interceptor, eventMonitors: monitors)
    }
}

/// Runs `body` with a fresh server, shut down afterwards.
func withServer<T>(_ body: (TestServer) async throws -> T) async throws -> T {
    let server = try TestServer()
    do {
        let result = try await body(server)
        _ = server.shutdown()
        return result
    } catch {
        _ = server.shutdown()
        throw error
    }
}

/// The in-memory tracer with a W3C propagator: spans recorded in memory (trace ids of 32 and span
/// ids of 16 hex digits), contexts injected as `traceparent`, as swift-otel's propagator does.
struct W3CInMemoryTracer: Tracer {
    let spans = InMemoryTracer(idGenerator: .init(nextTraceID: { hex(16) }, nextSpanID: { hex(8) }))

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        spans.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}

    func forceFlush() {}
}

private func hex(_ bytes: Int) -> String {
    (0..<bytes).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
}
