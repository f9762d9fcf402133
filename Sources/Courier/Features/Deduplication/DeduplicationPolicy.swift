import CourierSupport
import Foundation

/// Whether identical requests in flight at the same time share one transfer.
public enum DeduplicationPolicy: Sendable, Hashable {
    /// Every request makes its own transfer (the default).
    case disabled
    /// Identical GET and HEAD requests in flight share one transfer.
    case safeMethods

    func applies(to method: HTTPMethod) -> Bool {
        switch self {
        case .disabled: false
        case .safeMethods: method == .get || method == .head
        }
    }
}

/// What makes two requests identical for deduplication: method, normalised URL, every header
/// except those in ``DeduplicationKey/ignoredHeaders``, and a hash of the body.
struct DeduplicationKey: Hashable, Sendable {
    /// Headers that never change a response: tracing and request identifiers.
    static let ignoredHeaders: Set<String> = [
        "traceparent", "tracestate", "x-request-id", "x-correlation-id", "x-amzn-trace-id", "x-b3-traceid", "x-b3-spanid",
    ]

    let method: String
    let url: String
    let headers: [String]
    let body: String

    init(_ request: TransportRequest) {
        method = request.method.rawValue
        url = request.url.normalisedKey(sortingQuery: false)
        headers = request.headers
            .filter { !Self.ignoredHeaders.contains($0.name.lowercased()) }
            .map { "\($0.name.lowercased()):\($0.value)" }
            .sorted()
        switch request.body {
        case .empty: body = ""
        case .data(let data): body = SHA256.hash(data).hexString
        case .file(let url, let length): body = "file:\(url.path):\(length)"
        case .stream(let stream): body = "stream:\(ObjectIdentifier(stream).hashValue)"
        }
    }
}
