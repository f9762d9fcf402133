import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension ResponseCache: RequestFeature {
    /// Answers from a fresh stored response when the request asked for caching and one exists.
    /// A request with `Range` is never answered (the key does not include it: the stored response
    /// is the whole one), nor a request that decodes with a body stored still coded.
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward) -> RoutedTransfer? {
        // Upload bodies are not part of the key, so uploads are never served from the cache.
        guard let settings = exchange.settings[ResponseCacheSettings.self], !settings.ignoresStoredResponse,
            !exchange.hasUploadBody, !exchange.request.headers.contains("Range"), let key = exchange.initialRequest.map(ResponseCacheKey.init),
            let stored = freshEntry(for: key, maximumAge: settings.maximumAge, version: settings.version),
            !(exchange.request.automaticDecompression && CacheEntryHead.contentCoding(of: stored.head.headers) != nil)
        else { return nil }
        let replay = CacheReplayTransfer(
            stored, url: exchange.request.url, sink: sink,
            flowControlWindow: exchange.request.flowControlWindow, source: .cache)
        return RoutedTransfer(transfer: replay, origin: .local)
    }

    /// Stores a successful response for a request that asked for caching (not one it served
    /// itself), except a partial one (`206`, or any answer to a request with `Range`). A body the
    /// transport delivered still in its content coding keeps its `Content-Encoding`.
    func requestDidComplete(_ request: CompletedRequest) {
        let completion = request.completion
        guard let settings = request.settings[ResponseCacheSettings.self], request.origin?.reachedServer == true,
            !request.hasUploadBody, completion.error == nil,
            let response = completion.response?.httpResponse, (200..<300).contains(response.statusCode), response.statusCode != 206,
            request.initialRequest?.value(forHTTPHeaderField: "Range") == nil,
            let data = completion.data, let key = request.initialRequest.map(ResponseCacheKey.init)
        else { return }
        let coded = completion.response.map { !$0.head.bodyIsDecoded && CacheEntryHead.contentCoding(of: $0.head.headers) != nil } ?? false
        let headers = HTTPHeaders(
            response.allHeaderFields.compactMap { name, value in
                (name as? String).map { HTTPHeader(name: $0, value: "\(value)") }
            })
        storage.store(
            CachedResponse(
                statusCode: response.statusCode, headers: headers, data: data,
                storedAt: storage.now(), version: settings.version), for: key, keepingContentEncoding: coded)
    }
}

extension Request {
    /// Serves a stored response younger than `maximumAge` (and of the same `version`) without a
    /// network request, and stores successful responses for later. `version` lets you invalidate
    /// everything stored by an older build or data model.
    @discardableResult
    public nonisolated func cached(for maximumAge: Duration, version: Int? = nil) -> Self {
        updateFeatureSetting(ResponseCacheSettings.self) { settings in
            let ignores = settings?.ignoresStoredResponse ?? false
            settings = ResponseCacheSettings(maximumAge: maximumAge, version: version, ignoresStoredResponse: ignores)
        }
        return self
    }

    /// Goes to the network even if a fresh response is stored, and still stores a successful
    /// result (pull to refresh). Combine it with `cached(for:version:)` in either order; on its
    /// own it stores the result without a version.
    @discardableResult
    public nonisolated func ignoringCache(_ ignoring: Bool = true) -> Self {
        updateFeatureSetting(ResponseCacheSettings.self) { settings in
            var updated = settings ?? ResponseCacheSettings(maximumAge: .zero, version: nil)
            updated.ignoresStoredResponse = ignoring
            settings = updated
        }
        return self
    }

    /// The last stored response for this request, even if it is stale: show it at once, then
    /// refresh. `nil` when nothing was stored (or the request cannot be built).
    public func cachedResponse() async -> DataResponse<Data, CourierError>? {
        guard let request = try? withIsolatedEngine({ $0.source }).makeRequest(session),
            let stored = session.responseCache.latest(for: ResponseCacheKey(request)), let url = request.url
        else { return nil }
        let head = ResponseHead(
            statusCode: stored.statusCode, fields: stored.headers.map { (name: $0.name, value: $0.value) },
            url: url, httpVersion: "HTTP/1.1")
        return DataResponse(
            request: request, response: head.httpURLResponse, data: stored.data, metrics: nil,
            serializationDuration: 0, result: .success(stored.data))
    }
}
