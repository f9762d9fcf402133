import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose response body is kept in memory, made by `session.request(...)`.
public actor DataRequest: DataResponseRequest {
    /// The request's identity.
    public nonisolated let id: UUID
    /// The session that made it.
    public nonisolated let session: Session
    /// Courier's thread-safe part of the request.
    package nonisolated let shell: RequestShell
    /// Courier's machinery, isolated to the request.
    package let engine: RequestEngine

    /// The request's own serial executor, which transport events also enter.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { shell.executor.asUnownedSerialExecutor() }

    init(session: Session, source: RequestSource) {
        (id, shell, engine) = RequestShell.make(session: session, source: source, sink: MemoryBodySink())
        self.session = session
        engine.owner = self
    }
}

/// A request whose response body arrives in memory: ``DataRequest`` and ``UploadRequest``.
/// Its response handlers and async serializers produce ``DataResponse`` values.
public protocol DataResponseRequest: Request {}

extension DataResponseRequest {
    // MARK: Callback style

    /// Serializes the response with `serializer` once the request finishes and calls
    /// `completionHandler` on `queue` (the session's callback queue by default).
    ///
    /// Adding the first handler starts the request. Handlers run once each, in the order added,
    /// also when added after the request finished.
    @discardableResult
    public nonisolated func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue? = nil, using serializer: Serializer,
        completionHandler: @escaping @Sendable (DataResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) -> Self {
        let queue = queue ?? session.callbackQueue
        SerializedHandler.addData(to: self, serializer) { response in queue.async { completionHandler(response) } }
        startAfterChain()
        return self
    }

    /// Calls `completionHandler` with the body as `Data`.
    @discardableResult
    public nonisolated func responseData(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DataResponse<Data, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: DataResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the body as text (charset: `encoding`, else the response's, else ISO-8859-1).
    @discardableResult
    public nonisolated func responseString(
        queue: DispatchQueue? = nil, encoding: String.Encoding? = nil,
        completionHandler: @escaping @Sendable (DataResponse<String, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: StringResponseSerializer(encoding: encoding), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the body parsed as ``JSON``.
    @discardableResult
    public nonisolated func responseJSON(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DataResponse<JSON, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: JSONResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the body decoded as `type`.
    @discardableResult
    public nonisolated func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, queue: DispatchQueue? = nil, decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable (DataResponse<T, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: DecodableResponseSerializer<T>(decoder: decoder), completionHandler: completionHandler)
    }

    /// Adds a custom validation rule that sees the request, the response and the body.
    @discardableResult
    public nonisolated func validate(
        _ validation: @escaping @Sendable (URLRequest?, HTTPURLResponse, Data?) throws -> ValidationResult
    ) -> Self {
        validate { (input: ValidationInput) in try validation(input.request, input.response, input.data) }
    }

    // MARK: async/await

    /// An awaitable serialization of the response; awaiting it starts the request, and cancelling
    /// the awaiting `Task` cancels the request unless `automaticallyCancelling` is `false`.
    public nonisolated func serializing<Serializer: ResponseSerializer>(
        using serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        DataTask(request: self, serializer: serializer, automaticallyCancelling: automaticallyCancelling)
    }

    // The built-in serializers make their task directly rather than through `serializing(using:)`:
    // with the serializer concrete at the call, the whole response path is specialized (see `SerializedHandler`).

    /// The body as `Data`.
    public nonisolated func serializingData(automaticallyCancelling: Bool = true) -> DataTask<Data> {
        DataTask(request: self, serializer: DataResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The body as text.
    public nonisolated func serializingString(encoding: String.Encoding? = nil, automaticallyCancelling: Bool = true) -> DataTask<String> {
        DataTask(request: self, serializer: StringResponseSerializer(encoding: encoding), automaticallyCancelling: automaticallyCancelling)
    }

    /// The body parsed as ``JSON``.
    public nonisolated func serializingJSON(automaticallyCancelling: Bool = true) -> DataTask<JSON> {
        DataTask(request: self, serializer: JSONResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The body decoded as `type`.
    public nonisolated func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder(), automaticallyCancelling: Bool = true
    ) -> DataTask<T> {
        DataTask(request: self, serializer: DecodableResponseSerializer<T>(decoder: decoder), automaticallyCancelling: automaticallyCancelling)
    }
}

/// Queues response handlers that serialize on the request's executor.
///
/// Generic over the serializer only, never over the request's type: a call with a concrete
/// serializer (as `serializingData()` makes, even from a protocol extension) is specialized, so
/// the response path does no run-time generic metadata lookups per request.
enum SerializedHandler {
    /// Queues a handler that runs `serializer` once `request` is done, wraps the result with
    /// `makeResponse` and passes it to `deliver`. With `thenResume`, the request is also started
    /// in the same step (one trip to the executor).
    static func add<Serializer: ResponseSerializer, Response: Sendable>(
        to request: any Request, _ serializer: Serializer, thenResume: Bool = false, deliver: @escaping @Sendable (Response) -> Void,
        makeResponse: @escaping @Sendable (RequestCompletion, Result<Serializer.SerializedObject, CourierError>, TimeInterval) -> Response
    ) {
        request.engineAccess.perform { engine in
            defer { if thenResume { engine.resume() } }
            engine.addResponseHandler { completion in
                let start = ContinuousClock.now
                let result = serializer.result(for: completion)
                let duration = (ContinuousClock.now - start).timeInterval
                engine.notifyMonitors { $0.request($1, didSerialize: result.map { $0 }, using: "\(Serializer.self)") }
                deliver(makeResponse(completion, result, duration))
            }
        }
    }

    /// Queues a handler that passes a ``DataResponse`` to `deliver`.
    static func addData<Serializer: ResponseSerializer>(
        to request: any Request, _ serializer: Serializer, thenResume: Bool = false,
        deliver: @escaping @Sendable (DataResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) {
        add(to: request, serializer, thenResume: thenResume, deliver: deliver) { completion, result, duration in
            DataResponse(
                request: completion.request, responseHead: completion.response, data: completion.data,
                metrics: completion.metrics, serializationDuration: duration, result: result)
        }
    }

    /// Queues a handler that passes a ``DownloadResponse`` to `deliver`.
    static func addDownload<Serializer: ResponseSerializer>(
        to request: any Request, _ serializer: Serializer, thenResume: Bool = false,
        deliver: @escaping @Sendable (DownloadResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) {
        add(to: request, serializer, thenResume: thenResume, deliver: deliver) { completion, result, duration in
            DownloadResponse(
                request: completion.request, responseHead: completion.response, fileURL: completion.fileURL,
                metrics: completion.metrics, serializationDuration: duration, result: result)
        }
    }
}

extension Request {
    /// Starts the request once the chain expression that added a response handler has finished,
    /// so every hook added in that expression is honoured; a request the caller suspended or
    /// cancelled meanwhile is left as it is (one lifecycle transition decides).
    nonisolated func startAfterChain() {
        let access = engineAccess
        DispatchQueue.global().async { access.perform { $0.startAutomatically() } }
    }
}

extension Duration {
    /// The duration in seconds.
    var timeInterval: TimeInterval {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }
}

extension DataRequest: RequestInternals {}
