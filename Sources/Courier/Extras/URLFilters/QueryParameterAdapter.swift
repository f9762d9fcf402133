import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adds common query parameters to every request it adapts: an app name, a version, a channel.
///
/// ```swift
/// let api = Session(baseURL: apiURL, interceptor: QueryParameterAdapter(["app": "courier", "v": "1"]))
/// api.request("feed", interceptor: QueryParameterAdapter(["debug": "1"]))   // one request only
/// ```
/// The request's existing query is kept as it is and the parameters are appended in the order
/// given, escaped like Courier's own parameters. A parameter whose name the query already has
/// is not added, so a request can override a common value and retries never duplicate one.
/// Combine it with other adapters with ``Interceptor``.
///
/// A session-level adapter applies to every request, including absolute URLs on other hosts:
/// use it at request level, or the closure form with your own rule, when that matters.
public struct QueryParameterAdapter: RequestInterceptor {
    private let parameters: @Sendable (URLRequest) -> [(name: String, value: String)]

    /// Appends `parameters`, in the order written.
    public init(_ parameters: KeyValuePairs<String, String>) {
        let fixed = parameters.map { (name: $0.key, value: $0.value) }
        self.parameters = { _ in fixed }
    }

    /// Appends `items` in order (an item without a value is sent as `name=`).
    public init(_ items: [URLQueryItem]) {
        let fixed = items.map { (name: $0.name, value: $0.value ?? "") }
        self.parameters = { _ in fixed }
    }

    /// Appends the parameters `parameters` returns for each request (a timestamp, a signature,
    /// or nothing for requests it should leave alone).
    public init(_ parameters: @escaping @Sendable (URLRequest) -> [URLQueryItem]) {
        self.parameters = { request in parameters(request).map { (name: $0.name, value: $0.value ?? "") } }
    }

    /// The request with the parameters its query does not already have appended.
    public func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        guard let url = request.url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            return request
        }
        let existing = components.percentEncodedQuery ?? ""
        var present = Set(
            existing.split(separator: "&").map { piece in
                (piece.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first).map(String.init) ?? ""
            }.compactMap { $0.removingPercentEncoding })
        var added: [(name: String, value: String)] = []
        for parameter in parameters(request) where !present.contains(parameter.name) {
            present.insert(parameter.name)
            added.append(parameter)
        }
        guard !added.isEmpty else { return request }
        let suffix = PercentEncoding.query(added)
        components.percentEncodedQuery = existing.isEmpty ? suffix : existing + "&" + suffix
        guard let adaptedURL = components.url else {
            throw CourierError(.invalidURL, "Adding query parameters to \(url.absoluteString) did not form a valid URL.", url: url)
        }
        var adapted = request
        adapted.url = adaptedURL
        return adapted
    }
}
