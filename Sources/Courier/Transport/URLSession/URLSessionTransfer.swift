import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// One exchange on URLSession, with Courier's own pause and timeouts.
///
/// Every delivery to the sink happens on the transport's serial delegate queue (public methods
/// hop onto it), so events stay ordered and `completed` is delivered exactly once.
///
/// URLSession's `suspend()` on Linux drops the connection and silently downloads everything again,
/// so `suspend()` here is Courier's own: for GET and HEAD the task is cancelled and `resume()`
/// continues with `Range: bytes=N-` (+ `If-Range` when the response had a validator and
/// `Accept-Encoding: identity`); for other methods the task keeps running and its events are held
/// until `resume()`.
///
/// URLSession has no backpressure: a stream's consumer that falls behind cannot hold the server
/// back. ``acknowledge(_:)`` counts what the consumer took, and a transfer whose body waits for
/// its consumer beyond ``TransportRequest/maximumUnacknowledgedBytes`` fails at once with
/// `.responseTooLarge`. The limits are checked in `didReceive data`, which the delegate queue
/// keeps close behind FoundationNetworking's reading (see ``URLSessionDelegateQueue``).
///
/// Every transition is ``URLSessionTransferState``'s: this class only turns callbacks and verbs
/// into its events and performs the actions it returns (start or cancel a task, deliver, finish).
final class URLSessionTransfer: TransportTransfer, Sendable {
    /// The lifecycle machine on URLSession's tasks.
    typealias Machine = URLSessionTransferState<URLSessionTask>

    /// The machine and the bookkeeping for metrics and the idle timeout.
    private struct State {
        var machine: Machine
        /// The last time the current task sent or received anything, or the transfer was resumed
        /// (on the transport's ``TransportClock``, as are the other instants the timeouts use).
        var lastActivity: ContinuousClock.Instant
        var bytesSent: Int64 = 0
        var timeToFirstByte: Duration?
        /// Where the minimum transfer rate's current window started, and the bytes moved by then.
        var rateWindow: (start: ContinuousClock.Instant, bytes: Int64)
        /// `cancel()` was called: body bytes still queued on the delegate queue are dropped.
        var cancelRequested = false
        /// The status of the current response, once its head arrived.
        var statusCode: Int?
        /// The `Content-Length` of a response with a content coding: the coded bytes, which
        /// URLSession does not count (it hands over decoded bytes only).
        var codedLength: Int64?
        /// Body bytes the sink has acknowledged (taken), of those delivered.
        var acknowledged: Int64 = 0
    }

    private let request: TransportRequest
    private let sink: any TransportEventSink
    private let transport: URLSessionTransport
    private let state: Locked<State>
    /// The private copy of a file body the task uploads (FoundationNetworking), removed at the end.
    private let bodyCopy = Locked<URL?>(nil)
    private let startDate = Date()
    private let startInstant = ContinuousClock.now

    init(request: TransportRequest, sink: any TransportEventSink, transport: URLSessionTransport) {
        self.request = request
        self.sink = sink
        self.transport = transport
        let machine = Machine(pausesByRestarting: request.method == .get || request.method == .head)
        let now = transport.clock.now
        self.state = Locked(State(machine: machine, lastActivity: now, rateWindow: (now, 0)))
    }

    // MARK: - Public verbs (any thread)

    func start() {
        if request.httpVersion != .automatic {
            let error = CourierError(
                .invalidConfiguration,
                "The URLSession transport cannot choose the HTTP version "
                    + "(\(request.httpVersion) was asked for); use the curl transport.", url: request.url)
            transport.delegateQueue.schedule { [self] in handle(.startFailed(error)) }
            return
        }
        if case .stream(let stream) = request.body {
            guard !stream.sendsTrailers else {
                let error = CourierError(
                    .invalidConfiguration,
                    "The URLSession transport cannot send request trailers (FoundationNetworking has no way to); "
                        + "use the curl transport.", url: request.url)
                transport.delegateQueue.schedule { [self] in handle(.startFailed(error)) }
                return
            }
            do throws(CourierError) {
                try stream.claim(url: request.url)
            } catch {
                transport.delegateQueue.schedule { [self] in handle(.startFailed(error)) }
                return
            }
        }
        #if canImport(FoundationNetworking)
        // FoundationNetworking reads an upload file to its end whatever length it announced, so
        // bytes a file gained since it was measured would reach the server after the body, as the
        // start of another request. The task uploads a private copy of exactly the announced
        // length instead, made off the delegate queue; a file that changed fails the transfer.
        if case .file(let url, let length) = request.body {
            DispatchQueue.global().async { [self] in
                do throws(CourierError) {
                    let copy = try CourierError.mappingFileSystem { () throws(FileSystemFailure) in
                        try TemporaryFiles.makeURL(in: TemporaryFiles.defaultDirectory, prefix: "upload")
                    }
                    try UploadFile.copy(url, length: length, to: copy)
                    bodyCopy.withLock { $0 = copy }
                    transport.delegateQueue.schedule { [self] in
                        handle(.start, resetsIdleClock: true)
                        armTimer()
                    }
                } catch {
                    transport.delegateQueue.schedule { [self] in handle(.startFailed(error)) }
                }
            }
            return
        }
        #endif
        transport.delegateQueue.schedule { [self] in
            handle(.start, resetsIdleClock: true)
            armTimer()
        }
    }

    deinit {
        TemporaryFiles.remove(bodyCopy.withLock { $0 })
    }

    func suspend() {
        transport.delegateQueue.schedule { [self] in handle(.suspend) }
    }

    func resume() {
        transport.delegateQueue.schedule { [self] in handle(.resume, resetsIdleClock: true) }
    }

    func cancel() {
        let task = state.withLock { state in
            state.cancelRequested = true
            return state.machine.currentTask
        }
        transport.delegateQueue.schedule { [self] in handle(.cancel) }
        // The operation above waits behind the callbacks already queued: stop the network now,
        // and drop the body bytes queued meanwhile.
        if let task { cancelTask(task) }
    }

    /// Cancels `task`. A streamed body is stopped first: the cancel runs on FoundationNetworking's
    /// queue, which may be waiting in the stream's read for bytes that only the stop ends.
    private func cancelTask(_ task: URLSessionTask, then next: @escaping @Sendable () -> Void = {}) {
        if case .stream(let stream) = request.body { stream.stop() }
        transport.cancelTask(task, then: next)
    }

    /// Counts what the sink took: URLSession cannot pause, so this reopens nothing, but what was
    /// delivered and not taken is bounded (``TransportRequest/maximumUnacknowledgedBytes``).
    func acknowledge(_ bytes: Int) {
        state.withLock { $0.acknowledged += Int64(bytes) }
    }

    // MARK: - Delegate callbacks (delegate queue)

    func taskDidReceive(_ response: URLResponse, task: URLSessionTask) {
        var head: ResponseHead?
        if let http = response as? HTTPURLResponse, let url = http.url {
            let fields = http.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
                guard let name = key as? String else { return nil }
                return (name, "\(value)")
            }
            // FoundationNetworking keeps one joined value per name and no wire order: the lines are
            // given sorted by name, so the same head reads the same every time.
            .sorted { $0.name.lowercased() < $1.name.lowercased() }
            head = ResponseHead(statusCode: http.statusCode, fields: fields, url: url, httpVersion: "HTTP/1.1")
            // FoundationNetworking decodes every content coding it knows and fails on the others.
            if let coding = head?.headers["Content-Encoding"]?.trimmedASCII, !coding.isEmpty, !coding.caseInsensitiveEquals("identity") {
                head?.bodyIsDecoded = true
            }
        }
        handle(.responseReceived(task, head), from: task) { state, now in
            if state.timeToFirstByte == nil { state.timeToFirstByte = now - startInstant }
            state.statusCode = head?.statusCode
            state.codedLength = head.flatMap(Self.codedLength)
        }
        if let limit = request.maximumBodySize, let head, !(300..<400).contains(head.statusCode),
            !head.hasNoBody(for: request.method), head.expectedContentLength > limit
        {
            stopOverLimit()
        }
    }

    /// Ends the transfer as soon as its body is over ``TransportRequest/maximumBodySize``. The
    /// request layer, which already has the head or the chunk that crossed the limit, reports
    /// the failure; stopping here, without waiting for it, keeps a fast server from pushing
    /// much more through a transport that has no backpressure.
    /// Called on the delegate queue, so the transfer ends here and now.
    private func stopOverLimit() {
        state.withLock { $0.cancelRequested = true }
        handle(.cancel)
    }

    func taskDidReceive(_ data: Data, task: URLSessionTask) {
        if state.withLock({ $0.cancelRequested }) { return }
        handle(.dataReceived(task, data), from: task)
        if let limit = request.maximumBodySize,
            state.withLock({ $0.machine.receivedBytes > limit && !(300..<400).contains($0.statusCode ?? 200) })
        {
            stopOverLimit()
        }
        if let failure = state.withLock({ limitFailure($0) }) {
            state.withLock { $0.cancelRequested = true }
            handle(.rejected(failure))
        }
    }

    /// The failure for a body past the decompression ratio, or waiting for its consumer beyond
    /// the bound, if any.
    private func limitFailure(_ state: State) -> CourierError? {
        if let ratio = request.maximumDecompressionRatio, let coded = state.codedLength,
            let failure = DecompressionRatioLimit.failure(
                decoded: state.machine.receivedBytes, coded: coded, ratio: ratio, statusCode: state.statusCode, url: request.url)
        {
            return failure
        }
        if let bound = request.maximumUnacknowledgedBytes {
            return UnacknowledgedBytesLimit.failure(
                waiting: state.machine.receivedBytes - state.acknowledged, bound: bound, statusCode: state.statusCode, url: request.url)
        }
        return nil
    }

    /// The coded length of a decoded body: its `Content-Length` when a content coding other than
    /// `identity` applies (URLSession decodes it), else `nil`.
    private static func codedLength(_ head: ResponseHead) -> Int64? {
        guard let coding = head.headers["Content-Encoding"], !coding.trimmedASCII.isEmpty,
            !coding.trimmedASCII.caseInsensitiveEquals("identity"),
            let length = head.headers["Content-Length"].flatMap({ Int64($0.trimmedASCII) }), length >= 0
        else { return nil }
        return length
    }

    func taskDidSend(_ totalSent: Int64, of expected: Int64, task: URLSessionTask) {
        let total = expected > 0 ? expected : request.body.length
        handle(.bodySent(task, sent: totalSent, total: total), from: task) { state, _ in state.bytesSent = totalSent }
    }

    func taskDidComplete(_ task: URLSessionTask, error: (any Error)?) {
        handle(.taskCompleted(task, error: error))
    }

    // MARK: - Feeding events, performing actions (delegate queue)

    /// Feeds `event` to the machine and performs its actions. When `task` is the current task, its
    /// activity restarts the idle clock and `note` records it for the metrics first (with the
    /// system's time, whatever clock the timeouts run on).
    private func handle(
        _ event: Machine.Event, from task: URLSessionTask? = nil, resetsIdleClock: Bool = false,
        note: (inout State, ContinuousClock.Instant) -> Void = { _, _ in }
    ) {
        let actions = state.withLock { state -> [Machine.Action] in
            let now = ContinuousClock.now
            let timeoutNow = transport.clock.isManual ? transport.clock.now : now
            if resetsIdleClock { state.lastActivity = timeoutNow }
            if let task, state.machine.isCurrent(task) {
                state.lastActivity = timeoutNow
                note(&state, now)
            }
            return state.machine.handle(event)
        }
        perform(actions)
    }

    /// Performs `actions` in order; those after a task's cancel wait until it is done (the
    /// transfer's end is reported after the cancel, see ``URLSessionTransport/cancelTask(_:then:)``).
    private func perform(_ actions: [Machine.Action]) {
        for (index, action) in actions.enumerated() {
            if case .cancelTask(let task) = action {
                let rest = Array(actions[(index + 1)...])
                cancelTask(task) { [self] in perform(rest) }
                return
            }
            perform(action)
        }
    }

    private func perform(_ action: Machine.Action) {
        switch action {
        case .startTask(let continuation):
            var body = request.body
            if let copy = bodyCopy.withLock({ $0 }) { body = .file(copy, length: body.length) }
            transport.startTask(makeURLRequest(continuation), body: body, for: self) { [self] task in
                // The transport was shut down before this transfer's task could be made.
                guard let task else { return handle(.cancel) }
                handle(.taskStarted(task))
            }
        case .cancelTask(let task):
            cancelTask(task)
        case .deliver(let delivery):
            sink.receive(delivery.event)
        case .finish(let end):
            TemporaryFiles.remove(
                bodyCopy.withLock { copy in
                    defer { copy = nil }; return copy
                })
            let metrics = state.withLock { self.metrics($0) }
            var error = end.error(url: request.url)
            if case .stream(let stream) = request.body {
                stream.stop()
                // URLSession reports the aborted upload as its own error; the stream's says why.
                if error != nil, let failure = stream.failure { error = failure.with(url: request.url) }
            }
            sink.receive(.completed(error: error, metrics: metrics))
        }
    }

    private func metrics(_ state: State) -> TransferMetrics {
        TransferMetrics(
            start: startDate, timeToFirstByte: state.timeToFirstByte, total: .now - startInstant,
            bytesSent: state.bytesSent, bytesReceived: state.machine.receivedBytes, transport: "urlSession")
    }

    private func makeURLRequest(_ continuation: Machine.Continuation?) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        // A URLRequest holds one value per name: repeated lines go out joined (RFC 9110 §5.3),
        // never dropped. Without an Accept-Encoding, FoundationNetworking adds the codings it decodes.
        for (name, value) in request.headers.dictionary { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if case .data(let data) = request.body { urlRequest.httpBody = data }
        if case .stream(let stream) = request.body {
            // FoundationNetworking sends every stream chunked, even one that declares its length
            // (Courier still holds it to that length); a Content-Length beside chunked framing
            // would make servers refuse the request.
            urlRequest.setValue(nil, forHTTPHeaderField: "Content-Length")
            urlRequest.httpBodyStream = URLSessionBodyInputStream(stream)
        }
        if !request.automaticDecompression, !request.headers.contains("Accept-Encoding") {
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        if let continuation {
            urlRequest.setValue("bytes=\(continuation.offset)-", forHTTPHeaderField: "Range")
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            if let validator = continuation.validator {
                urlRequest.setValue(validator, forHTTPHeaderField: "If-Range")
            }
        }
        return urlRequest
    }

    // MARK: - Timeouts

    /// Schedules the first timeout check; each check schedules the next one until the transfer
    /// ends. On a test's ``ManualTransportClock``, whose time moves only when the test moves it,
    /// the checks run when it does instead.
    private func armTimer() {
        guard request.idleTimeout != nil || request.deadline != nil || request.minimumTransferRate != nil else { return }
        if transport.clock.isManual {
            transport.clock.observeAdvances(self)
            return
        }
        scheduleCheck(after: state.withLock { nextCheck(from: $0.lastActivity, rateWindowStart: $0.rateWindow.start) })
    }

    private func nextCheck(from lastActivity: ContinuousClock.Instant, rateWindowStart: ContinuousClock.Instant) -> Duration {
        let now = transport.clock.now
        var next: ContinuousClock.Instant = now + .seconds(3600)
        if let idle = request.idleTimeout { next = min(next, lastActivity + idle) }
        if let deadline = request.deadline { next = min(next, deadline) }
        if let rate = request.minimumTransferRate { next = min(next, rateWindowStart + rate.window) }
        return max(.milliseconds(1), next - now)
    }

    // A chain of one-shot checks rather than a timer object: nothing to cancel, and a check that
    // finds the transfer finished simply ends the chain.
    private func scheduleCheck(after delay: Duration) {
        let nanoseconds = Int(delay.components.seconds) * 1_000_000_000 + Int(delay.components.attoseconds / 1_000_000_000)
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
            guard let self else { return }
            transport.delegateQueue.schedule { self.checkTimeouts() }
        }
    }

    /// Fails the transfer when a timeout expired, otherwise schedules the next check (on the
    /// system clock; a manual clock's advances run the checks themselves).
    private func checkTimeouts() {
        let now = transport.clock.now
        let verdict = state.withLock { state -> (expired: Machine.Timeout?, next: Duration?) in
            if state.machine.isFinished { return (nil, nil) }
            if let deadline = request.deadline, now >= deadline { return (.deadline, nil) }
            // Only a running task counts towards the idle timeout; time suspended does not.
            // Nor towards the minimum transfer rate: its window starts again on resuming.
            let moved = state.bytesSent + state.machine.receivedBytes
            guard state.machine.idleClockRuns else {
                state.lastActivity = now
                state.rateWindow = (now, moved)
                return (nil, nextCheck(from: now, rateWindowStart: now))
            }
            if let idle = request.idleTimeout, now - state.lastActivity >= idle { return (.idle(idle), nil) }
            if let rate = request.minimumTransferRate, now - state.rateWindow.start >= rate.window {
                let inWindow = moved - state.rateWindow.bytes
                if Double(inWindow) < Double(rate.bytesPerSecond) * (now - state.rateWindow.start).timeInterval {
                    return (.tooSlow(rate, moved: inWindow), nil)
                }
                state.rateWindow = (now, moved)
            }
            return (nil, nextCheck(from: state.lastActivity, rateWindowStart: state.rateWindow.start))
        }
        if let expired = verdict.expired {
            handle(.timedOut(expired))
        } else if let next = verdict.next, !transport.clock.isManual {
            scheduleCheck(after: next)
        }
    }
}

extension URLSessionTransfer: TransportClockObserver {
    /// A test's clock moved: checks the timeouts on the delegate queue, then calls `done`.
    func clockAdvanced(done: @escaping @Sendable () -> Void) {
        transport.delegateQueue.addOperation { [self] in
            checkTimeouts()
            done()
        }
    }
}

extension ResponseHead {
    /// A validator usable in `If-Range`: a strong ETag, else Last-Modified.
    var strongValidator: String? {
        if let etag = headers["ETag"], !etag.hasPrefix("W/") { return etag }
        return headers["Last-Modified"]
    }

    /// The parsed `Content-Range: bytes a-b/total` of a 206.
    var contentRange: (start: Int64, end: Int64, total: Int64?)? {
        guard let value = headers["Content-Range"]?.trimmingCharacters(in: .whitespaces), value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        let parts = spec.split(separator: "/", maxSplits: 1)
        guard parts.count == 2 else { return nil }
        let bounds = parts[0].split(separator: "-", maxSplits: 1)
        guard bounds.count == 2, let start = Int64(bounds[0]), let end = Int64(bounds[1]), start <= end else { return nil }
        return (start, end, parts[1] == "*" ? nil : Int64(parts[1]))
    }
}
