import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose response body is written to a file, made by `session.download(...)`.
///
/// The body streams to a Courier temporary file (memory stays bounded) and is moved to the
/// destination only on success; after a failure, a cancel or a validation error no temporary
/// file remains. By default a non-2xx status fails the download (the error carries the code).
public actor DownloadRequest: Request {
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

    init(session: Session, source: RequestSource, sink: any ResponseBodySink) {
        (id, shell, engine) = RequestShell.make(session: session, source: source, sink: sink)
        self.session = session
        engine.owner = self
        (sink as? StoreBodySink)?.request = self
    }

    /// Where the file is once the download succeeded.
    public var fileURL: URL? { engine.lifecycle.completion?.fileURL }
}

extension Session {
    /// Downloads `url` to `destination`.
    ///
    /// - Parameters:
    ///   - url: The URL, or a path resolved against the session's base URL.
    ///   - method: The HTTP method (GET by default).
    ///   - parameters: Query parameters added to the URL.
    ///   - headers: Headers added to the session's default headers for this download.
    ///   - destination: `.temporary`, `.file(url, options:)`, `.directory(url)` or `.custom`.
    ///   - resumable: Keep partial bytes in the session's ``DownloadStore`` so that a later download
    ///     of the same URL continues where this one stopped (after a cancel, a failure or a crash).
    ///   - failsOnErrorStatus: A non-2xx status fails the download instead of saving the error body.
    ///   - integrity: A length and/or SHA-256 the file must have; a mismatch is a `.resumeFailed`
    ///     error and the file is not delivered.
    ///   - timeout: The timeout in seconds (the session's when `nil`).
    ///   - interceptor: Adapters and retriers that run after the session's.
    public func download(
        _ url: any URLConvertible, method: HTTPMethod = .get, parameters: [String: String]? = nil,
        headers: HTTPHeaders? = nil, to destination: DownloadDestination = .temporary,
        resumable: Bool = false, failsOnErrorStatus: Bool = true, integrity: DownloadIntegrity? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> DownloadRequest {
        let source = RequestSource(timeout: timeout, interceptor: interceptor, headers: headers) { session in
            let request = try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: nil)
            return try URLEncodedFormParameterEncoder(destination: .queryString).encode(parameters, into: request)
        }
        return makeDownload(source, to: destination, resumable: resumable, failsOnErrorStatus: failsOnErrorStatus, integrity: integrity)
    }

    /// Downloads what a `URLRequestConvertible` describes to `destination`.
    public func download(
        _ convertible: any URLRequestConvertible, to destination: DownloadDestination = .temporary,
        resumable: Bool = false, failsOnErrorStatus: Bool = true, integrity: DownloadIntegrity? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) -> DownloadRequest {
        makeDownload(
            .convertible(convertible, interceptor: interceptor), to: destination, resumable: resumable,
            failsOnErrorStatus: failsOnErrorStatus, integrity: integrity)
    }

    private func makeDownload(
        _ source: RequestSource, to destination: DownloadDestination, resumable: Bool,
        failsOnErrorStatus: Bool, integrity: DownloadIntegrity?
    ) -> DownloadRequest {
        let temporaryDirectory = configuration.temporaryDirectory
        let request: DownloadRequest
        if resumable {
            let sink = downloadStore.makeSink(destination: destination, temporaryDirectory: temporaryDirectory, integrity: integrity)
            request = DownloadRequest(session: self, source: source, sink: sink)
        } else {
            let sink = FileBodySink(destination: destination, temporaryDirectory: temporaryDirectory, integrity: integrity)
            request = DownloadRequest(session: self, source: source, sink: sink)
        }
        if failsOnErrorStatus { request.validate(statusCode: 200..<300) }
        didCreate(request)
        return request
    }
}

extension DownloadRequest {
    // MARK: Callback style

    /// Serializes the downloaded file with `serializer` and calls `completionHandler` on `queue`.
    @discardableResult
    public nonisolated func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue? = nil, using serializer: Serializer,
        completionHandler: @escaping @Sendable (DownloadResponse<Serializer.SerializedObject, CourierError>) -> Void
    ) -> Self {
        let queue = queue ?? session.callbackQueue
        SerializedHandler.addDownload(to: self, serializer) { response in queue.async { completionHandler(response) } }
        startAfterChain()
        return self
    }

    /// Calls `completionHandler` with the downloaded file's URL.
    @discardableResult
    public nonisolated func responseURL(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<URL, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the file's bytes.
    @discardableResult
    public nonisolated func responseData(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<Data, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: DataResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the file as text.
    @discardableResult
    public nonisolated func responseString(
        queue: DispatchQueue? = nil, encoding: String.Encoding? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<String, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: StringResponseSerializer(encoding: encoding), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the file parsed as ``JSON``.
    @discardableResult
    public nonisolated func responseJSON(
        queue: DispatchQueue? = nil,
        completionHandler: @escaping @Sendable (DownloadResponse<JSON, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: JSONResponseSerializer(), completionHandler: completionHandler)
    }

    /// Calls `completionHandler` with the file decoded as `type`.
    @discardableResult
    public nonisolated func responseDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, queue: DispatchQueue? = nil, decoder: any DataDecoder = JSONDecoder(),
        completionHandler: @escaping @Sendable (DownloadResponse<T, CourierError>) -> Void
    ) -> Self {
        response(queue: queue, using: DecodableResponseSerializer<T>(decoder: decoder), completionHandler: completionHandler)
    }

    /// Adds a custom validation rule that sees the request, the response and the downloaded file.
    @discardableResult
    public nonisolated func validate(
        _ validation: @escaping @Sendable (URLRequest?, HTTPURLResponse, URL?) throws -> ValidationResult
    ) -> Self {
        validate { (input: ValidationInput) in try validation(input.request, input.response, input.fileURL) }
    }

    // MARK: async/await

    /// An awaitable serialization of the download; awaiting starts it.
    public nonisolated func serializing<Serializer: ResponseSerializer>(
        using serializer: Serializer, automaticallyCancelling: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        DownloadTask(request: self, serializer: serializer, automaticallyCancelling: automaticallyCancelling)
    }

    /// The downloaded file's final URL.
    public nonisolated func serializingDownloadedFileURL(automaticallyCancelling: Bool = true) -> DownloadTask<URL> {
        DownloadTask(request: self, serializer: URLResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The file's bytes.
    public nonisolated func serializingData(automaticallyCancelling: Bool = true) -> DownloadTask<Data> {
        DownloadTask(request: self, serializer: DataResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The file as text.
    public nonisolated func serializingString(encoding: String.Encoding? = nil, automaticallyCancelling: Bool = true) -> DownloadTask<String> {
        DownloadTask(request: self, serializer: StringResponseSerializer(encoding: encoding), automaticallyCancelling: automaticallyCancelling)
    }

    /// The file parsed as ``JSON``.
    public nonisolated func serializingJSON(automaticallyCancelling: Bool = true) -> DownloadTask<JSON> {
        DownloadTask(request: self, serializer: JSONResponseSerializer(), automaticallyCancelling: automaticallyCancelling)
    }

    /// The file decoded as `type`.
    public nonisolated func serializingDecodable<T: Decodable & Sendable>(
        _ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder(), automaticallyCancelling: Bool = true
    ) -> DownloadTask<T> {
        DownloadTask(request: self, serializer: DecodableResponseSerializer<T>(decoder: decoder), automaticallyCancelling: automaticallyCancelling)
    }
}

/// Returns the downloaded file's URL.
public struct URLResponseSerializer: ResponseSerializer {
    /// Creates the serializer.
    public init() {}

    /// Not a download: fails with `.serializationFailed`.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: CourierError?) throws -> URL {
        if let error { throw error }
        throw CourierError(.serializationFailed, "A file URL can only be serialized from a download.", url: request?.url)
    }

    /// The file's URL.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: CourierError?) throws -> URL {
        if let error { throw error }
        guard let fileURL else {
            throw CourierError(.fileSystem, "The download produced no file.", responseCode: response?.statusCode, url: request?.url)
        }
        return fileURL
    }
}

extension DownloadRequest: RequestInternals {}

extension DownloadRequest {
    /// Limits the size of this download's file to `bytes`, instead of the session's
    /// ``SessionConfiguration/maximumDownloadSize``; `nil` lifts the limit.
    ///
    /// A `Content-Length` (or `Content-Range` total) above it fails at the head; a body that grows
    /// past it stops the transfer at once. Either way the request fails with `.responseTooLarge`
    /// and the partial file is removed (a resumable download keeps what its store holds).
    @discardableResult
    public nonisolated func maximumDownloadSize(_ bytes: Int64?) -> Self {
        engineAccess.perform { $0.limitOverrides.maximumDownloadSize = .some(bytes.map { max(0, $0) }) }
        return self
    }
}
