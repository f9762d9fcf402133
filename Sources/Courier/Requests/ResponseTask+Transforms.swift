import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``ResponseTask``'s response made from another task's: awaiting, cancelling and starting go
/// to the original task; the transform runs on each await.
struct DerivedResponse<Response: Sendable>: Sendable {
    let response: @Sendable () async -> Response
    let cancel: @Sendable () -> Void
    let start: @Sendable () -> Void
}

extension ResponseTask {
    /// A task whose response is this one's, reshaped by `transform`; cancelling or starting it
    /// cancels or starts this one.
    private func deriving<NewResponse: SerializedResponse>(
        _ transform: @escaping @Sendable (Response) -> NewResponse
    ) -> ResponseTask<NewResponse> {
        let base = self
        return ResponseTask<NewResponse>(
            derived: DerivedResponse(
                response: { transform(await base.response) },
                cancel: { base.cancel() }, start: { base.resume() }))
    }

    /// The same request, with its value transformed: `.value`, `.result` and `.response` all see
    /// the new value. Awaiting it starts the request, as awaiting this task would.
    ///
    /// ```swift
    /// let names = try await api.request("users").serializingDecodable([User].self).map { $0.map(\.nick) }.value
    /// ```
    public func map<Value: Sendable, NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> DataTask<NewValue> where Response == DataResponse<Value, CourierError> {
        deriving { $0.map(transform) }
    }

    /// The same request, with its value transformed by a closure that may throw: a thrown
    /// ``CourierError`` is kept, any other error becomes ``CourierError/Kind-swift.struct/serializationFailed``.
    ///
    /// ```swift
    /// let count = try await api.request("count").serializingString().tryMap { try Int($0, format: .number) }.value
    /// ```
    public func tryMap<Value: Sendable, NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws -> NewValue
    ) -> DataTask<NewValue> where Response == DataResponse<Value, CourierError> {
        deriving { $0.tryMap(transform) }
    }

    /// The same request, with its error transformed (the failure type stays ``CourierError``).
    ///
    /// ```swift
    /// let user = try await api.request("users/42").validate().serializingDecodable(User.self)
    ///     .mapError { $0.responseCode == 404 ? CourierError(.serverError, "No such user.") : $0 }.value
    /// ```
    public func mapError<Value: Sendable>(
        _ transform: @escaping @Sendable (CourierError) -> CourierError
    ) -> DataTask<Value> where Response == DataResponse<Value, CourierError> {
        deriving { $0.mapError(transform) }
    }

    /// The same download, with its value transformed.
    ///
    /// ```swift
    /// let name = try await api.download("report.csv", to: .temporary).serializingDownloadedFileURL().map(\.lastPathComponent).value
    /// ```
    public func map<Value: Sendable, NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> DownloadTask<NewValue> where Response == DownloadResponse<Value, CourierError> {
        deriving { $0.map(transform) }
    }

    /// The same download, with its value transformed by a closure that may throw (errors other
    /// than ``CourierError`` become ``CourierError/Kind-swift.struct/serializationFailed``).
    ///
    /// ```swift
    /// let text = try await download.serializingDownloadedFileURL().tryMap { try String(contentsOf: $0, encoding: .utf8) }.value
    /// ```
    public func tryMap<Value: Sendable, NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws -> NewValue
    ) -> DownloadTask<NewValue> where Response == DownloadResponse<Value, CourierError> {
        deriving { $0.tryMap(transform) }
    }

    /// The same download, with its error transformed (the failure type stays ``CourierError``).
    ///
    /// ```swift
    /// let file = try await download.serializingDownloadedFileURL().mapError { $0.isCancelled ? $0 : logged($0) }.value
    /// ```
    public func mapError<Value: Sendable>(
        _ transform: @escaping @Sendable (CourierError) -> CourierError
    ) -> DownloadTask<Value> where Response == DownloadResponse<Value, CourierError> {
        deriving { $0.mapError(transform) }
    }
}
