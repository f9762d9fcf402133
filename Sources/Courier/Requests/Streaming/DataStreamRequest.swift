import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// A request whose body is handed to you piece by piece as it arrives, made by
/// `session.streamRequest(...)`, with backpressure: while you are busy with a chunk the transport
/// stops reading once about a megabyte is waiting, so memory stays bounded on any body size.
/// URLSession cannot stop reading: on that transport a consumer that falls more than
/// ``SessionConfiguration/maximumStreamBacklog`` (16 MiB) behind fails the stream with
/// `.responseTooLarge` instead.
///
/// Validators run when the response head arrives; a stream is not retried once bytes reached you.
public actor DataStreamRequest: Request {
    /// The request's identity.
    public nonisolated let id: UUID
    /// The session that made it.
    public nonisolated let session: Session
    /// Courier's thread-safe part of the request.
    package nonisolated let shell: RequestShell
    /// Courier's machinery, isolated to the request.
    package let engine: RequestEngine
    nonisolated let buffer: StreamBuffer

    /// The request's own serial executor, which transport events also enter.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { shell.executor.asUnownedSerialExecutor() }

    init(session: Session, source: RequestSource) {
        let buffer = StreamBuffer()
        (id, shell, engine) = RequestShell.make(session: session, source: source, sink: StreamBodySink(buffer: buffer))
        self.buffer = buffer
        self.session = session
        engine.addResponseHandler { [buffer] completion in buffer.finish(completion) }
        shell.shared.withHooks { $0.cancelRequested.append { [buffer] in buffer.requestCancel() } }
        engine.owner = self
    }

    /// The body as an asynchronous sequence of chunks; iterating it starts the request. A stream has
    /// one consumer: a second one fails at once.
    ///
    /// Leaving the loop before the body's end cancels the request: `break`, `return`, a thrown
    /// error, or cancelling the iterating `Task`. Pass `automaticallyCancelling: false` to keep
    /// the transfer running instead (it then waits, paused by backpressure, until you `cancel()`
    /// the request yourself).
    ///
    /// ```swift
    /// let request = session.streamRequest("events")
    /// for try await chunk in request.streamingData() {
    ///     if chunk.contains(0x04) { break }        // the request is cancelled here
    /// }
    /// ```
    ///
    /// Calling `cancel()` while you read (in the loop, or in a `responseStream` handler) ends the
    /// stream with a `.cancelled` error even if every byte had already arrived: no chunk is
    /// handed out after `cancel()` returns.
    public nonisolated func streamingData(automaticallyCancelling: Bool = true) -> DataStream {
        DataStream(request: self, automaticallyCancelling: automaticallyCancelling)
    }

    /// Calls `handler` on `queue` (the session's callback queue by default) with each chunk, then
    /// once with the end. The next chunk is not read until `handler` returns.
    @discardableResult
    public nonisolated func responseStream(queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (DataStreamEvent) -> Void) -> Self {
        deliverEvents(of: streamingData(automaticallyCancelling: false), queue: queue, value: { .chunk($0) }, end: { .complete($0) }, to: handler)
    }

    /// Reads `values` in a task of its own and hands each one, then the end, to `handler` on
    /// `queue`, waiting for `handler` to return before reading on (backpressure).
    nonisolated func deliverEvents<Values: AsyncSequence & Sendable, Event: Sendable>(
        of values: Values, queue: DispatchQueue?, value: @escaping @Sendable (Values.Element) -> Event,
        end: @escaping @Sendable (DataStreamCompletion) -> Event, to handler: @escaping @Sendable (Event) -> Void
    ) -> Self where Values.Failure == CourierError, Values.Element: Sendable {
        let queue = queue ?? session.callbackQueue
        Task {
            var iterator = values.makeAsyncIterator()
            var failure: CourierError?
            do throws(CourierError) {
                while let element = try await iterator.next(isolation: nil) {
                    await Self.deliver(value(element), on: queue, to: handler)
                }
            } catch {
                failure = error
            }
            let completion = buffer.completion
            await Self.deliver(
                end(
                    DataStreamCompletion(
                        request: completion?.request, response: completion?.response?.httpResponse,
                        headerFields: completion?.response?.fields, metrics: completion?.metrics, error: failure ?? completion?.error)),
                on: queue, to: handler)
        }
        return self
    }

    private static func deliver<Event: Sendable>(_ event: Event, on queue: DispatchQueue, to handler: @escaping @Sendable (Event) -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                handler(event)
                continuation.resume()
            }
        }
    }
}

/// One step of a streamed response, for `responseStream`.
public enum DataStreamEvent: Sendable {
    /// The next piece of the body.
    case chunk(Data)
    /// The end: success when `error` is `nil`.
    case complete(DataStreamCompletion)
}

/// How a streamed response ended.
public struct DataStreamCompletion: Sendable {
    /// The last request sent.
    public let request: URLRequest?
    /// The response head.
    public let response: HTTPURLResponse?
    /// The response's header fields, every line in arrival order (see ``DataResponse/headerFields``).
    public let headerFields: HTTPHeaders?
    /// Timings and byte counts.
    public let metrics: TransferMetrics?
    /// The error, if the stream failed or was cancelled.
    public let error: CourierError?
    /// The trailer fields the response sent after its body, in wire order; `nil` when it sent
    /// none (and always on the URLSession transport).
    public var trailerFields: HTTPHeaders? { metrics?.trailerFields }
}

/// The chunks of a ``DataStreamRequest``'s body, in order; throws the request's ``CourierError``.
public struct DataStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data
    /// The error a stream ends with.
    public typealias Failure = CourierError

    let request: DataStreamRequest
    let automaticallyCancelling: Bool

    /// Starts the request and returns the iterator.
    public func makeAsyncIterator() -> Iterator {
        let attached = request.buffer.attachConsumer()
        if attached { request.resume() }
        return Iterator(request: request, automaticallyCancelling: automaticallyCancelling, attached: attached)
    }

    /// Takes chunks one at a time; each one taken lets the transport read more.
    public struct Iterator: AsyncIteratorProtocol {
        let request: DataStreamRequest
        let automaticallyCancelling: Bool
        let attached: Bool
        /// Cancels the request when the last copy of the iterator goes away before the end.
        private let lifetime: ConsumerLifetime?

        init(request: DataStreamRequest, automaticallyCancelling: Bool, attached: Bool) {
            self.request = request
            self.automaticallyCancelling = automaticallyCancelling
            self.attached = attached
            lifetime = attached && automaticallyCancelling ? ConsumerLifetime(request: request) : nil
        }

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws(CourierError) -> Data? {
            guard attached else {
                throw CourierError(.serializationFailed, "This stream already has a consumer; a stream can be read only once.")
            }
            let request = request
            let result: Result<Data?, CourierError>
            if automaticallyCancelling {
                result = await withTaskCancellationHandler {
                    await request.buffer.next()
                } onCancel: {
                    request.cancel()
                }
            } else {
                result = await request.buffer.next()
            }
            switch result {
            case .success(.some): break
            case .success(.none), .failure: lifetime?.reachedEnd()
            }
            return try result.get()
        }
    }
}

/// Shared by every copy of one stream iterator: when the last copy is gone before the stream
/// ended (the consumer left its loop), the request is cancelled.
final class ConsumerLifetime: Sendable {
    private let request: DataStreamRequest
    private let ended = Locked(false)

    init(request: DataStreamRequest) {
        self.request = request
    }

    func reachedEnd() {
        ended.withLock { $0 = true }
    }

    deinit {
        if !ended.withLock({ $0 }) { request.cancel() }
    }
}

extension Session {
    /// Makes a streamed request: read the body as it arrives with `streamingData()` or `responseStream`.
    public func streamRequest(
        _ url: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        let source = RequestSource(timeout: timeout, interceptor: interceptor, headers: headers) { session in
            try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: requestModifier)
        }
        let request = DataStreamRequest(session: self, source: source)
        didCreate(request)
        return request
    }

    /// Makes a full-duplex streamed request: `body` is sent as it is produced while the response
    /// is read, so the response head and its first chunks can arrive before the body has ended
    /// (an echo, a chat over one HTTP/2 stream, gRPC-style streaming).
    ///
    /// ```swift
    /// let (pieces, writer) = AsyncStream.makeStream(of: Data.self)
    /// let exchange = session.streamRequest("chat", method: .post, body: pieces)
    /// var replies = exchange.streamingData().makeAsyncIterator()
    /// for line in ["hello\n", "how are you?\n"] {
    ///     writer.yield(Data(line.utf8))
    ///     print(try await replies.next() ?? Data())   // the server's answer to this piece
    /// }
    /// writer.finish()
    /// while let rest = try await replies.next() { print(rest) }
    /// ```
    ///
    /// Both directions keep their backpressure: Courier takes the next element of `body` only when
    /// its 256 KiB send buffer has room (a sequence you yield to ahead of time, such as an
    /// `AsyncStream`, holds what you yield), and stops reading the response while the stream's
    /// consumer is behind (``SessionConfiguration/maximumStreamBacklog``). Cancelling the request,
    /// or dropping its `streamingData()` sequence, ends both bodies; a `body` that throws fails the
    /// stream with `.bodyStreamFailed`. `length`, when given, is sent as `Content-Length` and must be
    /// exact; otherwise the body goes chunked over HTTP/1.1 (or as HTTP/2 DATA frames). `trailers`,
    /// when given, runs once `body` ended and its fields follow the body (HTTP/1.1 only, as
    /// ``Session/upload(_:to:method:headers:timeout:interceptor:trailers:)``).
    ///
    /// Over HTTP/1.1 the server must answer while it reads (many answer only once the request
    /// ended: then the head arrives after the body, as with any upload). Never retried or
    /// redirected with its body, which cannot be produced twice. Curl transport only: the
    /// URLSession transport fails the request with `.invalidConfiguration` before anything is sent.
    public func streamRequest<Body: AsyncSequence & Sendable>(
        _ url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil, body: Body,
        length: Int64? = nil, timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil,
        trailers: (@Sendable () async throws -> HTTPHeaders)? = nil
    ) -> DataStreamRequest where Body.Element: Sequence<UInt8> {
        var source = RequestSource(
            timeout: timeout, interceptor: interceptor, upload: .stream(BodyStream(body, length: length, trailers: trailers)),
            headers: headers
        ) { session in
            var request = try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: nil)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/octet-stream", forHTTPHeaderField: "Content-Type")
            }
            return request
        }
        source.fullDuplex = true
        let request = DataStreamRequest(session: self, source: source)
        didCreate(request)
        return request
    }

    /// Makes a streamed request that sends `body` as it is produced (as `upload(_:length:to:...)`
    /// does with an `AsyncSequence`): both bodies streamed, for CourierOpenAPI's transport.
    package func streamRequest<Body: AsyncSequence & Sendable>(
        _ url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, uploading body: Body, length: Int64?
    ) -> DataStreamRequest where Body.Element: Sequence<UInt8> {
        let source = RequestSource(upload: .stream(BodyStream(body, length: length)), headers: headers) { session in
            try session.makeURLRequest(url, method: method, headers: headers, timeout: nil, modifier: nil)
        }
        let request = DataStreamRequest(session: self, source: source)
        didCreate(request)
        return request
    }

    /// Makes a streamed request from any `URLRequestConvertible`.
    public func streamRequest(_ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil) -> DataStreamRequest {
        let request = DataStreamRequest(session: self, source: .convertible(convertible, interceptor: interceptor))
        didCreate(request)
        return request
    }
}

extension DataStreamRequest: RequestInternals {}
