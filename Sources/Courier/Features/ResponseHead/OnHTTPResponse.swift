import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an ``Request/onHTTPResponse(perform:)-(HTTPURLResponse)->ResponseDisposition`` handler
/// wants done with the rest of a response.
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
    /// let request = session.request("report")
    ///     .onHTTPResponse { response in print("status", response.statusCode) }
    /// ```
    @discardableResult
    public nonisolated func onHTTPResponse(queue: DispatchQueue? = nil,
                                           perform handler: @escaping @Sendable (HTTPURLResponse) -> Void) -> Self {
        onHTTPResponse(queue: queue) { (response: HTTPURLResponse) -> ResponseDisposition in
            handler(response)
            return .allow
        }
    }

    /// Lets `handler` decide, from a final response's status and headers, whether the request
    /// takes the body or is cancelled; it runs on `queue` (the session's callback queue by
    /// default) before any body byte is taken, and the transfer waits for it (backpressure).
    ///
    /// Handlers run in the order added, once for every final response (again on a retry); the
    /// first `.cancel` wins and cancels the request, which then fails with `.cancelled`.
    ///
    /// ```swift
    /// let response = await session.request("export.csv")
    ///     .onHTTPResponse { response in
    ///         response.expectedContentLength > 50_000_000 ? .cancel : .allow
    ///     }
    ///     .serializingData().response
    /// ```
    @discardableResult
    public nonisolated func onHTTPResponse(queue: DispatchQueue? = nil,
                                           perform handler: @escaping @Sendable (HTTPURLResponse) -> ResponseDisposition) -> Self {
        let queue = queue ?? session.callbackQueue
        return addResponseHeadHandler { response in
            await withCheckedContinuation { continuation in
                queue.async { continuation.resume(returning: handler(response)) }
            }
        }
    }

    /// The asynchronous form of ``onHTTPResponse(queue:perform:)-(_,(HTTPURLResponse)->ResponseDisposition)``:
    /// `handler` may await (ask a cache, check free disk space) before deciding; the transfer
    /// waits for it.
    ///
    /// ```swift
    /// let response = await session.download("video.mp4")
    ///     .onHTTPResponse { response async in
    ///         await storage.hasRoom(for: response.expectedContentLength) ? .allow : .cancel
    ///     }
    ///     .serializingDownloadedFileURL().response
    /// ```
    @discardableResult
    public nonisolated func onHTTPResponse(perform handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition) -> Self {
        addResponseHeadHandler(handler)
    }

    private nonisolated func addResponseHeadHandler(_ handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition) -> Self {
        engineAccess.perform { $0.responseHeadHandlers.append(handler) }
        return self
    }
}
