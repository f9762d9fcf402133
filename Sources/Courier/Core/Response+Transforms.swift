import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// Alamofire's `map`, `tryMap`, `mapError` and `tryMapError`: each returns a response with the same
// request, HTTP response, body, metrics and serialization duration, and a transformed result.

extension DataResponse {
    /// Transforms the value with a closure that may throw; a thrown error becomes the failure.
    ///
    /// ```swift
    /// let response = await api.request("count").serializingString().response
    /// let count = response.tryMap { text in try Int(text, format: .number) }   // DataResponse<Int, CourierError>
    /// ```
    /// With a ``CourierError`` failure (the responses Courier makes) the result stays typed: see
    /// ``tryMap(_:)->DataResponse<NewSuccess,CourierError>`` in the `CourierError` extension. Otherwise the failure becomes `any Error`.
    public func tryMap<NewSuccess: Sendable>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        replacing(result.tryMapped(transform))
    }

    /// Transforms the error, keeping everything else.
    ///
    /// ```swift
    /// let response = await api.request("users/42").validate().serializingDecodable(User.self).response
    /// let mine = response.mapError { AppError.network($0) }     // DataResponse<User, AppError>
    /// ```
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        replacing(result.mapError(transform))
    }

    /// Transforms the error with a closure that may throw; what it throws becomes the failure.
    ///
    /// ```swift
    /// let response = await api.request("users/42").validate().serializingData().response
    /// let checked = response.tryMapError { error -> AppError in    // DataResponse<Data, any Error>
    ///     if error.isCancelled { throw error }
    ///     return AppError.network(error)
    /// }
    /// ```
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DataResponse<Success, any Error> {
        replacing(result.tryMappedError(transform))
    }

    func replacing<NewSuccess: Sendable, NewFailure: Error>(_ newResult: Result<NewSuccess, NewFailure>) -> DataResponse<NewSuccess, NewFailure> {
        DataResponse<NewSuccess, NewFailure>(
            request: request, responseHead: responseHead, data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: newResult)
    }
}

extension DataResponse where Failure == CourierError {
    /// Transforms the value with a closure that may throw, keeping the failure a ``CourierError``:
    /// a thrown `CourierError` is kept as it is, any other error becomes one of kind
    /// ``CourierError/Kind-swift.struct/serializationFailed`` with it as ``CourierError/underlyingError``.
    ///
    /// ```swift
    /// let response = await api.request("count").serializingString().response
    /// let count = response.tryMap { text in try Int(text, format: .number) }   // DataResponse<Int, CourierError>
    /// ```
    public func tryMap<NewSuccess: Sendable>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, CourierError> {
        replacing(
            result.flatMap { value in
                CourierError.transforming(value, with: transform, statusCode: responseHead?.statusCode, url: request?.url)
            })
    }
}

extension DownloadResponse {
    /// Transforms the value, keeping everything else.
    ///
    /// ```swift
    /// let response = await api.download("report.csv", to: .temporary).serializingDownloadedFileURL().response
    /// let name = response.map(\.lastPathComponent)              // DownloadResponse<String, CourierError>
    /// ```
    public func map<NewSuccess: Sendable>(_ transform: (Success) -> NewSuccess) -> DownloadResponse<NewSuccess, Failure> {
        replacing(result.map(transform))
    }

    /// Transforms the value with a closure that may throw; a thrown error becomes the failure
    /// (`any Error`; with a ``CourierError`` failure the result stays typed, see the `CourierError` extension).
    ///
    /// ```swift
    /// let size = response.tryMap { url in try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0 }
    /// ```
    public func tryMap<NewSuccess: Sendable>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<NewSuccess, any Error> {
        replacing(result.tryMapped(transform))
    }

    /// Transforms the error, keeping everything else.
    ///
    /// ```swift
    /// let mine = response.mapError { AppError.network($0) }     // DownloadResponse<URL, AppError>
    /// ```
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DownloadResponse<Success, NewFailure> {
        replacing(result.mapError(transform))
    }

    /// Transforms the error with a closure that may throw; what it throws becomes the failure.
    ///
    /// ```swift
    /// let checked = response.tryMapError { error -> AppError in    // DownloadResponse<URL, any Error>
    ///     if error.isCancelled { throw error }
    ///     return AppError.network(error)
    /// }
    /// ```
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DownloadResponse<Success, any Error> {
        replacing(result.tryMappedError(transform))
    }

    func replacing<NewSuccess: Sendable, NewFailure: Error>(_ newResult: Result<NewSuccess, NewFailure>) -> DownloadResponse<NewSuccess, NewFailure> {
        DownloadResponse<NewSuccess, NewFailure>(
            request: request, responseHead: responseHead, fileURL: fileURL, metrics: metrics,
            serializationDuration: serializationDuration, result: newResult)
    }
}

extension DownloadResponse where Failure == CourierError {
    /// Transforms the value with a closure that may throw, keeping the failure a ``CourierError``
    /// (other errors become ``CourierError/Kind-swift.struct/serializationFailed``, as for ``DataResponse``).
    ///
    /// ```swift
    /// let text = response.tryMap { url in try String(contentsOf: url, encoding: .utf8) }   // DownloadResponse<String, CourierError>
    /// ```
    public func tryMap<NewSuccess: Sendable>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<NewSuccess, CourierError> {
        replacing(
            result.flatMap { value in
                CourierError.transforming(value, with: transform, statusCode: responseHead?.statusCode, url: request?.url)
            })
    }
}

extension CourierError {
    /// Runs a response transform, turning what it throws into a `CourierError`.
    static func transforming<Value, NewValue>(
        _ value: Value, with transform: (Value) throws -> NewValue,
        statusCode: Int?, url: URL?
    ) -> Result<NewValue, CourierError> {
        do {
            return .success(try transform(value))
        } catch let error as CourierError {
            return .failure(error)
        } catch {
            return .failure(
                CourierError(
                    .serializationFailed, "Transforming the \(Value.self) value failed: \(error)",
                    responseCode: statusCode, underlyingError: error, url: url))
        }
    }
}

extension Result {
    /// The value transformed by a closure that may throw; the failure, or what it throws, as `any Error`.
    func tryMapped<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> Result<NewSuccess, any Error> {
        mapError { $0 as any Error }.flatMap { value in Result<NewSuccess, any Error> { try transform(value) } }
    }

    /// The failure transformed by a closure that may throw; what it throws becomes the failure.
    func tryMappedError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> Result<Success, any Error> {
        switch self {
        case .success(let value): .success(value)
        case .failure(let failure): Result<Success, any Error> { throw try transform(failure) }
        }
    }
}
