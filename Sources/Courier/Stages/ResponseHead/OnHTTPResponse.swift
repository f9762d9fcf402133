import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// What a ``Request/decideHTTPResponse(_:)`` decider (or an `onHTTPResponse` handler) wants done
/// with the rest of a response.
public enum ResponseDisposition: Sendable, Hashable {
    /// Take the body as usual.
    case allow
    /// Cancel the request: its outcome is a `.cancelled` error, and no body byte is stored.
    case cancel
}

extension Request {
    /// Calls `handler` with every final response's status and headers before any of its body is
    /// taken (a redirect that is followed is not a final response), on `queue` (the session's
    /// callback queue by default); the body waits until `handler` returned.
    ///
    /// ```swift
    /// let text = try await session.request("report")
    ///     .onHTTPResponse { response in print("status", response.statusCode) }
    ///     .serializingString().value
    /// ```
    @discardableResult
    public nonisolated func onHTTPResponse(
        queue: DispatchQueue? = nil,
        perform handler: @escaping @Sendable (HTTPURLResponse) -> Void
    ) -> Self {
        onHTTPResponse(queue: queue) { (response: HTTPURLResponse, decide: @Sendable (ResponseDisposition) -> Void) in
            handler(response)
            decide(.allow)
        }
    }

    /// Lets `handler` decide, from a final response's status and headers, whether the request
    /// takes the body or is cancelled, by calling its second argument once with `.allow` or
    /// `.cancel` (Alamofire's shape; ``decideHTTPResponse(_:)`` is the same returning a value).
    /// It runs on `queue` (the session's callback queue by default) before any body byte is
    /// taken, and the transfer waits for the decision (backpressure).
    ///
    /// ```swift
    /// session.request("export.csv")
    ///     .onHTTPResponse { response, decide in
    ///         decide(response.mimeType == "text/csv" ? .allow : .cancel)
    ///     }
    ///     .responseString { response in print(response.value ?? "") }
    /// ```
    @discardableResult
    public nonisolated func onHTTPResponse(
        queue: DispatchQueue? = nil,
        perform handler: @escaping @Sendable (HTTPURLResponse, _ decide: @escaping @Sendable (ResponseDisposition) -> Void) -> Void
    ) -> Self {
        let queue = queue ?? session.callbackQueue
        return decideHTTPResponse { response in
            await withCheckedContinuation { continuation in
                let once = OnceDecision(continuation)
                queue.async { handler(response) { once.resume($0) } }
            }
        }
    }

    /// Lets `decide` choose, from a final response's status and headers, whether the request takes
    /// the body (`.allow`) or is cancelled (`.cancel`); it may await (ask a cache, check free disk
    /// space) and the transfer waits for it (backpressure). It runs in a task of its own.
    ///
    /// Deciders and `onHTTPResponse` handlers run in the order added, once for every final
    /// response (again on a retry); the first `.cancel` wins: the request fails with `.cancelled`,
    /// its response head still readable, and no body byte is stored.
    ///
    /// ```swift
    /// let response = await session.request("export.csv")
    ///     .decideHTTPResponse { response in
    ///         response.expectedContentLength > 50_000_000 ? .cancel : .allow
    ///     }
    ///     .serializingData().response
    /// ```
    @discardableResult
    public nonisolated func decideHTTPResponse(_ decide: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition) -> Self {
        engineAccess.perform { $0.responseHeadHandlers.append(decide) }
        return self
    }
}

/// Resumes a decision's continuation once, whatever the handler does with its callback; a
/// handler that never calls it leaves the request waiting, as Alamofire's does.
private final class OnceDecision: Sendable {
    private let continuation: Locked<CheckedContinuation<ResponseDisposition, Never>?>

    init(_ continuation: CheckedContinuation<ResponseDisposition, Never>) {
        self.continuation = Locked(continuation)
    }

    func resume(_ disposition: ResponseDisposition) {
        let pending = continuation.withLock { pending in
            defer { pending = nil }
            return pending
        }
        pending?.resume(returning: disposition)
    }
}
