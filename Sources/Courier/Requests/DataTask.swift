import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// An awaitable response of a request: `.value`, `.result` or `.response`. Made by
/// `serializingData()` and friends, as a ``DataTask`` or a ``DownloadTask``.
///
/// Awaiting starts the request; awaiting again (or from several tasks) gives the same response.
/// Cancelling an awaiting `Task` cancels the request unless `automaticallyCancelling` was `false`.
public struct ResponseTask<Response: SerializedResponse>: Sendable {
    /// Where the response comes from: a request, or another task's response transformed.
    private enum Source: Sendable {
        case request(AwaitableResponse<Response>)
        case derived(DerivedResponse<Response>)
    }

    private let source: Source

    private init(_ awaitable: AwaitableResponse<Response>) {
        self.source = .request(awaitable)
    }

    init(derived: DerivedResponse<Response>) {
        self.source = .derived(derived)
    }

    /// The whole response: request, HTTP response, body or file, metrics and result.
    public var response: Response {
        get async {
            switch source {
            case .request(let awaitable): await awaitable.response()
            case .derived(let derived): await derived.response()
            }
        }
    }

    /// The value or the error.
    public var result: Result<Response.Success, CourierError> {
        get async { await response.result }
    }

    /// The value; throws the ``CourierError`` on failure.
    public var value: Response.Success {
        get async throws(CourierError) { try await response.result.get() }
    }

    /// Cancels the request.
    public func cancel() {
        switch source {
        case .request(let awaitable): awaitable.cancel()
        case .derived(let derived): derived.cancel()
        }
    }

    /// Starts the request without waiting for it.
    public func resume() {
        switch source {
        case .request(let awaitable): awaitable.start()
        case .derived(let derived): derived.start()
        }
    }
}

/// A response with a typed result that a ``ResponseTask`` waits for: ``DataResponse`` and
/// ``DownloadResponse``.
public protocol SerializedResponse: Sendable {
    /// The serialized value's type.
    associatedtype Success: Sendable
    /// The serialized value or the error.
    var result: Result<Success, CourierError> { get }
}

extension DataResponse: SerializedResponse where Failure == CourierError {}
extension DownloadResponse: SerializedResponse where Failure == CourierError {}

/// An awaitable response of a ``DataResponseRequest``, with its body in memory.
public typealias DataTask<Value: Sendable> = ResponseTask<DataResponse<Value, CourierError>>

/// An awaitable response of a ``DownloadRequest``, with its body in a file.
public typealias DownloadTask<Value: Sendable> = ResponseTask<DownloadResponse<Value, CourierError>>

extension ResponseTask {
    /// A task that serializes `request`'s in-memory response with `serializer`.
    init<Serializer: ResponseSerializer>(request: any Request, serializer: Serializer, automaticallyCancelling: Bool)
    where Response == DataResponse<Serializer.SerializedObject, CourierError> {
        self.init(
            AwaitableResponse(request: request, automaticallyCancelling: automaticallyCancelling) { deliver in
                SerializedHandler.addData(to: request, serializer, thenResume: true, deliver: deliver)
            })
    }

    /// A task that serializes `request`'s downloaded file with `serializer`.
    init<Serializer: ResponseSerializer>(request: any Request, serializer: Serializer, automaticallyCancelling: Bool)
    where Response == DownloadResponse<Serializer.SerializedObject, CourierError> {
        self.init(
            AwaitableResponse(request: request, automaticallyCancelling: automaticallyCancelling) { deliver in
                SerializedHandler.addDownload(to: request, serializer, thenResume: true, deliver: deliver)
            })
    }
}

/// What ``DataTask`` and ``DownloadTask`` share: one response for any number of waiters, the
/// first of which starts the request, and cancellation bridged from the awaiting Swift task.
struct AwaitableResponse<Response: Sendable>: Sendable {
    private let request: any Request
    private let automaticallyCancelling: Bool
    private let box: ResponseBox<Response>

    init(
        request: any Request, automaticallyCancelling: Bool,
        start: @escaping @Sendable (@escaping @Sendable (Response) -> Void) -> Void
    ) {
        self.request = request
        self.automaticallyCancelling = automaticallyCancelling
        self.box = ResponseBox(executor: request.internals.shell.executor, start: start)
    }

    func response() async -> Response {
        guard automaticallyCancelling else { return await box.value() }
        let request = request
        return await withTaskCancellationHandler {
            await box.value()
        } onCancel: {
            request.cancel()
        }
    }

    func cancel() { request.cancel() }

    func start() { box.startIfNeeded() }
}

/// Where a ``ResponseBox`` is: not started, started (with the tasks waiting for it), or done.
///
/// Not generic: the box's hot path (claiming the start, checking for the response between drains)
/// then needs no generic metadata at run time. The response itself is in the box's slot.
private enum ResponseBoxPhase {
    case idle
    case waiting([CheckedContinuation<Void, Never>])
    case done
}

/// Holds one response for any number of waiters; the first waiter (or ``startIfNeeded()``) starts the work.
///
/// The waiter that starts the request also hosts its drains (``RequestExecutor/awaitWork(unlessDone:)``): the
/// transport's events are handled on the thread that resumes it, and the response is returned
/// from there, with no further hop. Other waiters suspend until the response is fulfilled.
final class ResponseBox<Response: Sendable>: Sendable {
    private let phase = Locked(ResponseBoxPhase.idle)
    /// The response: written once, under the phase's lock as it moves to `.done`, and read only
    /// after `.done` was seen.
    private let slot = Locked<Response?>(nil)
    private let executor: RequestExecutor
    private let start: @Sendable (@escaping @Sendable (Response) -> Void) -> Void

    init(executor: RequestExecutor, start: @escaping @Sendable (@escaping @Sendable (Response) -> Void) -> Void) {
        self.executor = executor
        self.start = start
    }

    func value() async -> Response {
        guard claimStart() else { return await waitForFulfilment() }
        start { [self] in fulfil($0) }
        guard FastPaths.isOn(.host) else { return await waitForFulfilment() }
        while !isDone {
            switch await executor.awaitWork(unlessDone: { isDone }) {
            case .drain:
                executor.drainAsHost()
            case .recheck:
                continue
            case .unavailable:
                return await waitForFulfilment()
            }
        }
        return response
    }

    func startIfNeeded() {
        if claimStart() { start { [self] in fulfil($0) } }
    }

    /// Moves from idle to waiting; true for the one caller that must start the work.
    private func claimStart() -> Bool {
        phase.withLock { phase in
            guard case .idle = phase else { return false }
            phase = .waiting([])
            return true
        }
    }

    private var isDone: Bool {
        phase.withLock { phase in
            if case .done = phase { true } else { false }
        }
    }

    /// The response, once ``isDone``.
    private var response: Response {
        guard let response = slot.withLock({ $0 }) else {
            preconditionFailure("Courier: a response box was read before it was fulfilled")
        }
        return response
    }

    /// Suspends until the response is fulfilled (returns at once when it is).
    private func waitForFulfilment() async -> Response {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = phase.withLock { phase -> Bool in
                switch phase {
                case .idle:
                    phase = .waiting([continuation])
                    return false
                case .waiting(let waiters):
                    phase = .waiting(waiters + [continuation])
                    return false
                case .done:
                    return true
                }
            }
            if ready { continuation.resume() }
        }
        return response
    }

    private func fulfil(_ response: Response) {
        let waiters = phase.withLock { phase -> [CheckedContinuation<Void, Never>] in
            guard case .waiting(let waiters) = phase else { return [] }
            slot.withLock { $0 = response }
            phase = .done
            return waiters
        }
        waiters.forEach { $0.resume() }
        // The host may be parked (the response was completed by a drain elsewhere, say a cancel).
        // `.done` is already set, so a host not yet parked sees it when it tries to park.
        executor.wakeHost()
    }
}
