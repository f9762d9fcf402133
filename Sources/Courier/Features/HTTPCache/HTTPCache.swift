import CourierSupport
import Foundation
import CourierLocking

/// The HTTP cache (RFC 9111) as a session feature: it answers GET and HEAD from the session's
/// ``CacheStore`` (which its TTL cache uses too) when the stored response may be used, revalidates
/// it with the server when it must be, stores what the network sends when the response allows
/// it, and forgets a stored response when an unsafe request to its URL succeeds.
///
/// Its network exchanges go onward through the features after it (the deduplicator, so two
/// requests revalidating one stored response share one conditional request).
final class HTTPCache: RequestFeature {
    let store: CacheStore
    let mode: HTTPCacheMode
    /// Guards the keys whose stale-while-revalidate refresh is running, so one stale response
    /// served many times starts one refresh.
    private let refreshing = Locked<Set<ResponseCacheKey>>([])

    init(store: CacheStore, mode: HTTPCacheMode) {
        self.store = store
        self.mode = mode
    }

    /// Request fields that make the request the caller's own conditional request: the cache
    /// neither answers it nor keeps its answer. (`Range` and `If-Range` are answered: see
    /// ``HTTPCacheRules/rangeAnswer(method:requestHeaders:entry:storedLength:)``.)
    static let callerConditionals = ["If-None-Match", "If-Modified-Since", "If-Match", "If-Unmodified-Since"]

    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward) -> RoutedTransfer? {
        let policy = exchange.settings[HTTPCachePolicySetting.self]
        guard mode != .disabled || policy != nil,
            // A request that asked for the TTL cache (`cached(for:version:)`) is that cache's alone.
            exchange.settings[ResponseCacheSettings.self] == nil
        else { return nil }
        let request = exchange.request
        let rules = HTTPCacheRules(isShared: mode == .shared)
        switch request.method {
        case .get, .head:
            break
        case .options, .trace:
            return nil
        default:
            return HTTPCacheInvalidator.route(exchange, sink: sink, onward: onward, rules: rules, cache: self)
        }
        guard !exchange.hasUploadBody, exchange.bodyMayBeStored,
            !Self.callerConditionals.contains(where: request.headers.contains)
        else { return nil }
        let key = Self.key(for: request)
        let now = store.now()
        let notify = exchange.notifyMonitors
        let stored = store.entry(for: key)
        // What is stored may be unusable for this request whatever its freshness: then it is as if
        // nothing were stored (a stored part may still be extended by the answer).
        var entry = stored
        var unusable: String?
        var answer = RangeAnswer.whole
        if let stored {
            answer = rules.rangeAnswer(method: request.method, requestHeaders: request.headers, entry: stored.head, storedLength: stored.body.length)
            if request.automaticDecompression, let coding = HTTPCacheRules.contentCoding(of: stored.head.headers) {
                unusable = "the stored body is still in its content coding (\(coding)) and this request decodes"
            } else if case .network(let reason) = answer {
                unusable = reason
            }
            if unusable != nil { entry = nil }
        }
        let decision = rules.decide(
            method: request.method, requestHeaders: request.headers, policy: policy ?? .useProtocolPolicy,
            entry: entry?.head, now: now)
        switch decision {
        case .serve(let source, let age, let revalidateInBackground):
            guard let entry else { return fetch(exchange, sink: sink, onward: onward, key: key, rules: rules, standIn: nil) }
            notify { $0.request($1, didUseCache: .hit(source)) }
            if revalidateInBackground { refreshInBackground(exchange, entry: entry, key: key, rules: rules, onward: onward) }
            let replay = Self.replay(
                entry, answer: answer, url: request.url, sink: sink, flowControlWindow: request.flowControlWindow,
                source: source, includingBody: request.method != .head, age: age)
            return RoutedTransfer(transfer: replay, origin: .local)
        case .revalidate(let conditionalHeaders):
            guard request.method == .get, let entry else { return nil }
            // The conditional request keeps the caller's Range and If-Range: a 304 is answered
            // from the store (the bytes asked for), anything else comes from the server as it is.
            var conditional = request
            for header in conditionalHeaders { conditional.headers.update(name: header.name, value: header.value) }
            let machine = HTTPCacheExchangeMachine(
                rules: rules, method: .get, requestHeaders: request.headers, requestTime: now,
                purpose: .revalidate(entry.head))
            return HTTPCacheExchange(
                cache: store, key: key, stored: entry, machine: machine, url: request.url, downstream: sink,
                requestQueue: exchange.requestQueue, notifyMonitors: notify, now: store.now
            )
            .start(exchange.with(request: conditional), onward: onward, unconditional: request)
        case .fetch(let reason):
            let missReason = unusable ?? reason
            notify { $0.request($1, didUseCache: .miss(reason: missReason)) }
            // A HEAD's answer has no body to keep: it goes to the network as it is.
            guard request.method == .get else { return nil }
            // A stored response that could not be validated may still answer a 5xx or a failure;
            // a stored part the request reaches past may be extended by the answer.
            let standIn = entry.flatMap {
                rules.mayStandInForErrors($0.head, method: request.method, requestHeaders: request.headers, policy: policy ?? .useProtocolPolicy)
                    ? $0 : nil
            }
            let part = unusable == nil ? nil : stored.flatMap { HTTPCacheRules.isPartial($0.head) ? $0 : nil }
            return fetch(exchange, sink: sink, onward: onward, key: key, rules: rules, standIn: standIn, part: part)
        case .unsatisfiable:
            notify { $0.request($1, didUseCache: .miss(reason: "only-if-cached and nothing usable is stored")) }
            let head = CacheEntryHead(
                statusCode: 504, headers: ["Content-Type": "text/plain; charset=utf-8"], requestTime: now,
                responseTime: now)
            let body = Data("The request allowed only a stored response (only-if-cached), and none is stored.".utf8)
            let gatewayTimeout = StoredEntry(key: key, head: head, url: request.url, version: nil, body: .data(body))
            let replay = CacheReplayTransfer(
                gatewayTimeout, url: request.url, sink: sink, flowControlWindow: request.flowControlWindow,
                source: .cache, includingBody: request.method != .head, age: 0)
            return RoutedTransfer(transfer: replay, origin: .local)
        }
    }

    /// Sends the request onward as it is and stores a storable answer: `standIn` may answer a
    /// `5xx` or a failure instead (`stale-if-error`), and a new `206` may extend the stored part
    /// `part` (RFC 9111 §3.4).
    private func fetch(
        _ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward, key: ResponseCacheKey,
        rules: HTTPCacheRules, standIn: StoredEntry?, part: StoredEntry? = nil
    ) -> RoutedTransfer {
        let machine = HTTPCacheExchangeMachine(
            rules: rules, method: .get, requestHeaders: exchange.request.headers,
            requestTime: store.now(), purpose: standIn.map { .refetch($0.head) } ?? .fetch,
            storedPart: part.map { ($0.head, $0.body.length) })
        return HTTPCacheExchange(
            cache: store, key: key, stored: standIn ?? part, machine: machine, url: exchange.request.url, downstream: sink,
            requestQueue: exchange.requestQueue, notifyMonitors: exchange.notifyMonitors, now: store.now
        )
        .start(exchange, onward: onward)
    }

    /// Starts one refresh of a stale response that was just served (stale-while-revalidate);
    /// nobody waits for it, and only the store sees its answer.
    private func refreshInBackground(
        _ exchange: ExchangeContext, entry: StoredEntry, key: ResponseCacheKey, rules: HTTPCacheRules,
        onward: ExchangeOnward
    ) {
        guard refreshing.withLock({ $0.insert(key).inserted }) else { return }
        var whole = exchange.request
        whole.method = .get
        // The whole response is refreshed, whatever bytes the request that served it asked for.
        whole.headers.remove(name: "Range")
        whole.headers.remove(name: "If-Range")
        var request = whole
        if case .revalidate(let conditionalHeaders) = rules.decide(
            method: .get, requestHeaders: request.headers, policy: .revalidate,
            entry: entry.head, now: store.now())
        {
            for header in conditionalHeaders { request.headers.update(name: header.name, value: header.value) }
        }
        let machine = HTTPCacheExchangeMachine(
            rules: rules, method: .get, requestHeaders: whole.headers,
            requestTime: store.now(), purpose: .backgroundRevalidate(entry.head))
        let background = HTTPCacheExchange(
            cache: store, key: key, stored: entry, machine: machine, url: request.url, downstream: nil,
            requestQueue: nil, notifyMonitors: exchange.notifyMonitors, now: store.now
        ) { [weak self] in
            _ = self?.refreshing.withLock { $0.remove(key) }
        }
        _ = background.start(exchange.with(request: request), onward: onward, unconditional: whole)
    }

    /// The key a response to `request` is stored under: its URL, and in a private cache a digest
    /// of its credentials, so that one session used for two accounts never serves one account's
    /// response to the other.
    static func key(for request: TransportRequest) -> ResponseCacheKey {
        key(for: request.url, authorization: request.headers.value(for: "Authorization"))
    }

    /// The key of a response to a GET of `url`, with these credentials (`nil` for none).
    static func key(for url: URL, authorization: String?) -> ResponseCacheKey {
        let plain = CacheStore.httpKey(for: url)
        guard let authorization else { return plain }
        return ResponseCacheKey(rawValue: plain.rawValue + "\nauthorization: sha256:" + SHA256.hash(Data(authorization.utf8)).hexString)
    }

    /// Forgets what is stored for `urls`.
    func invalidate(_ urls: [URL], authorization: String?, notify: MonitorNotifier) {
        for url in urls {
            store.remove(for: Self.key(for: url, authorization: nil))
            if let authorization { store.remove(for: Self.key(for: url, authorization: authorization)) }
            notify { $0.request($1, didUseCache: .invalidated(url)) }
        }
    }
}

/// Watches an unsafe request (POST, PUT, DELETE…) go by and, when it succeeds, forgets what the
/// cache holds for its URL (RFC 9111 §4.4). Everything is passed on unchanged.
final class HTTPCacheInvalidator: TransportEventSink {
    private let downstream: any TransportEventSink
    private let cache: HTTPCache
    private let rules: HTTPCacheRules
    private let request: TransportRequest
    private let notify: MonitorNotifier

    private init(
        downstream: any TransportEventSink, cache: HTTPCache, rules: HTTPCacheRules, request: TransportRequest,
        notify: MonitorNotifier
    ) {
        self.downstream = downstream
        self.cache = cache
        self.rules = rules
        self.request = request
        self.notify = notify
    }

    static func route(
        _ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward, rules: HTTPCacheRules,
        cache: HTTPCache
    ) -> RoutedTransfer {
        let invalidator = HTTPCacheInvalidator(
            downstream: sink, cache: cache, rules: rules, request: exchange.request,
            notify: exchange.notifyMonitors)
        return onward.route(exchange, sink: invalidator)
    }

    func receive(_ event: TransportEvent) {
        if case .response(let head) = event {
            let urls = rules.invalidatedURLs(
                method: request.method, requestURL: request.url, statusCode: head.statusCode,
                responseHeaders: head.headers)
            cache.invalidate(urls, authorization: request.headers.value(for: "Authorization"), notify: notify)
        }
        downstream.receive(event)
    }
}
