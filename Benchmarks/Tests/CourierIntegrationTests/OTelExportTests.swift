import Courier
import CourierTestServer
import CourierTracing
import Foundation
import Logging
import OTel
import ServiceLifecycle
import Testing
import Tracing

/// CourierTracing with swift-otel exporting for real (#40): a request's client span leaves through
/// swift-otel's OTLP/HTTP exporter (its default encoding, protobuf) to a collector this test runs
/// itself, a ``TestServer`` route for `POST /v1/traces`; the test decodes what arrived.
///
/// The tracer is handed to ``TracingMonitor`` directly (`OTel.makeTracingBackend`), so nothing is
/// bootstrapped process-wide, and the backend's service (the batch span processor, the exporter and
/// its HTTP client) runs in a task of this test, shut down gracefully before it returns.
@Suite struct OTelExportTests {
    @Test(arguments: TransportUnderTest.available)
    func aRequestsClientSpanIsExportedOverOTLPWithItsHTTPAttributes(transport: TransportUnderTest) async throws {
        let collector = try TestServer()
        defer { _ = collector.shutdown() }
        // OTLP/HTTP's success answer: an empty ExportTraceServiceResponse (zero bytes of protobuf).
        collector.route("/v1/traces", method: .post) { _ in
            MockResponse(status: 200, headers: ["Content-Type": "application/x-protobuf"], body: .empty)
        }
        var configuration = OTel.Configuration.default
        configuration.serviceName = "courier-integration-tests"
        configuration.diagnosticLogLevel = .error
        configuration.metrics.enabled = false
        configuration.logs.enabled = false
        configuration.propagators = [.traceContext]
        configuration.traces.sampler = .alwaysOn
        configuration.traces.exporter = .otlp
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        configuration.traces.otlpExporter.endpoint = collector.url("/v1/traces").absoluteString
        // The processor exports what it holds every 50 ms, so the span leaves while the test waits.
        configuration.traces.batchSpanProcessor.scheduleDelay = .milliseconds(50)
        let backend = try OTel.makeTracingBackend(configuration: configuration)

        var logger = Logger(label: "otel-export-test")
        logger.logLevel = .error
        let services = ServiceGroup(configuration: .init(services: [backend.service], gracefulShutdownSignals: [], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await services.run() }
            let outcome: Result<Void, any Error>
            do {
                try await withServer { server in
                    server.enqueue(.ok("traced"))
                    let session = transport.session(server, monitors: [TracingMonitor(tracer: backend.factory)])
                    let text = try await session.request("traced").validate().serializingString().value
                    #expect(text == "traced")
                    let traceparent = try await server.takeRequest(timeout: .seconds(120)).headers["traceparent"]

                    let export = try await collector.takeRequest(timeout: .seconds(120))
                    #expect(export.method == "POST")
                    #expect(export.headers["Content-Type"] == "application/x-protobuf")
                    let request = try OTLPTraceExport(protobuf: export.body)
                    #expect(request.resourceAttributes["service.name"] == .string("courier-integration-tests"))
                    try #require(request.spans.count == 1, "\(request.spans)")
                    let span = request.spans[0]
                    #expect(span.name == "GET")
                    #expect(span.kind == OTLPSpan.clientKind)
                    #expect(span.parentSpanID.isEmpty)
                    #expect(span.traceID.count == 32 && span.spanID.count == 16)
                    #expect(span.attributes["http.request.method"] == .string("GET"))
                    #expect(span.attributes["server.address"] == .string("127.0.0.1"))
                    #expect(span.attributes["server.port"] == .int(Int64(server.port)))
                    #expect(span.attributes["url.full"] == .string(server.baseURL.appendingPathComponent("traced").absoluteString))
                    #expect(span.attributes["http.response.status_code"] == .int(200))
                    // The server received the exported span's own context.
                    #expect(traceparent == "00-\(span.traceID)-\(span.spanID)-01")
                }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            try outcome.get()
        }
    }
}

/// An attribute value as OTLP's `AnyValue` carries it (the kinds this test meets).
enum OTLPValue: Equatable, CustomStringConvertible {
    case string(String)
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case other(field: Int)

    var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .bool(let value): "\(value)"
        case .int(let value): "\(value)"
        case .double(let value): "\(value)"
        case .other(let field): "AnyValue field \(field)"
        }
    }
}

/// One span of an OTLP export, its ids in lowercase hex as W3C trace context writes them.
struct OTLPSpan: CustomStringConvertible {
    /// `SPAN_KIND_CLIENT` in OTLP's `Span.SpanKind`.
    static let clientKind: UInt64 = 3

    var traceID = ""
    var spanID = ""
    var parentSpanID = ""
    var name = ""
    var kind: UInt64 = 0
    var attributes: [String: OTLPValue] = [:]

    var description: String { "\(name) \(traceID)/\(spanID) kind \(kind) \(attributes)" }
}

/// What an OTLP/HTTP `POST /v1/traces` carried: an `ExportTraceServiceRequest`
/// (opentelemetry-proto's collector/trace/v1), read from its protobuf encoding by the field numbers
/// of trace/v1/trace.proto and common/v1/common.proto. Only the fields asserted on are kept.
struct OTLPTraceExport {
    var resourceAttributes: [String: OTLPValue] = [:]
    var spans: [OTLPSpan] = []

    init(protobuf data: Data) throws {
        // ExportTraceServiceRequest: 1 resource_spans (repeated ResourceSpans).
        for field in try ProtobufFields.parse([UInt8](data)[...]) where field.number == 1 {
            // ResourceSpans: 1 resource, 2 scope_spans (repeated ScopeSpans).
            for resourceSpans in try ProtobufFields.parse(try field.bytes()) {
                switch resourceSpans.number {
                case 1:
                    // Resource: 1 attributes (repeated KeyValue).
                    for attribute in try ProtobufFields.parse(try resourceSpans.bytes()) where attribute.number == 1 {
                        let (key, value) = try Self.keyValue(try attribute.bytes())
                        resourceAttributes[key] = value
                    }
                case 2:
                    // ScopeSpans: 1 scope, 2 spans (repeated Span).
                    for scopeSpans in try ProtobufFields.parse(try resourceSpans.bytes()) where scopeSpans.number == 2 {
                        spans.append(try Self.span(try scopeSpans.bytes()))
                    }
                default: break
                }
            }
        }
    }

    /// Span: 1 trace_id, 2 span_id, 4 parent_span_id (bytes), 5 name, 6 kind, 9 attributes (repeated KeyValue).
    static func span(_ bytes: ArraySlice<UInt8>) throws -> OTLPSpan {
        var span = OTLPSpan()
        for field in try ProtobufFields.parse(bytes) {
            switch field.number {
            case 1: span.traceID = hex(try field.bytes())
            case 2: span.spanID = hex(try field.bytes())
            case 4: span.parentSpanID = hex(try field.bytes())
            case 5: span.name = try field.string()
            case 6: span.kind = try field.varint()
            case 9:
                let (key, value) = try keyValue(try field.bytes())
                span.attributes[key] = value
            default: break
            }
        }
        return span
    }

    /// KeyValue: 1 key, 2 value (AnyValue: 1 string, 2 bool, 3 int64, 4 double).
    static func keyValue(_ bytes: ArraySlice<UInt8>) throws -> (String, OTLPValue) {
        var key = ""
        var value = OTLPValue.other(field: 0)
        for field in try ProtobufFields.parse(bytes) {
            switch field.number {
            case 1: key = try field.string()
            case 2:
                for any in try ProtobufFields.parse(try field.bytes()) {
                    switch any.number {
                    case 1: value = .string(try any.string())
                    case 2: value = .bool(try any.varint() != 0)
                    case 3: value = .int(Int64(bitPattern: try any.varint()))
                    case 4: value = .double(Double(bitPattern: try any.fixed64()))
                    default: value = .other(field: any.number)
                    }
                }
            default: break
            }
        }
        return (key, value)
    }

    static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }
}

/// Protobuf's wire format, one message's fields at a time (enough to read OTLP, which uses no groups).
struct ProtobufFields {
    enum Payload {
        case varint(UInt64)
        case fixed64(UInt64)
        case lengthDelimited(ArraySlice<UInt8>)
        case fixed32(UInt32)
    }

    struct Field {
        let number: Int
        let payload: Payload

        func bytes() throws -> ArraySlice<UInt8> {
            guard case .lengthDelimited(let bytes) = payload else { throw ProtobufError.unexpectedWireType(field: number) }
            return bytes
        }

        func string() throws -> String {
            guard let text = String(validating: try bytes(), as: UTF8.self) else { throw ProtobufError.invalidUTF8(field: number) }
            return text
        }

        func varint() throws -> UInt64 {
            guard case .varint(let value) = payload else { throw ProtobufError.unexpectedWireType(field: number) }
            return value
        }

        func fixed64() throws -> UInt64 {
            guard case .fixed64(let value) = payload else { throw ProtobufError.unexpectedWireType(field: number) }
            return value
        }
    }

    enum ProtobufError: Error {
        case truncated
        case unexpectedWireType(field: Int)
        case unsupportedWireType(Int)
        case invalidUTF8(field: Int)
    }

    /// The fields of one message, in the order they were written.
    static func parse(_ message: ArraySlice<UInt8>) throws -> [Field] {
        var rest = message
        var fields: [Field] = []
        while !rest.isEmpty {
            let tag = try varint(&rest)
            let number = Int(tag >> 3)
            switch tag & 7 {
            case 0: fields.append(Field(number: number, payload: .varint(try varint(&rest))))
            case 1: fields.append(Field(number: number, payload: .fixed64(try littleEndian(&rest, count: 8))))
            case 2:
                let length = try varint(&rest)
                guard length <= UInt64(rest.count) else { throw ProtobufError.truncated }
                fields.append(Field(number: number, payload: .lengthDelimited(rest.prefix(Int(length)))))
                rest = rest.dropFirst(Int(length))
            case 5: fields.append(Field(number: number, payload: .fixed32(UInt32(try littleEndian(&rest, count: 4)))))
            default: throw ProtobufError.unsupportedWireType(Int(tag & 7))
            }
        }
        return fields
    }

    static func varint(_ bytes: inout ArraySlice<UInt8>) throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while let byte = bytes.popFirst() {
            guard shift < 64 else { throw ProtobufError.truncated }
            value |= UInt64(byte & 0x7f) << shift
            if byte & 0x80 == 0 { return value }
            shift += 7
        }
        throw ProtobufError.truncated
    }

    static func littleEndian(_ bytes: inout ArraySlice<UInt8>, count: Int) throws -> UInt64 {
        guard bytes.count >= count else { throw ProtobufError.truncated }
        var value: UInt64 = 0
        for (index, byte) in bytes.prefix(count).enumerated() { value |= UInt64(byte) << (8 * UInt64(index)) }
        bytes = bytes.dropFirst(count)
        return value
    }
}
