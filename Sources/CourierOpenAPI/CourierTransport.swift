#if OpenAPI
import Courier
import CourierHTTPTypes
import Foundation
import HTTPTypes
import OpenAPIRuntime
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A swift-openapi-runtime `ClientTransport` that sends a generated client's requests through a
/// Courier `Session`: both bodies streamed, and every session feature applies
/// (interceptors, retry and authentication, event monitors, TLS, limits), because each operation
/// is a Courier request of that session.
///
/// ```swift
/// let client = Client(serverURL: try Servers.Server1.url(), transport: CourierTransport(session: api))
/// ```
///
/// - The request body is streamed from the `HTTPBody` as the generated client produces it, with
///   `Content-Length` when the body's length is known (chunked on the URLSession transport),
///   chunked when not; at most 256 KiB of it is held in memory. A body that cannot be sent again
///   (the `HTTPBody` iterates once) fails a retry or a 307/308 redirect with `.bodyStreamFailed`
///   instead of sending it short.
/// - The response body is an `HTTPBody` read from the transfer as the client iterates it
///   (backpressure: the transport stops reading while the client is busy), its length known when
///   the server sent `Content-Length` for the bytes delivered. `send` returns once the first byte
///   of the body (or its end) arrived: the point after which Courier no longer retries, so the
///   status and headers returned are those of the response whose body follows.
/// - Cancelling the calling task, or leaving the body unread, cancels the Courier request.
/// - A failure is thrown as Courier's `CourierError`; the generated client wraps it in
///   its `ClientError`, whose `underlyingError` is the `CourierError`.
public struct CourierTransport: ClientTransport {
    /// The session every request goes through.
    public let session: Session

    /// A transport sending through `session`.
    public init(session: Session) {
        self.session = session
    }

    /// Sends one operation's request through the session and returns the response's head and its
    /// body, streamed (`nil` for a HEAD request and for statuses that have no body).
    public func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let url = try Self.url(of: request, baseURL: baseURL)
        var headers = HTTPHeaders(request.headerFields)
        // The body's own length says what Courier sends; a second, possibly different, count would be refused.
        headers.remove(name: "Content-Length")
        let method = HTTPMethod(request.method)
        let courierRequest: DataStreamRequest
        if let body {
            let length: Int64? =
                switch body.length {
                case .known(let count): count
                case .unknown: nil
                }
            courierRequest = session.streamRequest(url, method: method, headers: headers, uploading: body, length: length)
        } else {
            courierRequest = session.streamRequest(url, method: method, headers: headers)
        }
        let reader = ResponseBodyReader(courierRequest.streamingData())
        // Reading the first chunk starts the request and waits until Courier has settled on the
        // response (a retry before it would have brought another head). Cancelling this task
        // cancels the request.
        try await reader.start()
        guard let head = await courierRequest.response else {
            throw CourierError(.invalidResponse, "The request ended without a response.", url: url)
        }
        // Every field line as it arrived (repeated names, each Set-Cookie), not the joined dictionary.
        let response =
            if let fields = await courierRequest.headerFields {
                try HTTPResponse(head, headerFields: fields)
            } else {
                try HTTPResponse(head)
            }
        // (The reader, dropped here, cancels the request if a body the status rules out still came.)
        guard Self.hasBody(response.status, method: request.method) else { return (response, nil) }
        return (response, HTTPBody(ResponseBody(reader: reader), length: Self.length(of: head), iterationBehavior: .single))
    }

    /// The operation's URL: the server's URL followed by the request's path and query, as encoded.
    static func url(of request: HTTPRequest, baseURL: URL) throws(CourierError) -> URL {
        let path = request.path ?? "/"
        guard var base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true), let operation = URLComponents(string: path) else {
            throw CourierError(.invalidURL, "The server URL \(baseURL) and the path \(path) do not make a URL.", url: baseURL)
        }
        let basePath = base.percentEncodedPath.hasSuffix("/") ? String(base.percentEncodedPath.dropLast()) : base.percentEncodedPath
        base.percentEncodedPath = basePath + operation.percentEncodedPath
        base.percentEncodedQuery = operation.percentEncodedQuery
        guard let url = base.url else {
            throw CourierError(.invalidURL, "The server URL \(baseURL) and the path \(path) do not make a URL.", url: baseURL)
        }
        return url
    }

    /// Whether a response of `status` to `method` has a body (RFC 9110, 6.4.1).
    static func hasBody(_ status: HTTPResponse.Status, method: HTTPRequest.Method) -> Bool {
        method != .head && status.kind != .informational && status.code != 204 && status.code != 304
    }

    /// The body's length when the server announced it for the bytes delivered (no content coding
    /// that Courier decodes in between).
    static func length(of head: HTTPURLResponse) -> HTTPBody.Length {
        let coding = (head.value(forHTTPHeaderField: "Content-Encoding") ?? "identity").trimmingCharacters(in: .whitespaces).lowercased()
        guard coding == "identity", let announced = head.value(forHTTPHeaderField: "Content-Length"),
            let count = Int64(announced.trimmingCharacters(in: .whitespaces)), count >= 0
        else { return .unknown }
        return .known(count)
    }
}
#endif
