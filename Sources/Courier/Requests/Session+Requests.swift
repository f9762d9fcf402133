import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Modifies the `URLRequest` Courier built, before adapters run.
public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

extension Session {
    /// Makes a request to `url` (relative paths resolve against ``baseURL``).
    ///
    /// Nothing is sent until a response handler is added, `resume()` is called, or an async
    /// serializer is awaited. An invalid URL arrives as an error in the response, never as a throw here.
    ///
    /// An `interceptor` given here composes with the session's: before every attempt the
    /// session's adapters run first, then this one's, each on the previous one's result; after a
    /// failure the session's retriers are asked first, then this one's, and the first that
    /// retries (or gives up with its own error) decides. The same holds for `upload`, `download`
    /// and `streamRequest`.
    ///
    /// ```swift
    /// let signed = try await api.request("orders", interceptor: SigningAdapter(key: key))
    ///     .validate()
    ///     .serializingDecodable([Order].self).value
    /// ```
    public func request(
        _ url: any URLConvertible, method: HTTPMethod = .get, headers: HTTPHeaders? = nil,
        timeout: TimeInterval? = nil, interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let source = RequestSource(timeout: timeout, interceptor: interceptor, headers: headers) { session in
            try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: requestModifier)
        }
        return makeDataRequest(source)
    }

    /// Makes a request with `parameters` encoded by `encoder`: by default into the query for
    /// GET/HEAD/DELETE and a URL-encoded form body otherwise; `.json` for a JSON body.
    public func request<Parameters: Encodable & Sendable>(
        _ url: any URLConvertible, method: HTTPMethod = .get, parameters: Parameters?,
        encoder: any ParameterEncoder = .urlEncodedForm, headers: HTTPHeaders? = nil, timeout: TimeInterval? = nil,
        interceptor: (any RequestInterceptor)? = nil, requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        let source = RequestSource(timeout: timeout, interceptor: interceptor, headers: headers) { session in
            // The encoder sees only the request's own headers: the body's type (JSON, form) wins
            // over a session default, an explicit request header over both.
            var encoded = try session.makeURLRequest(url, method: method, headers: headers, timeout: timeout, modifier: nil) { request in
                try encoder.encode(parameters, into: request)
            }
            try requestModifier?(&encoded)
            return encoded
        }
        return makeDataRequest(source)
    }

    /// Makes a request from any `URLRequestConvertible` (a `URLRequest`, a router enum, ...).
    public func request(_ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil) -> DataRequest {
        makeDataRequest(.convertible(convertible, interceptor: interceptor))
    }

    private func makeDataRequest(_ source: RequestSource) -> DataRequest {
        let request = DataRequest(session: self, source: source)
        didCreate(request)
        return request
    }

    func didCreate(_ request: some Request) {
        register(request)
        if let credential = configuration.credential { request.authenticate(with: credential) }
        guard !monitor.isEmpty else { return }
        // On the request's executor, like every later event, so monitors see them in order.
        request.engineAccess.perform { [monitor] _ in monitor { $0.requestDidCreate(request) } }
    }

    /// Builds the first `URLRequest`: URL resolved, session headers first, request headers on top.
    ///
    /// `body`, when given, runs on the request with only its own headers, before the session's
    /// fill in what is still missing: a header the body sets (its `Content-Type`) wins over a
    /// session default, and a header the caller passed wins over both.
    func makeURLRequest(
        _ url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, timeout: TimeInterval?,
        modifier: RequestModifier?, body: ((URLRequest) throws -> URLRequest)? = nil
    ) throws -> URLRequest {
        var request = URLRequest(url: try resolve(url.asURL()))
        request.method = method
        if let body {
            if let headers { request.headers = headers }
            request = try body(request)
            request.headers = self.headers.merging(request.headers)
        } else if let headers {
            request.headers = self.headers.merging(headers)
        } else {
            request.allHTTPHeaderFields = headerFields
        }
        if let timeout { request.timeoutInterval = timeout }
        try modifier?(&request)
        return request
    }
}
