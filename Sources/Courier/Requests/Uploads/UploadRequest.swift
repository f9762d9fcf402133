import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request that sends a body from memory, a file, or a multipart form, made by `session.upload(...)`.
/// Its response arrives in memory, like a ``DataRequest``'s; track sending with `onUploadProgress`.
public actor UploadRequest: DataResponseRequest {
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

extension Session {
    /// Uploads `data` to `url` (POST by default).
    public func upload(
        _ data: Data, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest {
        makeUpload(
            .data(data), to: url, method: method, headers: headers, timeout: timeout, interceptor: interceptor,
            fallbackContentType: "application/octet-stream")
    }

    /// Uploads the file at `fileURL`, streamed from disk (never loaded whole), to `url`.
    public func upload(
        fileURL: URL, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest {
        makeUpload(
            .file(fileURL), to: url, method: method, headers: headers, timeout: timeout, interceptor: interceptor,
            fallbackContentType: "application/octet-stream")
    }

    /// Uploads the bytes of `stream` (Alamofire's `upload(_: InputStream, ...)`), whose length need
    /// not be known: sent with `Transfer-Encoding: chunked` over HTTP/1.1. Courier opens, reads
    /// and closes the stream on a thread of its own, keeping at most 256 KiB of it in memory.
    ///
    /// The body is exactly the stream's bytes, or the request fails with
    /// ``CourierError/Kind-swift.struct/bodyStreamFailed``: when reading the stream fails part way,
    /// and when the body would have to be sent again (a retry, a 307/308 redirect), which a stream
    /// cannot be. Upload progress has no total (`-1`).
    ///
    /// ```swift
    /// let stream = InputStream(url: logFile) ?? InputStream(data: Data())
    /// let receipt = try await api.upload(stream, to: "logs", method: .put).validate().serializingString().value
    /// ```
    public func upload(
        _ stream: InputStream, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest {
        makeUpload(
            .stream(BodyStream(stream)), to: url, method: method, headers: headers, timeout: timeout, interceptor: interceptor,
            fallbackContentType: "application/octet-stream")
    }

    /// Uploads the bytes an `AsyncSequence` yields (chunks of `UInt8`: `Data`, `[UInt8]`,
    /// `ArraySlice<UInt8>`, an OpenAPI `HTTPBody`...), streamed as they come: sent with
    /// `Content-Length` when `length` is given, `Transfer-Encoding: chunked` over HTTP/1.1 when not
    /// (the URLSession transport on Linux sends every streamed body chunked, and still holds it to
    /// `length`).
    ///
    /// Courier iterates the sequence on a task of its own once the transfer starts, and waits for
    /// the transport to take the bytes before it asks for more: at most 256 KiB (and one element)
    /// is held in memory, however long the body. Cancelling the request cancels that task.
    ///
    /// The body is exactly the sequence's bytes, or the request fails with
    /// ``CourierError/Kind-swift.struct/bodyStreamFailed``: when the sequence throws, when it
    /// yields more or fewer bytes than `length` (nothing past `length` is sent, and a short body is
    /// never completed), and when the body would have to be sent again (a retry, a 307/308
    /// redirect), which a sequence iterated once cannot be.
    ///
    /// ```swift
    /// let (chunks, producer) = AsyncStream.makeStream(of: Data.self)
    /// producer.yield(Data("first line\n".utf8))
    /// producer.yield(Data("second line\n".utf8))
    /// producer.finish()
    /// let receipt = try await api.upload(chunks, to: "logs", method: .put).validate().serializingString().value
    /// ```
    public func upload<Body: AsyncSequence & Sendable>(
        _ body: Body, length: Int64? = nil, to url: any URLConvertible, method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest where Body.Element: Sequence<UInt8> {
        makeUpload(
            .stream(BodyStream(body, length: length)), to: url, method: method, headers: headers, timeout: timeout,
            interceptor: interceptor, fallbackContentType: "application/octet-stream")
    }

    /// Uploads the bytes an `AsyncSequence` yields, then the trailer fields `trailers` returns
    /// (a checksum of the body, say), sent after the body's last chunk.
    ///
    /// `trailers` runs once the sequence has ended. The body is sent chunked over HTTP/1.1, the
    /// only way libcurl sends request trailers: a request that requires another HTTP version
    /// fails with `.httpVersionUnavailable`, and the URLSession transport, which cannot send them,
    /// fails with `.invalidConfiguration`, before anything is sent. A field that is not valid
    /// HTTP, or one a trailer must not carry (`Content-Length`, `Host`, …), fails the request
    /// with `.bodyStreamFailed`. Never sent twice, like any sequence body.
    ///
    /// ```swift
    /// let (chunks, producer) = AsyncStream.makeStream(of: Data.self)
    /// producer.yield(Data("first line\n".utf8))
    /// producer.yield(Data("second line\n".utf8))
    /// producer.finish()
    /// let receipt = try await api.upload(chunks, to: "logs", method: .put) {
    ///     ["X-Line-Count": "2"]
    /// }.validate().serializingString().value
    /// ```
    public func upload<Body: AsyncSequence & Sendable>(
        _ body: Body, to url: any URLConvertible, method: HTTPMethod = .post, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil,
        trailers: @escaping @Sendable () async throws -> HTTPHeaders
    ) -> UploadRequest where Body.Element: Sequence<UInt8> {
        makeUpload(
            .stream(BodyStream(body, length: nil, trailers: trailers)), to: url, method: method, headers: headers,
            timeout: timeout, interceptor: interceptor, fallbackContentType: "application/octet-stream")
    }

    /// Uploads a multipart form built by `build` (RFC 7578). Forms larger than
    /// ``MultipartFormData/encodingMemoryThreshold`` are encoded to a temporary file first, which
    /// is removed whatever the outcome; file parts are always streamed.
    public func upload(
        multipartFormData build: (MultipartFormData) -> Void, to url: any URLConvertible,
        method: HTTPMethod = .post, headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest {
        let form = MultipartFormData()
        build(form)
        return upload(multipartFormData: form, to: url, method: method, headers: headers, timeout: timeout, interceptor: interceptor)
    }

    /// Uploads a multipart form.
    ///
    /// The form's `multipart/form-data; boundary=…` type wins over a session's default
    /// `Content-Type`; a `Content-Type` passed in `headers` wins over both.
    public func upload(
        multipartFormData form: MultipartFormData, to url: any URLConvertible,
        method: HTTPMethod = .post, headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil,
        interceptor: (any RequestInterceptor)? = nil
    ) -> UploadRequest {
        makeUpload(
            .multipart(form), to: url, method: method, headers: headers, timeout: timeout, interceptor: interceptor,
            bodyContentType: form.contentType)
    }

    /// `bodyContentType` is the body's own type (it wins over a session default); `fallbackContentType`
    /// only labels a body that has no type of its own (a session default wins over it).
    private func makeUpload(
        _ upload: UploadSource, to url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        timeout: TimeInterval?, interceptor: (any RequestInterceptor)?,
        bodyContentType: String? = nil, fallbackContentType: String? = nil
    ) -> UploadRequest {
        let source = RequestSource(timeout: timeout, interceptor: interceptor, upload: upload, headers: headers) { session in
            let labelled: ((URLRequest) throws -> URLRequest)? = bodyContentType.map { type in
                { request in
                    var request = request
                    if request.value(forHTTPHeaderField: "Content-Type") == nil { request.setValue(type, forHTTPHeaderField: "Content-Type") }
                    return request
                }
            }
            var request = try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: nil, body: labelled)
            if let fallbackContentType, request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue(fallbackContentType, forHTTPHeaderField: "Content-Type")
            }
            return request
        }
        let request = UploadRequest(session: self, source: source)
        didCreate(request)
        return request
    }
}

extension UploadRequest: RequestInternals {}
