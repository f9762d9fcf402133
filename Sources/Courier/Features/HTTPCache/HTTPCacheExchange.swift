import Foundation
import CourierLocking

/// One exchange the HTTP cache sent to the network, standing between the transport and the
/// request: it passes the answer on and keeps a copy, or turns a `304` (or a `5xx` that
/// `stale-if-error` covers) into the stored response. It is both the transport's sink and the
/// request's transfer, so flow control and cancellation reach whichever transfer is answering.
///
/// The transport's events are handled in order on the request's executor, never on the transport's
/// thread: storing a body writes files and may scan the store's directory, which a transport's
/// thread (a libcurl pass serving every other transfer) must not wait for. The request's drain
/// takes the events in anyway, so handling them there costs no thread hop of its own (a queue of
/// the exchange's own cost one per event: the HTTP cache one at a time ran at 0.73× before).
/// A background revalidation, which no request waits for, has a serial queue of its own. The
/// bytes queued stay bounded by the transfer's flow-control window: a forwarded piece is
/// acknowledged by the request once it took it, a kept-only piece once it was written.
final class HTTPCacheExchange: TransportEventSink, TransportTransfer {
    /// Set on a background revalidation's queue, so a test can tell where the store's writes run.
    static let queueKey = DispatchSpecificKey<Bool>()

    private struct State {
        var machine: HTTPCacheExchangeMachine
        var writer: ResponseCacheWriter?
        /// The network transfer, until the stored response takes over.
        var network: (any TransportTransfer)?
        /// The stored response being served after a `304` or for `stale-if-error`.
        var replay: (any TransportTransfer)?
        var cancelled = false
        var suspended = false
        /// The body length a partial response's `Content-Range` announced (checked before it is kept).
        var expectedLength: Int64?
        /// Stored bytes that go after the new part of a combined partial response.
        var storedAfter: Range<Int64>?
        /// Where the exchange went onward, to send it again (a `304` for another representation).
        var onward: (exchange: ExchangeContext, onward: ExchangeOnward, unconditional: TransportRequest)?
    }

    private let cache: CacheStore
    private let key: ResponseCacheKey
    /// The stored response this exchange revalidates (or may serve for an error, or extends with
    /// a new partial response), if any.
    private let stored: StoredEntry?
    /// The request's sink; `nil` for a background revalidation nobody waits for.
    private let downstream: (any TransportEventSink)?
    private let notifyMonitors: MonitorNotifier
    private let now: @Sendable () -> Date
    private let onEnd: (@Sendable () -> Void)?
    /// Guards `State`: the machine, the writer, and which transfer answers.
    private let state: Locked<State>
    /// The URL the response is stored under and served for.
    private let url: URL
    /// Whether a served stored response carries its body (not for HEAD).
    private let includesBody: Bool
    /// Where the transport's events are handled, in the order they arrived.
    private let eventQueue: EventQueue

    private enum EventQueue {
        /// The request's executor, for an exchange a request waits for.
        case request(RequestWorkQueue)
        /// A serial queue of the exchange's own, for a background revalidation.
        case own(DispatchQueue)
    }

    init(
        cache: CacheStore, key: ResponseCacheKey, stored: StoredEntry?, machine: HTTPCacheExchangeMachine, url: URL,
        includesBody: Bool = true, downstream: (any TransportEventSink)?, requestQueue: RequestWorkQueue?, notifyMonitors: MonitorNotifier,
        now: @escaping @Sendable () -> Date, onEnd: (@Sendable () -> Void)? = nil
    ) {
        self.cache = cache
        self.key = key
        self.stored = stored
        self.url = url
        self.includesBody = includesBody
        self.downstream = downstream
        self.notifyMonitors = notifyMonitors
        self.now = now
        self.onEnd = onEnd
        state = Locked(State(machine: machine))
        if let requestQueue {
            eventQueue = .request(requestQueue)
        } else {
            let queue = DispatchQueue(label: "courier.http-cache")
            queue.setSpecific(key: Self.queueKey, value: true)
            eventQueue = .own(queue)
        }
    }

    /// Sends `exchange` onward (the features after the cache, then the transport), with this
    /// object as its sink.
    func start(_ exchange: ExchangeContext, onward: ExchangeOnward, unconditional: TransportRequest? = nil) -> RoutedTransfer {
        state.withLock { $0.onward = (exchange, onward, unconditional ?? exchange.request) }
        let routed = send(exchange, onward: onward)
        return RoutedTransfer(transfer: self, origin: routed.origin)
    }

    /// Sends `exchange` onward with this object as its sink, and makes its transfer the one that
    /// answers (cancelled at once if the request was cancelled meanwhile).
    @discardableResult
    private func send(_ exchange: ExchangeContext, onward: ExchangeOnward) -> RoutedTransfer {
        let routed = onward.route(exchange, sink: self)
        let cancelled = state.withLock { state in
            if state.replay == nil { state.network = routed.transfer }
            return state.cancelled
        }
        if cancelled { routed.transfer.cancel() }
        return routed
    }

    // MARK: TransportEventSink

    func receive(_ event: TransportEvent) {
        switch eventQueue {
        case .request(let queue): queue { self.handle(event) }
        case .own(let queue): queue.async { self.handle(event) }
        }
    }

    /// Handles one transport event, on ``eventQueue``.
    private func handle(_ event: TransportEvent) {
        switch event {
        case .uploadProgress:
            downstream?.receive(event)
            return
        case .body(let data):
            receiveBody(data, event: event)
            return
        case .response, .completed:
            break
        }
        let now = now()
        let (actions, writer) = state.withLock { state -> ([HTTPCacheExchangeMachine.Action], ResponseCacheWriter?) in
            let actions: [HTTPCacheExchangeMachine.Action]
            switch event {
            case .response(let head):
                let coded = !head.bodyIsDecoded && HTTPCacheRules.contentCoding(of: head.headers) != nil
                actions = state.machine.receiveHead(statusCode: head.statusCode, headers: head.headers, bodyIsCoded: coded, now: now)
            case .completed(let error, let metrics): actions = state.machine.complete(failed: error != nil, metrics: metrics, now: now)
            case .uploadProgress, .body: actions = []
            }
            return (actions, state.writer)
        }
        var currentWriter = writer
        for action in actions {
            switch action {
            case .forward(let forwarded):
                forward(event, as: forwarded)
            case .startStoring(let head):
                currentWriter = cache.makeWriter(for: key, head: head, url: url, version: nil)
                let expected = head.statusCode == 206 ? head.headers["Content-Range"].flatMap(ContentRange.init)?.count : nil
                state.withLock {
                    $0.writer = currentWriter
                    $0.expectedLength = expected
                }
            case .startCombining(let combination):
                let writer = cache.makeWriter(for: key, head: combination.head, url: url, version: nil)
                let started = combination.before.map { appendStored($0, to: writer) } ?? true
                currentWriter = started ? writer : nil
                state.withLock {
                    $0.writer = currentWriter
                    $0.expectedLength = combination.length
                    $0.storedAfter = combination.after
                }
            case .commitStored:
                let (expected, after) = state.withLock { ($0.expectedLength, $0.storedAfter) }
                if let writer = currentWriter {
                    let completed = after.map { appendStored($0, to: writer) } ?? true
                    if !completed || expected.map({ $0 != writer.length }) == true {
                        writer.discard()
                        notifyMonitors { $0.request($1, didUseCache: .notStored(reason: "the partial body does not match its Content-Range")) }
                    } else if let entry = writer.commit() {
                        let bytes = entry.body.length
                        notifyMonitors { $0.request($1, didUseCache: .stored(bytes: bytes)) }
                    }
                }
                state.withLock { $0.writer = nil }
            case .discardStored:
                currentWriter?.discard()
                state.withLock { $0.writer = nil }
            case .updateStoredHead(let head):
                _ = cache.updateHead(for: key, head)
            case .removeStored:
                cache.remove(for: key)
            case .serveStored(let head, let source, let metrics):
                guard serveStored(head, source: source, networkMetrics: metrics) else {
                    // Only a changed validator brings this (an If-Range the freshened head no
                    // longer matches, on a stored part): the server answers the request instead.
                    refetch()
                    return
                }
            case .refetch:
                refetch()
                return
            case .notify(let cacheEvent):
                notifyMonitors { $0.request($1, didUseCache: cacheEvent) }
            }
        }
        if case .completed = event {
            let replaying = state.withLock { state -> Bool in
                state.network = nil
                return state.replay != nil
            }
            if !replaying { onEnd?() }
        }
    }

    /// Appends the stored body's bytes in `range` to `writer` (the stored part of a combined
    /// partial response); `false` when they cannot be read whole or the writer refused them.
    private func appendStored(_ range: Range<Int64>, to writer: ResponseCacheWriter) -> Bool {
        guard let stored else { return false }
        var offset = range.lowerBound
        while offset < range.upperBound {
            let count = Int(min(Int64(CacheBodyChecksums.blockSize), range.upperBound - offset))
            guard let piece = stored.body.read(at: offset, count: count), piece.count == count, writer.append(piece) else {
                writer.discard()
                return false
            }
            offset += Int64(count)
        }
        return true
    }

    /// A piece of the body: to the request, into the writer, both or neither.
    private func receiveBody(_ data: Data, event: TransportEvent) {
        let (route, writer, network) = state.withLock { ($0.machine.receiveBody(), $0.writer, $0.network) }
        if route.stores, let writer, !writer.append(data) {
            state.withLock { $0.writer = nil }
            notifyMonitors { $0.request($1, didUseCache: .notStored(reason: "larger than the cache's maximum entry size")) }
        }
        if route.forwards {
            downstream?.receive(event)
        } else {
            // Bytes nobody downstream will acknowledge (a swallowed 304 or 5xx body, a background
            // refresh's copy) must not hold the transfer's flow-control window shut.
            network?.acknowledge(data.count)
        }
    }

    /// Sends the request again without validators, as a plain fetch, with this object as its sink.
    private func refetch() {
        let pending = state.withLock { state -> (ExchangeContext, ExchangeOnward)? in
            guard let onward = state.onward, !state.cancelled else { return nil }
            state.machine = HTTPCacheExchangeMachine(
                rules: state.machine.rules, method: .get, requestHeaders: onward.unconditional.headers,
                requestTime: now(), purpose: .fetch)
            state.network = nil
            return (onward.exchange.with(request: onward.unconditional), onward.onward)
        }
        guard let (exchange, onward) = pending else {
            downstream?.receive(
                .completed(error: CourierError(.cancelled, "The request was cancelled."), metrics: TransferMetrics(transport: "cache")))
            onEnd?()
            return
        }
        send(exchange, onward: onward)
    }

    private func forward(_ event: TransportEvent, as forwarded: HTTPCacheExchangeMachine.Forwarded) {
        guard let downstream else { return }
        if case .completed(let error, var metrics) = event, case .completed(_, let source) = forwarded {
            metrics.source = source
            downstream.receive(.completed(error: error, metrics: metrics))
        } else {
            downstream.receive(event)
        }
    }

    /// Answers with the stored body under `head` (the bytes a `Range` asks for, or a `416`), once
    /// the network exchange is over; `false` when the store cannot answer the request's range.
    private func serveStored(_ head: CacheEntryHead, source: ResponseSource, networkMetrics: TransferMetrics?) -> Bool {
        guard let downstream, var entry = stored else { return true }
        entry.head = head
        let (rules, age, request) = state.withLock { ($0.machine.rules, $0.machine.rules.currentAge(of: head, now: now()), $0.onward?.unconditional) }
        let answer = rules.rangeAnswer(
            method: request?.method ?? .get, requestHeaders: request?.headers ?? [:], entry: head, storedLength: entry.body.length)
        if case .network = answer { return false }
        let replay = HTTPCache.replay(
            entry, answer: answer, url: url, sink: downstream, flowControlWindow: request?.flowControlWindow ?? 4 << 20, source: source,
            includingBody: includesBody, age: age, networkMetrics: networkMetrics)
        let (cancelled, suspended) = state.withLock { state in
            state.replay = replay
            return (state.cancelled, state.suspended)
        }
        if cancelled { replay.cancel() } else if suspended { replay.suspend() }
        return true
    }

    // MARK: TransportTransfer

    private var answering: (any TransportTransfer)? {
        state.withLock { $0.replay ?? $0.network }
    }

    func suspend() {
        state.withLock { $0.suspended = true }
        answering?.suspend()
    }

    func resume() {
        state.withLock { $0.suspended = false }
        answering?.resume()
    }

    func cancel() {
        let (network, replay) = state.withLock { state in
            state.cancelled = true
            return (state.network, state.replay)
        }
        network?.cancel()
        replay?.cancel()
    }

    func acknowledge(_ bytes: Int) {
        answering?.acknowledge(bytes)
    }
}
