import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An awaitable response of a ``DataResponseRequest``: `.value`, `.result` or `.response`.
/// Made by `serializingData()` and friends.
///
/// Awaiting starts the request; awaiting again (or from several tasks) gives the same response.
/// Cancelling an awaiting `Task` cancels the request unless `automaticallyCancelling` was `false`.
public struct DataTask<Value: Sendable>: Sendable {
    private let awaitable: AwaitableResponse<DataResponse<Value, CourierError>>

    init(_ awaitable: AwaitableResponse<DataResponse<Value, CourierError>>) {
        self.awaitable = awaitable
    }

    /// The whole response: request, HTTP response, body, metrics and result.
    public var response: DataResponse<Value, CourierError> {
        get async { await awaitable.response() }
    }

    /// The value or the error.
    public var result: Result<Value, CourierError> {
        get async { await response.result }
    }

    /// The value; throws the ``CourierError`` on failure.
    public var value: Value {
        get async throws(CourierError) { try await result.get() }
    }

    /// Cancels the request.
    public func cancel() { awaitable.cancel() }

    /// Starts the request without waiting for it.
    public func resume() { awaitable.start() }
}

/// An awaitable response of a ``DownloadRequest``: `.value`, `.result` or `.response`.
public struct DownloadTask<Value: Sendable>: Sendable {
    private let awaitable: AwaitableResponse<DownloadResponse<Value, CourierError>>

    init(_ awaitable: AwaitableResponse<DownloadResponse<Value, CourierError>>) {
        self.awaitable = awaitable
    }

    /// The whole response: request, HTTP response, file URL, metrics and result.
    public var response: DownloadResponse<Value, CourierError> {
        get async { await awaitable.response() }
    }

    /// The value or the error.
    public var result: Result<Value, CourierError> {
        get async { await response.result }
    }

    /// The value; throws the ``CourierError`` on failure.
    public var value: Value {
        get async throws(CourierError) { try await result.get() }
    }

    /// Cancels the request.
    public func cancel() { awaitable.cancel() }

    /// Starts the request without waiting for it.
    public func resume() { awaitable.start() }
}

/// What ``DataTask`` and ``DownloadTask`` share: one response for any number of waiters, the
/// first of which starts the request, and cancellation bridged from the awaiting Swift task.
struct AwaitableResponse<Response: Sendable>: Sendable {
    private let request: any Request
    private let automaticallyCancelling: Bool
    private let box: ResponseBox<Response>

    init(request: any Request, automaticallyCancelling: Bool,
         start: @escaping @Sendable (@escaping @Sendable (Response) -> Void) -> Void) {
        self.request = request
        self.automaticallyCancelling = automaticallyCancelling
        self.box = ResponseBox(executor: request._shell.executor, start: start)
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

/// Holds one response for any number of waiters; the first waiter (or ``startIfNeeded()``) starts the work.
///
/// The waiter that starts the request also hosts its drains (``RequestExecutor/awaitWork(unlessDone:)``): the
/// transport's events are handled on the thread that resumes it, and the response is returned
/// from there, with no further hop. Other waiters suspend until the response is fulfilled.
final class ResponseBox<Response: Sendable>: Sendable {
    private enum State {
        case idle
        case waiting([CheckedContinuation<Response, Never>])
        case done(Response)
    }

    private let state = Locked(State.idle)
    private let executor: RequestExecutor
    private let start: @Sendable (@escaping @Sendable (Response) -> Void) -> Void

    init(executor: RequestExecutor, start: @escaping @Sendable (@escaping @Sendable (Response) -> Void) -> Void) {
        self.executor = executor
        self.start = start
    }

    func value() async -> Response {
        guard claimStart() else { return await waitForFulfilment() }
        start { [self] in fulfil($0) }
        while true {
            if let response = fulfilled { return response }
            switch await executor.awaitWork(unlessDone: { fulfilled != nil }) {
            case .drain:
                executor.drainAsHost()
            case .recheck:
                continue
            case .unavailable:
                return await waitForFulfilment()
            }
        }
    }

    func startIfNeeded() {
        if claimStart() { start { [self] in fulfil($0) } }
    }

    /// Moves from idle to waiting; true for the one caller that must start the work.
    private func claimStart() -> Bool {
        state.withLock { state in
            guard case .idle = state else { return false }
            state = .waiting([])
            return true
        }
    }

    private var fulfilled: Response? {
        state.withLock { state in
            if case .done(let response) = state { response } else { nil }
        }
    }

    /// Suspends until the response is fulfilled (returns at once when it is).
    private func waitForFulfilment() async -> Response {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Response? in
                switch state {
                case .idle:
                    state = .waiting([continuation])
                    return nil
                case .waiting(let waiters):
                    state = .waiting(waiters + [continuation])
                    return nil
                case .done(let response):
                    return response
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    private func fulfil(_ response: Response) {
        let waiters = state.withLock { state -> [CheckedContinuation<Response, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(response)
            return waiters
        }
        waiters.forEach { $0.resume(returning: response) }
        // The host may be parked (the response was completed by a drain elsewhere, say a cancel).
        // `.done` is already set, so a host not yet parked sees it when it tries to park.
        executor.wakeHost()
    }
}
