import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's machinery behind a request: lifecycle, exchanges, body, validators and response
/// handlers. It lives inside the request actor and is only ever used on that actor's executor.
package final class RequestEngine {
    typealias Machine = ExchangeMachine<Exchange, CourierError, RequestCompletion>
    typealias Lifecycle = Machine.Lifecycle

    let id: UUID
    let session: Session
    let source: RequestSource
    let shared: RequestSharedState
    let sink: any ResponseBodySink
    /// The request actor that owns this engine; set once by the actor's initializer.
    weak var owner: (any RequestInternals)?

    /// Where the request and its exchanges stand: attempts, admission, redirects, retries, the
    /// asynchronous excursions and how the request ended. The engine feeds it events and performs
    /// the actions it returns.
    var machine = Machine()
    /// The request's phase, as the machine tracks it.
    var lifecycle: Lifecycle { machine.lifecycle }
    /// Response handlers waiting for the completion, in the order they were added.
    var pendingHandlers: [(RequestCompletion) -> Void] = []
    var validators: [Validator] = []
    /// The request's own redirect policy; the session's applies when `nil`.
    var redirectPolicy: RedirectPolicy?
    /// What the request asked of the session's features; the engine only carries it.
    var featureSettings = RequestFeatureSettings()
    var interceptors: [any RequestInterceptor] = []
    /// The request's own event monitors, told after the session's.
    var requestMonitors: [any EventMonitor] = []
    /// Run once, when the first exchange starts (its request is then `record.request`); `nil`
    /// once one did.
    var firstSentObservers: [(RequestEngine) -> Void]? = []
    /// Asked, in order, about every final response head before its body is taken.
    var responseHeadHandlers: [@Sendable (HTTPURLResponse) async -> ResponseDisposition] = []
    /// The request's own size limits and minimum rate; the session's apply where `nil`.
    var limitOverrides = ResponseLimitOverrides()
    /// The request's own HTTP version; the session's applies when `nil`.
    var httpVersion: HTTPVersion?
    /// Whether the transport may treat a stream like any other body (see ``Request/sharesConnectionsAsAnyRequest()``).
    var pacedStreamMayShare = false
    /// What the request learned so far: the last request, response, metrics and error.
    var record = RequestRecord()
    /// The upload body, prepared at the first exchange and kept for retries and 307/308 redirects.
    var preparedUpload: PreparedUpload?
    /// The sleep before the next attempt, cancelled if the request is.
    var retryDelay: Task<Void, Never>?
    /// Set at the first resume: no exchange runs past it.
    var deadline: ContinuousClock.Instant?
    let createdAt = ContinuousClock.now

    /// ``Request/metrics``: the last exchange's metrics, or, while an exchange is in flight, what
    /// is known of it so far.
    var currentMetrics: TransferMetrics? {
        // A finished request reports the transport's figures, even if a cancelled exchange's own
        // `completed` event never reached the engine.
        guard let live = record.live, lifecycle.completion == nil else { return record.metrics }
        let now = ContinuousClock.now
        return TransferMetrics(
            TransferMetrics.Values(
                start: live.start, dnsLookup: nil, connect: nil, tlsHandshake: nil,
                timeToFirstByte: live.headAt.map { $0 - live.startedAt }, total: now - createdAt,
                bytesSent: record.bytesSent, bytesReceived: live.bytesReceived, redirectCount: machine.redirectHistory.count,
                connectionReused: nil, httpVersion: live.httpVersion, remoteAddress: nil,
                transport: session.transportName))
    }

    init(id: UUID, session: Session, source: RequestSource, shared: RequestSharedState, sink: any ResponseBodySink) {
        self.id = id
        self.session = session
        self.source = source
        self.shared = shared
        self.sink = sink
        if let interceptor = source.interceptor { interceptors.append(interceptor) }
    }

    // MARK: - Verbs

    func resume() {
        if deadline == nil {
            deadline = session.configuration.transportClock.now + .seconds(session.configuration.resourceTimeout)
        }
        apply(machine.resume())
    }

    /// The start that follows adding a response handler (see ``RequestLifecycle/startAutomatically()``).
    func startAutomatically() {
        let transition = machine.startAutomatically()
        // A first start asks for admission before it prepares: both start the resource timeout.
        switch transition.action {
        case .admit, .lifecycle(.prepare):
            if deadline == nil {
                deadline = session.configuration.transportClock.now + .seconds(session.configuration.resourceTimeout)
            }
        default:
            break
        }
        apply(transition)
    }

    func suspend() {
        apply(machine.suspend())
    }

    func cancel() {
        if let exchange = machine.lifecycle.transferInFlight?.transfer, exchange.route != nil {
            // The transport's own figures come with its `completed` event, which a cancelled
            // request no longer waits for: what is known now goes with the cancellation.
            record.metrics = mergedMetrics(exchange.partialMetrics(transport: session.transportName, bytesSent: record.bytesSent))
        }
        let error = CourierError(
            .cancelled, "The request was cancelled.", responseCode: record.response?.statusCode,
            url: record.request?.url)
        apply(machine.cancel(makeCompletion(error: error, cancelled: true)))
    }

    /// Runs `observer` when the first exchange starts, or now if one already did.
    func whenFirstSent(_ observer: @escaping (RequestEngine) -> Void) {
        if firstSentObservers == nil {
            observer(self)
        } else {
            firstSentObservers?.append(observer)
        }
    }

    /// Runs `handler` with the completion now if the request is done, otherwise when it is.
    func addResponseHandler(_ handler: @escaping (RequestCompletion) -> Void) {
        if let completion = lifecycle.completion {
            handler(completion)
        } else {
            pendingHandlers.append(handler)
        }
    }

    // MARK: - Acting on transitions

    /// Performs what an event of the machine decided.
    // Owned, so the action moves out of it: a borrowed transition is copied (through the generic
    // type's value witnesses) to switch over (issue 38). `__owned`, not `consuming`: with an
    // indirect case in the enum, `consuming` crashes swift-frontend 6.3.1's move-only checker.
    func apply(_ transition: __owned Machine.Transition) {
        if let hook = transition.hook { run(hook) }
        let action = transition.action
        switch action {
        case .lifecycle(let action):
            perform(action)
        case .admit(let attempt):
            if session.startRunning(id) {
                apply(machine.admitted(attempt: attempt))
            } else {
                let error = Session.shutDownError(url: record.request?.url)
                notifyMonitors { $0.request($1, didFailToPrepareWith: error) }
                apply(machine.refused(attempt: attempt, error))
            }
        case .releaseAdmission:
            session.endRunning(id)
        case .runExcursion(let excursion, let token):
            run(excursion, token)
        case .stopTransfer(let exchange):
            exchange.transfer.cancel()
        case .acceptHead(_, let exchange):
            acceptHead(of: exchange)
        case .refuseHead(_, let exchange):
            record.response = exchange.response
            cancel()
        case .conclude(let attempt, let failure):
            conclude(attempt: attempt, error: failure)
        }
    }

    /// Does what the request's lifecycle decided.
    private func perform(_ action: Machine.LifecycleAction) {
        switch action {
        case .none:
            break
        case .prepare(let attempt):
            prepare(attempt: attempt)
        case .startTransfer(let attempt, let number, let request):
            startExchange(attempt: attempt, number: number, request: request)
        case .suspendTransfer(let exchange):
            exchange.transfer.suspend()
        case .resumeTransfer(let exchange):
            exchange.transfer.resume()
        case .evaluate(let attempt, let failure):
            evaluate(attempt: attempt, failure: failure)
        case .scheduleRetry(let attempt, let delay, let error):
            record.retryCount += 1
            notifyMonitors { $0.request($1, willRetryAfter: delay, dueTo: error) }
            scheduleRetry(attempt: attempt, after: delay)
        case .cancel(let exchange, let completion):
            exchange?.transfer.cancel()
            if let exchange, exchange.route != nil, let metrics = completion.metrics {
                // Every exchange that reached the transport ends with one completion event; a
                // cancelled one ends here (its transport's late `completed` is dropped as stale).
                notifyMonitors { $0.request($1, didCompleteExchangeWith: metrics, error: completion.error) }
            }
            retryDelay?.cancel()
            retryDelay = nil
            complete(completion)
        case .discardTransfer(let exchange):
            exchange.transfer.cancel()
        case .finish(let completion):
            complete(completion)
        case .awaitDelivery(let completion):
            sink.awaitDelivery(of: completion) { [weak owner] in
                owner?.engineAccess.perform { $0.apply($0.machine.delivered()) }
            }
        }
    }

    /// Tells the session's event monitors, then the request's own, about this request; with none,
    /// not even the owner is loaded.
    func notifyMonitors(_ event: (any EventMonitor, any Request) -> Void) {
        guard !session.monitor.isEmpty || !requestMonitors.isEmpty, let owner else { return }
        session.monitor { event($0, owner) }
        for monitor in requestMonitors { event(monitor, owner) }
    }

    private func run(_ hook: Lifecycle.Hook) {
        let hooks = shared.withHooks { hooks in
            switch hook {
            case .willResume: hooks.willResume
            case .willSuspend: hooks.willSuspend
            case .willCancel: hooks.willCancel
            }
        }
        hooks.forEach { $0() }
        switch hook {
        case .willResume: notifyMonitors { $0.requestDidResume($1) }
        case .willSuspend: notifyMonitors { $0.requestDidSuspend($1) }
        case .willCancel: notifyMonitors { $0.requestDidCancel($1) }
        }
    }

    /// Finishes the progress channels and runs the waiting handlers, in order.
    private func complete(_ completion: RequestCompletion) {
        let succeeded = completion.error == nil
        shared.downloadProgress.finish(successfulBytes: succeeded ? record.bytesReceived : nil)
        shared.uploadProgress.finish(successfulBytes: succeeded ? record.bytesSent : nil)
        if completion.error?.isCancelled == true { sink.discard() }
        preparedUpload?.discard()
        notifyMonitors { $0.request($1, didFinishWith: completion.response?.httpResponse, metrics: completion.metrics, error: completion.error) }
        let ended = CompletedRequest(
            completion: completion, initialRequest: record.initialRequest,
            hasUploadBody: source.upload != nil, origin: record.origin, settings: featureSettings)
        for feature in session.features { feature.requestDidComplete(ended) }
        let handlers = pendingHandlers
        pendingHandlers = []
        handlers.forEach { $0(completion) }
        session.unregister(id)
    }

    func makeCompletion(error: CourierError?, cancelled: Bool = false) -> RequestCompletion {
        RequestCompletion(
            request: record.request, response: record.response,
            body: cancelled ? sink.cancelledBody : sink.body, metrics: record.metrics, error: error)
    }
}

/// What a request has learned so far.
struct RequestRecord {
    /// The first request, built once from the source; adapters start from it on every attempt.
    var initialRequest: URLRequest?
    /// The last `URLRequest` sent.
    var request: URLRequest?
    /// The final response of the last exchange (its `HTTPURLResponse` is built on demand).
    var response: LazyHTTPResponse?
    /// The last final head received, a redirect's included: what monitors were just told about.
    var latestHead: LazyHTTPResponse?
    /// Metrics of the last exchange, with the whole request's total time.
    var metrics: TransferMetrics?
    /// Where the answer of the last exchange came from; `nil` until an exchange started.
    var origin: ExchangeOrigin?
    /// Retries so far.
    var retryCount = 0
    /// Body bytes received in the current response.
    var bytesReceived: Int64 = 0
    /// Request body bytes sent in the current exchange.
    var bytesSent: Int64 = 0
    /// The exchange in flight, between its start and its `completed` event: what
    /// ``Request/metrics`` reports before the transport's own figures arrive.
    var live: LiveExchange?
}

/// What is known of the exchange in flight before the transport reports its metrics.
struct LiveExchange {
    /// When it started, for ``TransferMetrics/start``.
    var start = Date()
    /// When it started, for durations.
    var startedAt = ContinuousClock.now
    /// When the (final) response head arrived.
    var headAt: ContinuousClock.Instant?
    /// The response head's HTTP version.
    var httpVersion: String?
    /// Response body bytes received so far in this exchange.
    var bytesReceived: Int64 = 0
}

/// One redirect followed: where from, where to and with which method.
struct RedirectStep: Equatable {
    var url: URL
    var method: HTTPMethod
}

/// One exchange on the network: the request sent, the transport's handle, and what arrived.
final class Exchange {
    let number: Int
    let request: URLRequest
    let transfer: any TransportTransfer
    /// The exchange as the session's features saw it, and where its answer comes from; `nil` for
    /// an exchange that failed before anything started.
    let route: (context: ExchangeContext, origin: ExchangeOrigin)?
    /// The response head, once it arrived.
    var head: ResponseHead?
    /// What the sink does with this exchange's body, decided when the head arrived.
    var disposition: BodyDisposition?
    /// Body bytes of this exchange stored so far.
    var received: Int64 = 0
    /// When the exchange started, for the metrics of an exchange that never completes (a cancelled one).
    let startInstant = ContinuousClock.now
    /// When the response head arrived.
    var headInstant: ContinuousClock.Instant?
    /// The final response, once its head passed the checks and it is not a redirect.
    var response: LazyHTTPResponse?
    /// Transport events that arrived while response-head handlers were deciding, in order.
    var heldEvents: [TransportEvent] = []

    init(
        number: Int, request: URLRequest, transfer: any TransportTransfer,
        route: (context: ExchangeContext, origin: ExchangeOrigin)?
    ) {
        self.number = number
        self.request = request
        self.transfer = transfer
        self.route = route
    }

    /// The figures known without the transport's report: start, time to the head, bytes so far.
    func partialMetrics(transport: String, bytesSent: Int64) -> TransferMetrics {
        let elapsed = ContinuousClock.now - startInstant
        return TransferMetrics(
            start: Date(timeIntervalSinceNow: -elapsed.timeInterval), timeToFirstByte: headInstant.map { $0 - startInstant },
            total: elapsed, bytesSent: bytesSent, bytesReceived: received,
            httpVersion: head?.httpVersion, transport: transport)
    }
}
