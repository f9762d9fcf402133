import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestEngine {
    // MARK: - Preparing an attempt

    /// Builds the attempt's request (every attempt); adapters then have their say, if there are any.
    func prepare(attempt: Int) {
        let base: URLRequest
        do {
            // Built again for every attempt, so a request modifier sees each retry too.
            base = try source.makeRequest(session)
            record.initialRequest = base
        } catch {
            failPreparation(attempt: attempt, CourierError(wrapping: error))
            return
        }
        let adapting = session.interceptor != nil || !interceptors.isEmpty
        if !adapting { notifyMonitors { $0.request($1, didAdapt: base, attempt: attempt) } }
        apply(machine.requestBuilt(attempt: attempt, base, adapting: adapting))
    }

    /// Runs the adapters on `base` off the executor; the result comes back with `token`, like any other event.
    func runAdapters(on base: URLRequest, attempt: Int, _ token: Machine.ExcursionToken) {
        let adapters: [any RequestAdapter] = (session.interceptor.map { [$0] } ?? []) + interceptors
        let session = session
        let access = owner?.engineAccess
        Task {
            let outcome: Result<URLRequest, CourierError>
            do {
                var request = base
                for adapter in adapters { request = try await adapter.adapt(request, for: session) }
                outcome = .success(request)
            } catch {
                outcome = .failure(CourierError.adaptationFailure(error, url: base.url))
            }
            access?.perform { engine in
                switch outcome {
                case .success(let request): engine.notifyMonitors { $0.request($1, didAdapt: request, attempt: attempt) }
                case .failure(let failure): engine.notifyMonitors { $0.request($1, didFailToPrepareWith: failure) }
                }
                engine.apply(engine.machine.adapted(token, outcome))
            }
        }
    }

    func failPreparation(attempt: Int, _ error: CourierError) {
        notifyMonitors { $0.request($1, didFailToPrepareWith: error) }
        apply(machine.preparationFailed(attempt: attempt, error))
    }

    /// Starts `excursion` off the executor; its result comes back to the machine with `token`.
    func run(_ excursion: Machine.Excursion, _ token: Machine.ExcursionToken) {
        switch excursion {
        case .adapters(let attempt, let base): runAdapters(on: base, attempt: attempt, token)
        case .responseHeadHandlers(_, let exchange): askResponseHeadHandlers(about: exchange, token)
        case .retriers(_, let error): askRetriers(about: error, token)
        }
    }

    // MARK: - Running an exchange

    func startExchange(attempt: Int, number: Int, request: URLRequest) {
        record.request = request
        record.bytesSent = 0
        record.live = LiveExchange()
        var transportRequest: TransportRequest
        do {
            transportRequest = try makeTransportRequest(request, attempt: attempt)
            transportRequest.minimumTransferRate = minimumTransferRate
            transportRequest.httpVersion = httpVersion ?? session.configuration.httpVersion
            transportRequest.maximumBodySize = bodySizeLimit?.bytes
            transportRequest.maximumDecompressionRatio = maximumDecompressionRatio
            transportRequest.consumerSetsPace = sink.kind.consumerSetsPace && !pacedStreamMayShare
            transportRequest.expectsLargeBody = sink.kind.expectsLargeBody
            if sink.kind.consumerSetsPace, let backlog = session.configuration.maximumStreamBacklog {
                transportRequest.maximumUnacknowledgedBytes = Int64(backlog)
            }
        } catch {
            // Nothing went on the network: report the failure as this exchange's outcome.
            record.live = nil
            let exchange = Exchange(number: number, request: request, transfer: InertTransfer(), route: nil)
            apply(machine.transferStarted(attempt: attempt, exchange))
            apply(machine.transferEnded(attempt: attempt, .failed(CourierError(wrapping: error, url: request.url))))
            return
        }
        guard let owner else { return }
        let relay = ExchangeRelay(request: owner, exchange: number)
        notifyMonitors { $0.request($1, didStartExchange: request, headers: transportRequest.headers) }
        if let observers = firstSentObservers {
            firstSentObservers = nil
            observers.forEach { $0(self) }
        }
        // Where the answer comes from is decided here, once, by the session's features.
        let context = ExchangeContext(
            request: transportRequest, initialRequest: record.initialRequest,
            hasUploadBody: sendsUpload, bodyMayBeShared: sink.kind.allowsSharing,
            bodyMayBeStored: sink.kind.allowsStoring, settings: featureSettings, notifyMonitors: monitorNotifier(owner),
            requestQueue: RequestWorkQueue(executor: owner.shell.executor))
        let routed = session.route(context, sink: relay)
        record.origin = routed.origin
        let exchange = Exchange(number: number, request: request, transfer: routed.transfer, route: (context, routed.origin))
        apply(machine.transferStarted(attempt: attempt, exchange))
    }

    /// Lets a feature tell this request's monitors something from any thread: the call waits its
    /// turn on the executor behind the transport events already delivered. Scheduled, never run
    /// inline: the HTTP cache notifies from its exchange's queue (and would from a transport's
    /// thread), and an idle request's drain (its monitors, and whatever queues behind them) must
    /// not run there.
    private func monitorNotifier(_ owner: any RequestInternals) -> MonitorNotifier {
        guard !session.monitor.isEmpty || !requestMonitors.isEmpty else { return .none }
        return MonitorNotifier { [weak owner] event in
            owner?.engineAccess.schedule { engine in engine.notifyMonitors(event) }
        }
    }

    private func makeTransportRequest(_ request: URLRequest, attempt: Int) throws -> TransportRequest {
        guard let url = request.url, url.isHTTP else {
            throw CourierError(.invalidURL, "\"\(request.url?.absoluteString ?? "")\" is not an absolute http(s) URL.", url: request.url)
        }
        // The URLRequest holds one value per name, in no order: the lines come back from the
        // session's and the caller's headers wherever the request still says the same.
        var headers = request.headers.restoringLines(of: session.headers.merging(source.headers ?? [:]))
        if let storage = session.configuration.cookies.storage, !headers.contains("Cookie"),
            let cookies = storage.cookies(for: url), !cookies.isEmpty
        {
            HTTPCookie.requestHeaderFields(with: cookies).forEach { headers.update(name: $0.key, value: $0.value) }
        }
        // Monitors add theirs last (a trace context belongs to this exchange), and are checked below like the rest.
        notifyMonitors { $0.request($1, willSend: request, attempt: attempt, headers: &headers) }
        // The one place every request passes after the session, the request, its adapters and
        // the cookie store had their say: nothing that is not valid HTTP reaches a transport.
        try WireSyntax.check(method: request.method, headers: headers, url: url)
        let body: TransportBody
        if request.method == .get || request.method == .head, request.httpBody?.isEmpty == false || sendsUpload {
            throw CourierError(.encodingFailed, "A \(request.method) request cannot carry a body; use POST or another method.", url: url)
        }
        if request.httpBodyStream != nil, !sendsUpload {
            // Only an upload reads a stream (once, with the checks a stream needs): a body handed
            // in this way is refused before anything is sent, never sent empty.
            throw CourierError(
                .encodingFailed,
                "The URLRequest's httpBodyStream is not sent by this kind of request; upload the stream "
                    + "with Session.upload(_:to:method:headers:) instead.", url: url)
        }
        if let upload = try preparedUploadBody(for: request) {
            body = upload
        } else if let data = request.httpBody, !data.isEmpty {
            body = .data(data)
        } else {
            body = .empty
        }
        let timeout = source.timeout ?? (request.timeoutInterval != 60 ? request.timeoutInterval : session.configuration.requestTimeout)
        try sink.prepareExchange(request, headers: &headers)
        let ranged = headers.contains("Range")
        if ranged, !headers.contains("Accept-Encoding") { headers.update(name: "Accept-Encoding", value: "identity") }
        return TransportRequest(
            url: url, method: request.method, headers: headers, body: body,
            idleTimeout: timeout > 0 ? .milliseconds(Int64(timeout * 1000)) : nil,
            deadline: deadline,
            automaticDecompression: session.configuration.automaticDecompression && !ranged,
            flowControlWindow: sink.kind.flowControlWindow)
    }

    /// Handles one transport event, if it belongs to the exchange in flight.
    func handle(_ event: TransportEvent, exchange number: Int) {
        guard let live = machine.liveExchange(number) else {
            // Events of a cancelled or superseded exchange can still be queued behind the change; drop them.
            return
        }
        let exchange = live.transfer
        if machine.holdsEvents(of: number) {
            exchange.heldEvents.append(event)
            return
        }
        switch event {
        case .uploadProgress(let sent, let total):
            record.bytesSent = sent
            let progress = TransferProgress(completedUnitCount: sent, totalUnitCount: total)
            shared.uploadProgress.update(progress)
            notifyMonitors { $0.request($1, didUpdateUploadProgress: progress) }
        case .response(let head):
            receive(head, in: exchange)
        case .body(let data):
            receiveBody(data, in: exchange)
        case .completed(let error, let metrics):
            record.live = nil
            record.metrics = mergedMetrics(metrics)
            notifyMonitors { $0.request($1, didCompleteExchangeWith: metrics, error: error) }
            if let route = exchange.route {
                for feature in session.features { feature.exchangeDidComplete(route.context, origin: route.origin, error: error) }
            }
            var failure = error?.with(url: exchange.request.url, responseCode: exchange.head?.statusCode)
            if failure == nil, !machine.exchangeIsEnding, let trailers = metrics.trailerFields {
                failure = trailerLimitFailure(trailers, head: exchange.head)
            }
            if failure == nil, !machine.exchangeIsEnding { failure = truncationFailure(exchange) }
            apply(machine.transferCompleted(exchange: number, failure: failure))
        }
    }

    private func receive(_ head: ResponseHead, in exchange: Exchange) {
        exchange.head = head
        record.live?.headAt = .now
        record.live?.httpVersion = head.httpVersion
        exchange.headInstant = .now
        if let failure = headLimitFailure(head) {
            stop(exchange, failing: failure)
            return
        }
        if head.statusCode == 101 {
            // Courier never speaks another protocol on a connection: whether or not the request
            // asked for an upgrade, waiting for a body that will never come helps nobody.
            let asked = exchange.request.headers.contains("Upgrade")
            stop(
                exchange,
                failing: CourierError(
                    .invalidResponse,
                    asked
                        ? "The server switched protocols (101), which Courier cannot follow."
                        : "The server switched protocols (101) without being asked to upgrade.",
                    responseCode: 101, url: head.url))
            return
        }
        if head.statusCode < 200 {
            // Transports skip interim responses; FoundationNetworking (the URLSession transport
            // on Linux) instead reports the first one as the response, and the final status and
            // headers are lost: failing beats answering with a 1xx status and someone else's body.
            stop(
                exchange,
                failing: CourierError(
                    .invalidResponse,
                    "The transport reported the interim response \(head.statusCode) "
                        + "as the final one, so the final status and headers are unknown (FoundationNetworking does this; "
                        + "the curl transport reads past interim responses).", responseCode: head.statusCode, url: head.url))
            return
        }
        if let problem = head.contentLengthProblem {
            stop(exchange, failing: CourierError(.invalidResponse, problem, responseCode: head.statusCode, url: head.url))
            return
        }
        storeCookies(from: head)
        let response = LazyHTTPResponse(head: head)
        record.latestHead = response
        if let redirect = redirectRequest(for: head, in: exchange) {
            switch redirect {
            case .success(let next):
                notifyMonitors { $0.request($1, willRedirectTo: next, from: response.httpResponse) }
                return
            case .failure(let error):
                stop(exchange, failing: error)
                return
            }
        }
        exchange.response = response
        // With response-head handlers, the body waits (unacknowledged, so the transport pauses) until they decide.
        apply(machine.headArrived(exchange: exchange.number, askHandlers: !responseHeadHandlers.isEmpty))
    }

    /// The final head of `exchange` may bring its body: the sink takes it, then the events held meanwhile.
    func acceptHead(of exchange: Exchange) {
        guard let head = exchange.head, let response = exchange.response else { return }
        beginBody(head, response, in: exchange)
        guard !exchange.heldEvents.isEmpty else { return }
        let held = exchange.heldEvents
        exchange.heldEvents = []
        for event in held { handle(event, exchange: exchange.number) }
    }

    /// The final response head passed every check: the sink decides what happens to its body.
    func beginBody(_ head: ResponseHead, _ response: LazyHTTPResponse, in exchange: Exchange) {
        let disposition: BodyDisposition
        do {
            disposition = try sink.begin(head, method: exchange.request.method)
        } catch {
            stop(exchange, failing: CourierError(wrapping: error, url: head.url))
            return
        }
        exchange.disposition = disposition
        if case .store(_, let total) = disposition, let failure = sizeLimitFailure(announcedTotal: total, head: head) {
            record.response = response
            stop(exchange, failing: failure)
            return
        }
        switch disposition {
        case .store(let offset, let total):
            record.response = response
            record.bytesReceived = offset
            shared.downloadProgress.update(TransferProgress(completedUnitCount: offset, totalUnitCount: total))
        case .alreadyComplete(let total):
            // The store holds every byte and the server confirmed the length: answer as if it sent them.
            record.response = LazyHTTPResponse(head: head.completedFromStore(length: total))
            record.bytesReceived = total
            shared.downloadProgress.update(TransferProgress(completedUnitCount: total, totalUnitCount: total))
        case .restart:
            var again = exchange.request
            ["Range", "If-Range"].forEach { again.setValue(nil, forHTTPHeaderField: $0) }
            machine.restart(exchange: exchange.number, with: again)
            return
        }
        if let response = record.response { notifyMonitors { $0.request($1, didReceiveResponse: response.httpResponse) } }
        if sink.kind.validatesAtHead, let response = record.response, let failure = firstValidationFailure(response, body: .memory(nil)) {
            stop(exchange, failing: failure)
        }
    }

    private func receiveBody(_ data: Data, in exchange: Exchange) {
        guard !machine.exchangeIsEnding, case .store(let offset, let total)? = exchange.disposition else {
            exchange.transfer.acknowledge(data.count)
            return
        }
        if let failure = sizeLimitFailure(seen: offset + exchange.received + Int64(data.count), head: exchange.head) {
            exchange.transfer.acknowledge(data.count)
            stop(exchange, failing: failure)
            return
        }
        do {
            try sink.append(data, from: exchange.transfer)
        } catch {
            stop(exchange, failing: CourierError(wrapping: error, url: exchange.head?.url))
            return
        }
        exchange.received += Int64(data.count)
        record.bytesReceived += Int64(data.count)
        record.live?.bytesReceived += Int64(data.count)
        let progress = TransferProgress(
            completedUnitCount: record.bytesReceived,
            totalUnitCount: total >= 0 ? max(total, record.bytesReceived) : -1)
        shared.downloadProgress.update(progress)
        notifyMonitors { $0.request($1, didUpdateDownloadProgress: progress) }
    }

    /// Ends `exchange` as failed: its first failure is the one it ends with, and the transport stops.
    private func stop(_ exchange: Exchange, failing failure: CourierError) {
        apply(machine.exchangeFailed(exchange: exchange.number, failure))
    }

    /// A body shorter than its `Content-Length` is a lost connection, never a silent success.
    private func truncationFailure(_ exchange: Exchange) -> CourierError? {
        guard case .store? = exchange.disposition, let head = exchange.head, !head.hasNoBody(for: exchange.request.method) else {
            return nil
        }
        let expected = head.expectedContentLength
        guard expected >= 0, exchange.received < expected else { return nil }
        return CourierError(
            .connectionLost, "The connection closed after \(exchange.received) of \(expected) body bytes.",
            responseCode: head.statusCode, url: head.url)
    }

    func mergedMetrics(_ metrics: TransferMetrics) -> TransferMetrics {
        var merged = metrics.values
        merged.redirectCount = machine.redirectHistory.count
        merged.total = ContinuousClock.now - createdAt
        return TransferMetrics(merged)
    }

    private func storeCookies(from head: ResponseHead) {
        guard !head.setCookies.isEmpty, let storage = session.configuration.cookies.storage else { return }
        let cookies = head.setCookies.flatMap { HTTPCookie.cookies(withResponseHeaderFields: ["Set-Cookie": $0], for: head.url) }
        storage.setCookies(cookies, for: head.url, mainDocumentURL: nil)
    }
}

/// Carries a transport's events for one exchange onto the request's executor, in order.
///
/// It holds the request strongly: a request nobody else references (a callback-style request, say)
/// lives as long as the transport may still report to it.
final class ExchangeRelay: TransportEventSink {
    private let request: any RequestInternals
    private let executor: RequestExecutor
    private let exchange: Int

    init(request: any RequestInternals, exchange: Int) {
        self.request = request
        executor = request.shell.executor
        self.exchange = exchange
    }

    func receive(_ event: TransportEvent) {
        // Never on the transport's thread: it serves every other transfer too.
        executor.deliver(event, to: self)
    }

    /// Hands `event`, and the events queued right behind it, to the engine; called by the
    /// executor's drain, isolated to the request.
    func handle(_ event: TransportEvent) {
        request.runOnExecutor { [self] engine in
            var current = event
            while true {
                engine.handle(current, exchange: exchange)
                guard let following = executor.takeNextEvent(for: self) else { return }
                current = following
            }
        }
    }
}

extension ResponseHead {
    /// The head as Foundation's response type.
    var httpURLResponse: HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headers.dictionary)
    }

    /// A 200 standing for a body the download store already holds in full.
    func completedFromStore(length: Int64) -> ResponseHead {
        var fields = headers.filter { !["Content-Range", "Content-Length", "Content-Type"].contains($0.name) }
            .map { (name: $0.name, value: $0.value) }
        fields.append((name: "Content-Length", value: String(length)))
        return ResponseHead(statusCode: 200, fields: fields, url: url, httpVersion: httpVersion)
    }

    /// Whether this response cannot have a body: HEAD, 1xx, 204 and 304 (RFC 9110 §6.4.1).
    func hasNoBody(for method: HTTPMethod) -> Bool {
        method == .head || (100..<200).contains(statusCode) || statusCode == 204 || statusCode == 304
    }
}

extension CourierError {
    /// What an adapter's error becomes: `.adaptationFailed` with the original as `underlyingError`,
    /// whatever its type (a `CourierError` of another kind included). Kept as they are: an error
    /// that already is `.adaptationFailed`, and `.authenticationFailed`, the more precise kind
    /// `AuthenticationInterceptor` documents for its adapter.
    static func adaptationFailure(_ error: any Error, url: URL?) -> CourierError {
        if let courier = error as? CourierError, courier.kind == .adaptationFailed || courier.kind == .authenticationFailed {
            return courier.with(url: url)
        }
        let reason = (error as? CourierError).map { "\($0.kind): \($0.message)" } ?? "\(error)"
        return CourierError(.adaptationFailed, "A request adapter failed: \(reason)", underlyingError: error, url: url)
    }
}
