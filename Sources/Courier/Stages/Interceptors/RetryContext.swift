import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a retrier needs to know about a request's last attempt, read in one hop onto the request.
struct RetryContext: Sendable {
    /// Retries so far.
    var retryCount: Int
    /// The method a retry would send: the built request's, before redirects changed it.
    var method: HTTPMethod?
    /// The last `URLRequest` sent (after adapters and redirects).
    var lastRequest: URLRequest?
    /// The final response of the last exchange that had one.
    var response: HTTPURLResponse?

    /// The response that belongs to `error`: the last response, if `error` carries its status
    /// code. An older attempt's response (kept while a later attempt failed before answering)
    /// does not count.
    func response(for error: CourierError) -> HTTPURLResponse? {
        guard let response, let code = error.responseCode, response.statusCode == code else { return nil }
        return response
    }
}

extension Request {
    /// The request's retry-relevant state.
    func retryContext() -> RetryContext {
        let record = withIsolatedEngine { $0.record }
        return RetryContext(
            retryCount: record.retryCount, method: (record.initialRequest ?? record.request)?.method,
            lastRequest: record.request, response: record.response?.httpResponse)
    }
}
