import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// What every Courier request is: an actor with an identity, a lifecycle you can control, and
/// chainable hooks and validators.
///
/// The chainable methods are `nonisolated` and return at once; what they register is applied on
/// the request's serial executor in call order, before anything the network does afterwards.
///
/// Courier's request types (``DataRequest``, ``UploadRequest``, ``DownloadRequest``,
/// ``DataStreamRequest``) adopt it; it is not meant to be adopted by other types, which would have
/// no machinery behind the methods it provides.
public protocol Request: Actor {
    /// The request's identity, stable across retries.
    nonisolated var id: UUID { get }
    /// The session that made the request.
    nonisolated var session: Session { get }
}

/// What Courier's own request types have behind ``Request``: the thread-safe shell and the engine
/// isolated to the request. Package-only, so none of it shows in users' code completion.
package protocol RequestInternals: Request {
    /// The thread-safe part of the request (executor, hooks, progress).
    nonisolated var shell: RequestShell { get }
    /// The machinery behind the request, isolated to it.
    var engine: RequestEngine { get }
}

extension RequestInternals {
    /// Runs `work` with the engine; only ever called from the request's own executor.
    nonisolated func runOnExecutor(_ work: @Sendable (RequestEngine) -> Void) {
        assumeIsolated { work($0.engine) }
    }
}

/// The thread-safe part of a request: its serial executor, hooks and progress channels.
package final class RequestShell: Sendable {
    let executor: RequestExecutor
    let shared = RequestSharedState()

    init() {
        executor = RequestExecutor()
    }

    /// Creates the shell and engine for a new request.
    static func make(session: Session, source: RequestSource, sink: any ResponseBodySink) -> (UUID, RequestShell, RequestEngine) {
        let id = RequestIdentifiers.next()
        let shell = RequestShell()
        if case .stream(let body)? = source.upload {
            // Stopped on the cancelling thread, without waiting for the cancel to run: on URLSession
            // the body is read on FoundationNetworking's queue, which every URLSession of the
            // process shares, and a read waiting on the body's source would hold that queue (and
            // what the cancel itself waits for) until the source yields. The cancel is queued
            // first, so the failure the stop causes in the transport comes after it.
            shell.shared.withHooks { $0.cancelQueued.append { body.stop() } }
        }
        let engine = RequestEngine(id: id, session: session, source: source, shared: shell.shared, sink: sink)
        return (id, shell, engine)
    }
}

extension Request {
    /// Where the request is in its life.
    public var state: RequestState { withIsolatedEngine { $0.lifecycle.publicState } }
    /// How many times the request has been retried.
    public var retryCount: Int { withIsolatedEngine { $0.record.retryCount } }
    /// The last `URLRequest` sent (after adapters and redirects).
    public var lastRequest: URLRequest? { withIsolatedEngine { $0.record.request } }
    /// The last response head received.
    public var response: HTTPURLResponse? { withIsolatedEngine { $0.record.response?.httpResponse } }
    /// The last response head's header fields, every line in arrival order (see
    /// ``DataResponse/headerFields``); available as soon as the head arrives, so a stream can read
    /// them before its body ends.
    public var headerFields: HTTPHeaders? { withIsolatedEngine { $0.record.response?.fields } }
    /// The field lines of the last final head received, a redirect's included, for a monitor
    /// printing the head it was just told about (the `courier` tool).
    package var latestHeadFields: HTTPHeaders? { withIsolatedEngine { $0.record.latestHead?.fields } }
    /// Timings and byte counts of the transfer so far; `nil` before the first exchange starts.
    ///
    /// While an exchange is in flight this is a partial view: ``TransferMetrics/start``, the bytes
    /// sent and received so far, ``TransferMetrics/total`` up to now, and, once the response head
    /// has arrived, ``TransferMetrics/timeToFirstByte`` and ``TransferMetrics/httpVersion``. The
    /// phase timings, the remote address and the TLS details arrive with the transport's figures
    /// when the exchange ends.
    ///
    /// ```swift
    /// let download = session.download(url)
    /// download.onDownloadProgress { _ in
    ///     Task { print(await download.metrics?.bytesReceived ?? 0) }   // grows during the transfer
    /// }
    /// ```
    public var metrics: TransferMetrics? { withIsolatedEngine { $0.currentMetrics } }
    /// The trailer fields the response sent after its body (HTTP/1.1 chunked or HTTP/2), in wire
    /// order; `nil` until the request finished, and when the server sent none. For a stream,
    /// read it once the stream ended. The URLSession transport never has any (FoundationNetworking
    /// drops them).
    public var trailerFields: HTTPHeaders? { withIsolatedEngine { $0.lifecycle.completion?.metrics?.trailerFields } }
    /// The error the request finished with, if it has finished with one.
    public var error: CourierError? { withIsolatedEngine { $0.lifecycle.completion?.error } }

    /// Courier's machinery behind this request.
    nonisolated var internals: any RequestInternals {
        guard let internals = self as? any RequestInternals else {
            preconditionFailure("Courier: only Courier's request types adopt `Request`; \(Self.self) has no machinery behind it")
        }
        return internals
    }

    /// Access to the engine from any thread, through the request's executor.
    nonisolated var engineAccess: RequestEngineAccess { RequestEngineAccess(request: internals) }

    /// Reads the engine from code isolated to this request.
    func withIsolatedEngine<T: Sendable>(_ body: @Sendable (RequestEngine) -> T) -> T {
        internals.assumeIsolated { body($0.engine) }
    }
}

extension Request {
    /// The monitors added to this request alone (``eventMonitors(_:)``), for Courier's
    /// integration targets (a session-wide logger steps aside for a request's own).
    package var ownEventMonitors: [any EventMonitor] { withIsolatedEngine { $0.requestMonitors } }
}

/// A handle on a request's machinery usable from any thread.
struct RequestEngineAccess: Sendable {
    let request: any RequestInternals

    /// The request's serial executor.
    var executor: RequestExecutor { request.shell.executor }
    /// The request's hooks and progress channels.
    var shared: RequestSharedState { request.shell.shared }

    /// Runs `work` on the request's executor, isolated to the request, after everything already
    /// queued; on the calling thread when the executor is idle.
    func perform(_ work: @escaping @Sendable (RequestEngine) -> Void) {
        let request = request
        request.shell.executor.execute(inline: true) { request.runOnExecutor(work) }
    }

    /// Runs `work` on the request's executor, isolated to the request, after everything already
    /// queued; never on the calling thread, even when the executor is idle: for calls from threads
    /// the request must not run on (a transport's, the HTTP cache's queue).
    func schedule(_ work: @escaping @Sendable (RequestEngine) -> Void) {
        let request = request
        request.shell.executor.execute(inline: false) { request.runOnExecutor(work) }
    }
}

/// The part of a request that any thread may touch: hooks and both progress channels, behind one lock.
final class RequestSharedState: Sendable {
    private struct Fields {
        var hooks = RequestHooks()
        var download = ProgressState()
        var upload = ProgressState()
    }

    private let fields = Locked(Fields())

    /// The response body's progress.
    var downloadProgress: ProgressChannel { ProgressChannel(owner: self, direction: .download) }
    /// The request body's progress.
    var uploadProgress: ProgressChannel { ProgressChannel(owner: self, direction: .upload) }

    /// Runs `body` with the hooks, under the lock.
    func withHooks<T>(_ body: (inout RequestHooks) -> T) -> T {
        fields.withLock { body(&$0.hooks) }
    }

    /// Runs `body` with one direction's progress state, under the lock.
    func withProgress<T>(_ direction: ProgressDirection, _ body: (inout ProgressState) -> T) -> T {
        fields.withLock { fields in
            switch direction {
            case .download: body(&fields.download)
            case .upload: body(&fields.upload)
            }
        }
    }
}

/// Lifecycle hooks, called on the request's executor just before the change they announce.
struct RequestHooks {
    var willResume: [@Sendable () -> Void] = []
    var willSuspend: [@Sendable () -> Void] = []
    var willCancel: [@Sendable () -> Void] = []
    /// Called at once on the thread that calls `cancel()`, before the cancel reaches the
    /// executor: a stream stops handing out chunks from that moment.
    var cancelRequested: [@Sendable () -> Void] = []
    /// Called on the thread that calls `cancel()` once the cancel is queued on (or done by) the
    /// executor: what they cause in the transport reaches the executor after the cancel.
    var cancelQueued: [@Sendable () -> Void] = []
}

extension Request {
    // MARK: State control

    /// Starts the request, or continues it after ``suspend()``. Idempotent.
    @discardableResult
    public nonisolated func resume() -> Self {
        engineAccess.perform { $0.resume() }
        return self
    }

    /// Pauses the transfer without losing or repeating bytes. Idempotent.
    @discardableResult
    public nonisolated func suspend() -> Self {
        engineAccess.perform { $0.suspend() }
        return self
    }

    /// Cancels the request: the transfer stops and handlers receive a `.cancelled` error. Idempotent.
    @discardableResult
    public nonisolated func cancel() -> Self {
        engineAccess.shared.withHooks { $0.cancelRequested }.forEach { $0() }
        engineAccess.perform { $0.cancel() }
        engineAccess.shared.withHooks { $0.cancelQueued }.forEach { $0() }
        return self
    }

    // MARK: Lifecycle hooks

    /// Calls `hook` just before the request starts or continues, on the request's executor.
    @discardableResult
    public nonisolated func onWillResume(_ hook: @escaping @Sendable (Self) -> Void) -> Self {
        engineAccess.shared.withHooks { $0.willResume.append { [self] in hook(self) } }
        return self
    }

    /// Calls `hook` just before the request is suspended, on the request's executor.
    @discardableResult
    public nonisolated func onWillSuspend(_ hook: @escaping @Sendable (Self) -> Void) -> Self {
        engineAccess.shared.withHooks { $0.willSuspend.append { [self] in hook(self) } }
        return self
    }

    /// Calls `hook` just before the request is cancelled, on the request's executor.
    @discardableResult
    public nonisolated func onWillCancel(_ hook: @escaping @Sendable (Self) -> Void) -> Self {
        engineAccess.shared.withHooks { $0.willCancel.append { [self] in hook(self) } }
        return self
    }

    /// Calls `handler` on `queue` (the session's callback queue by default) as the response body arrives.
    /// Values never go backwards and end at exactly 1.0 on success.
    @discardableResult
    public nonisolated func onDownloadProgress(
        queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (TransferProgress) -> Void
    ) -> Self {
        engineAccess.shared.downloadProgress.addHook(queue: queue ?? session.callbackQueue, handler)
        return self
    }

    /// Calls `handler` on `queue` (the session's callback queue by default) as the request body is sent.
    @discardableResult
    public nonisolated func onUploadProgress(
        queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (TransferProgress) -> Void
    ) -> Self {
        engineAccess.shared.uploadProgress.addHook(queue: queue ?? session.callbackQueue, handler)
        return self
    }

    /// Download progress as a stream: the current value first, then every change, ending with the
    /// request. Asking for the stream starts the request.
    public nonisolated var downloadProgress: AsyncStream<TransferProgress> {
        let stream = engineAccess.shared.downloadProgress.makeStream()
        resume()
        return stream
    }

    /// Upload progress as a stream: the current value first, then every change, ending with the
    /// request. Asking for the stream starts the request.
    public nonisolated var uploadProgress: AsyncStream<TransferProgress> {
        let stream = engineAccess.shared.uploadProgress.makeStream()
        resume()
        return stream
    }
}

/// Request identifiers: a random per-process prefix and a counter, shaped as a version 4 UUID.
///
/// `UUID()` reads `/dev/urandom` on Linux (three system calls) every time: too much for each request.
enum RequestIdentifiers {
    private static let prefix: (UInt64, UInt32) = {
        var generator = SystemRandomNumberGenerator()
        return (generator.next(), UInt32(truncatingIfNeeded: generator.next() as UInt64))
    }()
    private static let counter = Atomic<UInt32>(0)

    static func next() -> UUID {
        let count = counter.wrappingAdd(1, ordering: .relaxed).newValue
        let (high, low) = prefix
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { bytes in
            for index in 0..<8 { bytes[index] = UInt8(truncatingIfNeeded: high >> (UInt64(index) * 8)) }
            for index in 0..<4 { bytes[8 + index] = UInt8(truncatingIfNeeded: low >> (UInt32(index) * 8)) }
            for index in 0..<4 { bytes[12 + index] = UInt8(truncatingIfNeeded: count >> (UInt32(index) * 8)) }
            bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
            bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 4122 variant
        }
        return UUID(uuid: uuid)
    }
}
