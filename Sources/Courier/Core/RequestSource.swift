import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// How a request's first `URLRequest` is made, plus the options given when it was created.
///
/// Building is deferred to the first attempt so that an invalid URL or an encoding error arrives
/// through the response handlers, never at the call site.
struct RequestSource: Sendable {
    /// Builds the initial request (URL resolved, session headers merged, parameters encoded).
    let makeRequest: @Sendable (Session) throws -> URLRequest
    /// The idle timeout given for this request, overriding the session's.
    var timeout: TimeInterval?
    /// The request's own interceptor (after the session's).
    var interceptor: (any RequestInterceptor)?
    /// The upload body, for upload requests.
    var upload: UploadSource?
    /// Whether the response is read while the body is still produced (a full-duplex stream),
    /// which only the curl transport does.
    var fullDuplex = false
    /// The headers given for this request, every line in order: a `URLRequest` holds one value per
    /// name and no order, so the lines sent are restored from these and the session's
    /// (``HTTPHeaders/restoringLines(of:)``) wherever the built request still agrees with them.
    var headers: HTTPHeaders?

    init(
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil, upload: UploadSource? = nil,
        headers: HTTPHeaders? = nil, makeRequest: @escaping @Sendable (Session) throws -> URLRequest
    ) {
        self.makeRequest = makeRequest
        self.timeout = timeout
        self.interceptor = interceptor
        self.upload = upload
        self.headers = headers
    }

    /// A source for any `URLRequestConvertible`: relative URLs resolve against the base URL and
    /// session headers fill in what the request does not set.
    static func convertible(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)?,
        upload: UploadSource? = nil
    ) -> RequestSource {
        RequestSource(interceptor: interceptor, upload: upload) { session in
            var request = try convertible.asURLRequest()
            guard let url = request.url else { throw CourierError(.invalidURL, "The request has no URL.") }
            request.url = try session.resolve(url)
            request.headers = session.headers.merging(request.headers)
            return request
        }
    }
}

/// Where an upload's body comes from.
enum UploadSource: Sendable {
    case data(Data)
    case file(URL)
    case multipart(MultipartFormData)
    case stream(BodyStream)
}

/// Where a response body goes while it arrives.
protocol ResponseBodySink: AnyObject {
    /// Adjusts the headers of the next exchange (a resumable download adds `Range`/`If-Range`).
    func prepareExchange(_ request: URLRequest, headers: inout HTTPHeaders) throws
    /// A final response head arrived: decide what happens to its body. Throws `.fileSystem`.
    func begin(_ head: ResponseHead, method: HTTPMethod) throws -> BodyDisposition
    /// Stores the next piece and acknowledges it to `transfer` once it is safely stored (a stream
    /// acknowledges only when its consumer takes the piece: that is its backpressure).
    func append(_ data: Data, from transfer: any TransportTransfer) throws
    /// The body as validators and serializers see it.
    var body: RequestCompletion.Body { get }
    /// The body handed to handlers of a cancelled request.
    var cancelledBody: RequestCompletion.Body { get }
    /// Makes the body final (downloads move the file to its destination); throws `.fileSystem`.
    func finalize(response: LazyHTTPResponse?) throws -> RequestCompletion.Body
    /// Gives up on the body after a failure or a cancel (temporary files are removed).
    func discard()
    /// What kind of body this sink keeps: every body policy follows from it (see ``BodyKind``).
    var kind: BodyKind { get }
    /// Whether the sink already handed bytes of this body to a consumer, so a failed attempt may no
    /// longer be retried (a stream, once its consumer took a chunk).
    var hasHandedOutBytes: Bool { get }
    /// The transfer ended with `completion`: hand the rest of the body and then the end to the
    /// consumer, and call `delivered` once it took the end (sinks whose ``consumerSetsPace``).
    func awaitDelivery(of completion: RequestCompletion, then delivered: @escaping @Sendable () -> Void)
}

extension ResponseBodySink {
    func prepareExchange(_ request: URLRequest, headers: inout HTTPHeaders) throws {}
    var hasHandedOutBytes: Bool { false }
    func awaitDelivery(of completion: RequestCompletion, then delivered: @escaping @Sendable () -> Void) { delivered() }
}

/// What a sink does with a response's body.
enum BodyDisposition: Equatable {
    /// Store it; progress counts from `offset` towards `total` (-1 when unknown).
    case store(offset: Int64, total: Int64)
    /// The body is already complete on disk (a resumable download answered with 416): ignore the
    /// response's own body.
    case alreadyComplete(total: Int64)
    /// Drop this response and send the request again from scratch (the partial was discarded).
    case restart
}

/// Keeps the body in memory.
final class MemoryBodySink: ResponseBodySink {
    private var data: Data?
    /// The announced body length of the current response (-1 when unknown), for sizing the buffer.
    private var expected: Int64 = -1

    func begin(_ head: ResponseHead, method: HTTPMethod) -> BodyDisposition {
        expected = head.hasNoBody(for: method) ? 0 : head.expectedContentLength
        data = Data()
        return .store(offset: 0, total: expected)
    }

    func append(_ chunk: Data, from transfer: any TransportTransfer) {
        if data?.isEmpty ?? true {
            // The first chunk: a body that arrives whole is kept as is, with no copy; otherwise the
            // buffer is sized for the announced length once.
            if expected <= Int64(chunk.count) {
                data = chunk
            } else {
                var buffer = Data()
                buffer.reserveCapacity(Int(min(expected, 64 << 20)))
                buffer.append(chunk)
                data = buffer
            }
        } else {
            data?.append(chunk)
        }
        transfer.acknowledge(chunk.count)
    }

    var body: RequestCompletion.Body { .memory(data) }
    var cancelledBody: RequestCompletion.Body { .memory(data) }
    func finalize(response: LazyHTTPResponse?) -> RequestCompletion.Body { .memory(data) }
    func discard() {}
    var kind: BodyKind { .memory }
}
