import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The outcome of a request whose body was kept in memory: the exchange and a typed result.
public struct DataResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The last request sent (after adapters and redirects), or `nil` if none could be built.
    public let request: URLRequest?
    /// The final HTTP response, if one arrived.
    public var response: HTTPURLResponse? { responseHead?.httpResponse }
    /// The final response's header fields, every line in the order it arrived: repeated names
    /// (each `Set-Cookie`) stay apart, where ``response``'s `allHeaderFields` joins them and loses
    /// the order. Over URLSession only what FoundationNetworking reports is known: one line per
    /// name, in no wire order. `nil` when no response arrived.
    public var headerFields: HTTPHeaders? { responseHead?.fields }
    let responseHead: LazyHTTPResponse?
    /// The body as received (decoded from gzip and the like).
    public let data: Data?
    /// Timings and byte counts of the transfer.
    public let metrics: TransferMetrics?
    /// The trailer fields the response sent after its body (HTTP/1.1 chunked or HTTP/2), in wire
    /// order with repeated names kept apart; `nil` when it sent none. The URLSession transport
    /// never has any: FoundationNetworking drops them.
    public var trailerFields: HTTPHeaders? { metrics?.trailerFields }
    /// How long the serializer took, in seconds.
    public let serializationDuration: TimeInterval
    /// The serialized value or the error.
    public let result: Result<Success, Failure>

    /// Creates a response.
    public init(
        request: URLRequest?, response: HTTPURLResponse?, data: Data?, metrics: TransferMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.init(
            request: request, responseHead: LazyHTTPResponse(response), data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }

    init(
        request: URLRequest?, responseHead: LazyHTTPResponse?, data: Data?, metrics: TransferMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.request = request
        self.responseHead = responseHead
        self.data = data
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// Where the response came from: the network, or the response cache (fresh, revalidated
    /// with a `304`, or stale for a reason). `.network` when no metrics were recorded.
    public var source: ResponseSource { metrics?.source ?? .network }

    /// The value on success.
    public var value: Success? { try? result.get() }

    /// The error on failure.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }

    /// Transforms the value, keeping everything else.
    public func map<NewSuccess: Sendable>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        DataResponse<NewSuccess, Failure>(
            request: request, responseHead: responseHead, data: data, metrics: metrics,
            serializationDuration: serializationDuration, result: result.map(transform))
    }
}

/// The outcome of a download: the exchange, where the file is, and a typed result.
public struct DownloadResponse<Success: Sendable, Failure: Error>: Sendable {
    /// The last request sent.
    public let request: URLRequest?
    /// The final HTTP response, if one arrived.
    public var response: HTTPURLResponse? { responseHead?.httpResponse }
    /// The final response's header fields, every line in the order it arrived: repeated names
    /// (each `Set-Cookie`) stay apart, where ``response``'s `allHeaderFields` joins them and loses
    /// the order. Over URLSession only what FoundationNetworking reports is known: one line per
    /// name, in no wire order. `nil` when no response arrived.
    public var headerFields: HTTPHeaders? { responseHead?.fields }
    let responseHead: LazyHTTPResponse?
    /// Where the downloaded file is (its final destination), if it was written.
    public let fileURL: URL?
    /// Timings and byte counts of the transfer.
    public let metrics: TransferMetrics?
    /// The trailer fields the response sent after its body (HTTP/1.1 chunked or HTTP/2), in wire
    /// order with repeated names kept apart; `nil` when it sent none. The URLSession transport
    /// never has any: FoundationNetworking drops them.
    public var trailerFields: HTTPHeaders? { metrics?.trailerFields }
    /// How long the serializer took, in seconds.
    public let serializationDuration: TimeInterval
    /// The serialized value or the error.
    public let result: Result<Success, Failure>

    /// Creates a response.
    public init(
        request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, metrics: TransferMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.init(
            request: request, responseHead: LazyHTTPResponse(response), fileURL: fileURL, metrics: metrics,
            serializationDuration: serializationDuration, result: result)
    }

    init(
        request: URLRequest?, responseHead: LazyHTTPResponse?, fileURL: URL?, metrics: TransferMetrics?,
        serializationDuration: TimeInterval, result: Result<Success, Failure>
    ) {
        self.request = request
        self.responseHead = responseHead
        self.fileURL = fileURL
        self.metrics = metrics
        self.serializationDuration = serializationDuration
        self.result = result
    }

    /// Where the response came from: the network, or the response cache (fresh, revalidated
    /// with a `304`, or stale for a reason). `.network` when no metrics were recorded.
    public var source: ResponseSource { metrics?.source ?? .network }

    /// The value on success.
    public var value: Success? { try? result.get() }

    /// The error on failure.
    public var error: Failure? {
        guard case .failure(let error) = result else { return nil }
        return error
    }
}

/// Everything a finished request knows, handed to validators, serializers and handlers.
///
/// A class of constants, not a struct: the request's machine carries it in its actions and final
/// states, and a payload this large made those generic enums copy through their value witnesses
/// (issue 38); one reference keeps them small enough to copy with a retain.
final class RequestCompletion: Sendable {
    /// Where the response body is.
    enum Body: Sendable {
        /// In memory (data, upload and stream requests).
        case memory(Data?)
        /// In a file (downloads).
        case file(URL?)
    }

    let request: URLRequest?
    let response: LazyHTTPResponse?
    let body: Body
    let metrics: TransferMetrics?
    let error: CourierError?

    init(request: URLRequest?, response: LazyHTTPResponse?, body: Body, metrics: TransferMetrics?, error: CourierError?) {
        self.request = request
        self.response = response
        self.body = body
        self.metrics = metrics
        self.error = error
    }

    /// The in-memory body, if this is not a download.
    var data: Data? {
        if case .memory(let data) = body { return data }
        return nil
    }

    /// The downloaded file, if this is a download.
    var fileURL: URL? {
        if case .file(let url) = body { return url }
        return nil
    }
}
