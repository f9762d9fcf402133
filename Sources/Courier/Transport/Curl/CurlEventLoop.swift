import CCurl
import CourierSupport
import Foundation
import Synchronization

/// One event loop of a ``CurlTransport``: owns a libcurl multi handle and the transfers on it,
/// and runs on a dedicated thread of its own (a transport starts more loops under concurrent load).
///
/// Ownership rule: the multi handle, the easy handles, every ``CurlExchange`` and the rest of the
/// loop's state are touched only during a *pass*, under the pass lock. The loop thread runs its
/// passes and releases the lock only to sleep in the reactor. A thread that starts a transfer while
/// the loop sleeps runs the pass itself (``runPassIfIdle()``), so the request goes out without
/// waking the loop; where the reactor cannot watch new sockets during a sleep (poll(2) outside
/// Linux) it never does. Other threads otherwise reach the loop through the ``CurlMailbox``.
/// libcurl calls the transfer callbacks inside a pass, on whichever thread runs it.
///
/// One iteration: take the queued commands, run libcurl's timer work if it is due (a transfer just
/// added or unpaused is), deliver finished transfers, fire due Courier timeouts, start the request
/// drains the pass held back (``DeliveryBatch``), then sleep in the reactor (epoll on Linux) until a
/// socket is ready, libcurl's timer is due, the nearest Courier timeout is due, or a sender wakes
/// it; the reactor hands only the ready sockets to `curl_multi_socket_action`, so a pass costs
/// nothing for transfers without an event.
final class CurlEventLoop: @unchecked Sendable {
    // `passLock` guards every `var` below and the multi handle: all are touched only inside a pass.
    /// Where other threads queue commands for this loop.
    let mailbox: CurlMailbox

    private let multi: OpaquePointer
    /// The wait set libcurl's sockets and timer are watched in (`ccurl_reactor`).
    private let reactor: OpaquePointer
    private let defaults: CurlHandleDefaults
    /// Keeps the CA bundle that `defaults` names alive while this loop runs: a loop detached at
    /// shutdown may outlive its transport, and the bundle file goes with its last owner.
    private let trustStore: CurlTrustStore?
    private let passLock = CurlPassLock()
    private let clock: CurlActivityClock
    /// What to call once the timeouts due after a test's clock moved have fired (see ``TransportClockObserver``).
    private var clockChecks: [@Sendable () -> Void] = []
    private var exchanges: [ObjectIdentifier: CurlExchange] = [:]
    private var commands: [CurlCommand] = []
    /// Idle easy handles, as many as the connections libcurl keeps: a new handle costs a fresh receive
    /// buffer (a `mmap` and its page faults), so a steady burst must find its handles again.
    private var pool: CurlEasyPool
    /// The earliest instant a Courier timeout may fire; activity only ever moves timeouts later, so
    /// nothing needs checking before this.
    private var nextTimeoutCheck: ContinuousClock.Instant?
    private var stopping = false
    /// Set under the pass lock before the loop thread releases the multi handle; a late
    /// ``runPassIfIdle()`` then does nothing.
    private var closed = false
    /// Transfers that delivered `completed` and still hold libcurl resources, with whether their
    /// easy handle must still leave the multi handle; see `releaseFinished()`.
    private var finished: [(exchange: CurlExchange, remove: Bool)] = []
    /// How long a pass on a caller's thread may wait for the response it sent.
    private var responseWait: CurlResponseWait
    /// Each transfer's receive buffer, from what its origin's recent responses needed.
    private var receiveBuffers: CurlReceiveBufferSizing
    /// How many times the loop thread woke from its sleep (for tests: an idle loop must stay asleep).
    private let wakeUps = Atomic<Int>(0)
    /// How many responses a pass on a caller's thread waited for and handled itself (for tests).
    private let answeredOnCallers = Atomic<Int>(0)
    /// The loop thread's scheduling policy, from the transfers it carries (loop thread only).
    private var scheduling = CurlLoopScheduling(enabled: FastPaths.isOn(.loopyield))
    /// Whether the kernel reported the loop thread a batch thread after its last policy change (for tests).
    private let threadIsBatch = Atomic<Bool>(false)

    /// The longest sleep when nothing else bounds it, in milliseconds.
    private static let maximumPollMilliseconds: Int32 = 60_000

    /// Creates the multi handle; this loop may open at most `perHostConnections` connections to one host.
    init(perHostConnections: Int, defaults: CurlHandleDefaults, trustStore: CurlTrustStore?) throws(CourierError) {
        guard let multi = ccurl_multi_init() else {
            throw CourierError(.transportFailed, "libcurl could not create a multi handle.")
        }
        let perHost = max(1, perHostConnections)
        // A fixed cache size: libcurl's default (4 x handles in use) shrinks between bursts and
        // closes connections that the next burst would reuse.
        let cachedConnections = max(64, 4 * perHost)
        do {
            try Self.set(.maxHostConnections, perHost, on: multi)
            try Self.set(.maxConnects, cachedConnections, on: multi)
            // libcurl's own cap is 100 streams per HTTP/2 connection; above it, the server's
            // SETTINGS_MAX_CONCURRENT_STREAMS decides when another connection opens.
            try Self.set(.maxConcurrentStreams, 1000, on: multi)
        } catch {
            ccurl_multi_cleanup(multi)
            throw error
        }
        guard let reactor = ccurl_reactor_create(multi) else {
            ccurl_multi_cleanup(multi)
            throw CourierError(.transportFailed, "The curl event loop could not create its wait set (errno \(errno)).")
        }
        var refusedOption: UnsafePointer<CChar>?
        let installed = ccurl_reactor_install(reactor, &refusedOption)
        guard installed == 0 else {
            ccurl_multi_cleanup(multi)
            ccurl_reactor_destroy(reactor)
            throw CourierError(refusedMultiOption: refusedOption.map { String(cString: $0) } ?? "a reactor callback", code: installed)
        }
        pool = CurlEasyPool(capacity: cachedConnections)
        responseWait = CurlResponseWait(limit: defaults.responseWaitLimit)
        receiveBuffers = CurlReceiveBufferSizing(largest: defaults.receiveBufferSize)
        self.multi = multi
        self.reactor = reactor
        self.defaults = defaults
        self.trustStore = trustStore
        mailbox = CurlMailbox(reactor: reactor, transportTransfers: defaults.transfers)
        clock = CurlActivityClock(source: defaults.clock)
        defaults.clock.observeAdvances(self)
    }

    /// Releases the multi handle of a loop whose thread never started.
    func discard() {
        mailbox.takeCommands(into: &commands)
        for case .clockAdvanced(let done) in commands { done() }
        commands.removeAll()
        mailbox.close()
        ccurl_multi_cleanup(multi)
        ccurl_reactor_destroy(reactor)
    }

    /// Runs until a `.shutdown` command, then finishes every transfer and cleans up. Loop thread only.
    func run() {
        // Every event delivered during one pass reaches its request in one drain (see DeliveryBatch).
        let batch = FastPaths.isOn(.batch) ? DeliveryBatch.begin() : nil
        defer { batch?.end() }
        passLock.lock()
        while true {
            clock.tick()
            mailbox.takeCommands(into: &commands)
            runCommands()
            if stopping { break }

            // What the last sleep's sockets finished is delivered here too, after the commands:
            // a cancel that raced a transfer's end still wins (see `apply`).
            finishPass()
            batch?.flush()
            reportClockChecks()
            releaseFinished()
            if scheduling.update(transfers: defaults.transfers.current) {
                threadIsBatch.store(CurlLoopScheduling.callingThreadIsBatch, ordering: .relaxed)
            }
            if mailbox.prepareToWait(idle: exchanges.isEmpty) {
                let milliseconds = ccurl_reactor_prepare_wait(reactor, waitTimeout())
                passLock.unlock()
                ccurl_reactor_poll(reactor, milliseconds)
                wakeUps.add(1, ordering: .relaxed)
                passLock.lock()
                let code = ccurl_reactor_dispatch(reactor)
                if code > 0 { failAll(multiCode: code) }
            }
        }
        closed = true
        reportClockChecks()
        releaseFinished()
        mailbox.close()
        pool.removeAll()
        ccurl_multi_cleanup(multi)
        passLock.unlock()
        ccurl_reactor_destroy(reactor)
    }

    /// Runs a pass on the calling thread for the commands queued while the loop sleeps (see
    /// ``CurlMailbox/sendOfferingPass(_:passAllowed:)``): a new transfer's request goes out from
    /// here, and the loop thread wakes only for its response. Returns false, doing nothing, when a pass is
    /// already running elsewhere; the caller must then wake the loop.
    ///
    /// Events the pass produces reach their sinks on this thread, outside any ``DeliveryBatch``.
    func runPassIfIdle() -> Bool {
        passLock.withLockIfAvailable {
            guard !closed else { return }
            ccurl_reactor_begin_foreign_pass(reactor)
            clock.tick()
            mailbox.takeCommandsDuringWait(into: &commands)
            runCommands()
            if !stopping {
                finishPass()
                reportClockChecks()
                awaitQuickResponse()
            }
            releaseFinished()
            let code = ccurl_reactor_end_foreign_pass(reactor)
            if code > 0 { failAll(multiCode: code) }
            // The loop thread sleeps on until a deadline it computed before this pass: wake it if
            // the pass added an earlier one (a short timeout, a libcurl timer) or shut the loop down.
            if stopping || ccurl_reactor_wakes_in_time(reactor, waitTimeout()) == 0 {
                mailbox.wakeIfWaiting()
            }
        } != nil
    }

    /// In a pass on a caller's thread: waits a little for the answer to the request the pass sent,
    /// while recent answers on this loop came fast (``CurlResponseWait``), and handles it here. The
    /// wait ends early when a sender wakes the loop (a cancel, another request).
    private func awaitQuickResponse() {
        guard !exchanges.isEmpty, let window = responseWait.window else { return }
        let deadline = ContinuousClock.now + window
        while !exchanges.isEmpty {
            let remaining = deadline - .now
            guard remaining > .zero else { return }
            let (seconds, attoseconds) = remaining.components
            let code = ccurl_reactor_await_pending(reactor, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
            if code < 0 { return }
            if code > 0 {
                failAll(multiCode: code)
                return
            }
            let running = exchanges.count
            finishPass()
            if exchanges.count < running { answeredOnCallers.add(running - exchanges.count, ordering: .relaxed) }
        }
    }

    /// For tests (any thread): the next socket libcurl asks this loop to watch is refused as if its
    /// descriptor were negative, so the transfer it belongs to fails.
    func refuseNextSocket() { ccurl_reactor_refuse_next_socket(reactor) }

    /// How many times the loop thread woke from its sleep so far.
    var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }

    /// How many transfers ended while a pass on a caller's thread waited for their answer.
    var answeredOnCallersCount: Int { answeredOnCallers.load(ordering: .relaxed) }

    /// Whether the loop thread runs as a batch thread (``CurlLoopScheduling``), as the kernel
    /// reported after the loop's last change of policy.
    var threadYieldsOnWake: Bool { threadIsBatch.load(ordering: .relaxed) }

    /// Whether the calling thread is running a pass of this loop away from the loop's own thread.
    var isRunningPassOnCurrentThread: Bool { passLock.isHeldByCurrentThreadForAPass }

    /// Handles the commands taken from the mailbox.
    private func runCommands() {
        for command in commands { handle(command) }
        commands.removeAll(keepingCapacity: true)
    }

    /// Runs libcurl's due timer work, then fails transfers whose socket the reactor refused,
    /// delivers what finished and fires due timeouts.
    private func finishPass() {
        let code = ccurl_reactor_run_timers(reactor)
        clock.stampActivity()
        if code > 0 { failAll(multiCode: code) }  // (-1, CURLM_CALL_MULTI_PERFORM, is not an error)
        failRefusedTransfers()
        deliverCompletions()
        checkTimeouts()
    }

    // MARK: - Commands

    /// Turns one command into a state-machine event for its transfer.
    private func handle(_ command: CurlCommand) {
        switch command {
        case .start(let handle):
            let exchange = CurlExchange(handle: handle, clock: clock)
            exchanges[ObjectIdentifier(handle)] = exchange
            // Cancelled before the loop got here: never touch the network (its `.cancel` command,
            // still queued, will find nothing to do).
            if handle.cancelRequested.load(ordering: .sequentiallyConsistent) {
                apply(.cancel, to: exchange)
                return
            }
            // Its deadline passed before the loop got here: the request must not reach the server
            // (libcurl may connect and send within the pass that adds it, before timeouts are checked).
            if let timeout = exchange.expiredTimeout(at: clock.now) {
                apply(.timedOut(timeout), to: exchange)
                return
            }
            apply(.start(suspended: handle.suspendRequested.load(ordering: .sequentiallyConsistent)), to: exchange)
            schedule(exchange.timeoutInstant)
        case .updatePause(let handle):
            guard let exchange = exchanges[ObjectIdentifier(handle)] else { return }
            apply(.pauseRequested(suspended: handle.suspendRequested.load(ordering: .sequentiallyConsistent)), to: exchange)
        case .reopenWindow(let handle):
            // The sender saw the backlog at or under half the window; while paused for backpressure
            // nothing is delivered, so it can only have shrunk since.
            guard let exchange = exchanges[ObjectIdentifier(handle)] else { return }
            apply(.windowReopened, to: exchange)
        case .bodyAvailable(let handle):
            guard let exchange = exchanges[ObjectIdentifier(handle)] else { return }
            apply(.bodyAvailable, to: exchange)
        case .cancel(let handle):
            guard let exchange = exchanges[ObjectIdentifier(handle)] else { return }
            apply(.cancel, to: exchange)
        case .shutdown:
            stopping = true
            for exchange in Array(exchanges.values) { apply(.shutdown, to: exchange) }
        case .clockAdvanced(let done):
            // The pass's `finishPass()` reads the new time and fires what is due; `done` follows.
            clockChecks.append(done)
        }
    }

    /// Runs one transition of `exchange`'s state machine and performs its action.
    private func apply(_ event: CurlTransferState.Event, to exchange: CurlExchange) {
        var event = event
        switch event {
        case .curlDone, .timedOut, .failed:
            // A cancel() that raced the end wins even though its command is still queued: the
            // caller asked first, and the callbacks already held the head and body back from the sink.
            if exchange.handle.cancelRequested.load(ordering: .sequentiallyConsistent) { event = .cancel }
        default:
            break
        }
        let idleClockWasRunning = exchange.state.idleClockRuns
        let action = exchange.state.handle(event)
        if !idleClockWasRunning, exchange.state.idleClockRuns {
            exchange.lastActivity = clock.now
            schedule(exchange.timeoutInstant)
        }
        switch action {
        case .none:
            break
        case .attach:
            attach(exchange)
        case .applyPause(let mask):
            guard let easy = exchange.easy else { return }
            // Unpausing may run the write callback right here, re-delivering what libcurl held.
            let code = ccurl_easy_pause(easy.pointer, mask.rawValue)
            ccurl_reactor_timer_due_now(reactor)
            if code != CCURLE_OK { apply(.curlDone(code), to: exchange) }
        case .finish(let end, let detach):
            finish(exchange, end: end, detach: detach)
        }
    }

    /// Configures an easy handle for the exchange and adds it to the multi handle.
    private func attach(_ exchange: CurlExchange) {
        let request = exchange.handle.request
        do throws(CourierError) {
            let altSvc = defaults.alternativeServices.flatMap { cache in
                CurlAlternativeServices.Origin(request.url).map { (cache: cache, origin: $0) }
            }
            let alternative = request.httpVersion == .automatic ? altSvc.flatMap { $0.cache.alternative(for: $0.origin) } : nil
            var plan = try CurlRequestBuilder.plan(for: request, alternative: alternative)
            if !exchange.handle.mayMultiplex { plan.waitsToMultiplex = false }
            if request.httpVersion == .automatic { exchange.altSvc = altSvc }
            exchange.plan = plan
            if plan.sendsBody {
                let body = try CurlBodySource(request.body, url: request.url)
                let handle = exchange.handle
                body.stream?.setWaker { handle.bodyBecameAvailable() }
                exchange.body = body
            }
            guard let easy = pool.take() else {
                throw CourierError(.transportFailed, "libcurl could not create an easy handle.", url: request.url)
            }
            exchange.easy = easy
            exchange.headerList = try CurlRequestBuilder.apply(
                plan, for: request, to: easy, defaults: defaults,
                receiveBufferSize: receiveBuffers.size(for: exchange.handle.origin, expectsLargeBody: request.expectsLargeBody))
            exchange.connectToList = try CurlRequestBuilder.applyAlternative(plan, for: request.url, to: easy)
            try exchange.installCallbacks(on: easy, debugHandler: defaults.tuning.debugHandler)
            // The reactor keeps reused connections in its wait set between transfers; it must see them closed.
            var refusedOption: UnsafePointer<CChar>?
            let attached = ccurl_reactor_attach_easy(reactor, easy.pointer, &refusedOption)
            guard attached == CCURLE_OK else {
                throw CourierError(refusedOption: refusedOption.map { String(cString: $0) } ?? "the close-socket callback", code: attached)
            }
            exchange.startDate = Date()
            exchange.lastActivity = clock.now
            let code = ccurl_multi_add_handle(multi, easy.pointer)
            guard code == 0 else {
                throw CourierError(
                    .transportFailed, "libcurl could not start the transfer: \(String(cString: ccurl_multi_strerror(code)))",
                    url: request.url)
            }
        } catch {
            apply(.attachFailed(CurlLoopFailure(error: error)), to: exchange)
        }
    }

    // MARK: - Completion

    /// Feeds every transfer libcurl finished during the last perform to its state machine.
    private func deliverCompletions() {
        var easy: OpaquePointer?
        var result: Int32 = 0
        while ccurl_multi_next_done(multi, &easy, &result) == 1 {
            var userdata: UnsafeMutableRawPointer?
            guard let easy, ccurl_easy_getinfo_ptr(easy, CCURLINFO_PRIVATE, &userdata) == CCURLE_OK, let userdata else { continue }
            let exchange = Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue()
            if exchange.mayRetryUnprocessed(result: result) {
                // The server never processed the request (GOAWAY, refused stream): run it again
                // on another connection, as libcurl itself does a few times before giving up.
                ccurl_multi_remove_handle(multi, easy)
                exchange.prepareForRetry()
                if ccurl_multi_add_handle(multi, easy) == 0 { continue }
            }
            if exchange.mayRetryOnStaleConnection(result: result) {
                // The connection it reused was dead before anything came back: once more, on another.
                ccurl_multi_remove_handle(multi, easy)
                exchange.prepareForStaleConnectionRetry()
                if ccurl_multi_add_handle(multi, easy) == 0 { continue }
            }
            if exchange.mayFallBackFromAlternative(result: result) {
                // Its HTTP/3 alternative could not be reached: over TCP, as without one.
                ccurl_multi_remove_handle(multi, easy)
                if exchange.fallBackFromAlternative(tuning: defaults.tuning), ccurl_multi_add_handle(multi, easy) == 0 { continue }
            }
            apply(.curlDone(result), to: exchange)
        }
    }

    /// Fails each transfer whose socket the reactor refused to watch (libcurl gave it a negative or
    /// unusable descriptor): it would otherwise wait for events that never come.
    private func failRefusedTransfers() {
        var easy: OpaquePointer?
        while ccurl_reactor_next_refused(reactor, &easy) == 1 {
            var userdata: UnsafeMutableRawPointer?
            guard let easy, ccurl_easy_getinfo_ptr(easy, CCURLINFO_PRIVATE, &userdata) == CCURLE_OK, let userdata else { continue }
            let exchange = Unmanaged<CurlExchange>.fromOpaque(userdata).takeUnretainedValue()
            let error = CourierError(
                .transportFailed, "libcurl gave the transfer a socket descriptor the event loop cannot watch.",
                url: exchange.handle.request.url)
            apply(.failed(CurlLoopFailure(error: error)), to: exchange)
        }
    }

    /// A multi-level failure (out of memory, a broken poll set) fails every attached transfer.
    private func failAll(multiCode code: Int32) {
        for exchange in Array(exchanges.values) where exchange.state.isRunning {
            let error = CourierError(
                .transportFailed, "libcurl's multi handle failed: \(String(cString: ccurl_multi_strerror(code)))",
                url: exchange.handle.request.url)
            apply(.failed(CurlLoopFailure(error: error)), to: exchange)
        }
        // These were still running in libcurl's view: detach them before it runs again.
        releaseFinished()
    }

    /// Delivers the exchange's single `completed`, detaching it first unless libcurl finished it
    /// (then `releaseFinished()` detaches it), and queues its resources for release.
    private func finish(_ exchange: CurlExchange, end: CurlTransferEnd, detach: Bool) {
        let request = exchange.handle.request
        let metrics: TransferMetrics
        var detail = ""
        // A transfer libcurl finished is removed after `completed` has gone out (see `releaseFinished`);
        // its timings are final already.
        let removeLater: Bool
        switch end {
        case .curl, .failed: removeLater = detach
        default: removeLater = false
        }
        if let easy = exchange.easy {
            // Removing an unfinished transfer closes its connection instead of returning it to the cache.
            if detach, !removeLater { ccurl_multi_remove_handle(multi, easy.pointer) }
            metrics = CurlMetrics.collect(
                from: easy, start: exchange.startDate, bytesReceived: exchange.bytesDelivered,
                tls: exchange.tlsDetails, trailerFields: exchange.trailerFields)
            detail = easy.errorDetail
        } else {
            metrics = TransferMetrics(start: exchange.startDate, transport: "curl")
        }
        let bodyFailure = exchange.body?.failure
        exchanges[ObjectIdentifier(exchange.handle)] = nil

        let error: CourierError?
        switch end {
        case .curl(CCURLE_OK):
            error =
                exchange.headDelivered
                ? exchange.incompleteDecodingError
                : CourierError(.invalidResponse, "The server ended the exchange without a response head.", url: request.url)
        case .curl(let code):
            error =
                (exchange.failure ?? bodyFailure)?.with(url: request.url) ?? exchange.decodingFailure
                ?? CourierError(curl: code, detail: detail, url: request.url, readingHead: exchange.readingHead)
        case .failed(let failure):
            error = failure.error.with(url: request.url)
        case .cancelled:
            error = CourierError(.cancelled, "The request was cancelled.", url: request.url)
        case .timedOut(let timeout):
            error = CourierError(.timedOut, "The request timed out: \(timeout.explanation).", url: request.url)
        case .setupFailed(let failure):
            error = failure.error.with(url: request.url)
        case .shutDown:
            error = CourierError(.cancelled, "The request was cancelled because the transport shut down.", url: request.url)
        case .invalidated:
            error = CourierError(.sessionInvalidated, "The transport shut down before the request started.", url: request.url)
        }
        if error == nil {
            exchange.reportFinalUploadProgress(sentBytes: metrics.bytesSent)
            if let firstByte = metrics.timeToFirstByte { responseWait.record(timeToFirstByte: firstByte) }
            receiveBuffers.record(origin: exchange.handle.origin, bodyBytes: exchange.bytesDelivered)
        }
        if exchange.handle.mayMultiplex, let version = metrics.httpVersion {
            defaults.routing.learn(exchange.handle.origin, httpVersion: version)
        }
        mailbox.transferEnded(origin: exchange.handle.origin)
        exchange.handle.sink.receive(.completed(error: error, metrics: metrics))
        finished.append((exchange, removeLater))
    }

    /// Releases what finished transfers still hold (easy handle, header list, request body). The
    /// loop calls it once the pass has started the drains it held back, so the task awaiting a
    /// response wakes while libcurl's clean-up runs here; always before libcurl runs again.
    private func releaseFinished() {
        for (exchange, remove) in finished {
            if let easy = exchange.easy {
                if remove { ccurl_multi_remove_handle(multi, easy.pointer) }
                ccurl_reactor_forget_easy(reactor, easy.pointer)
                exchange.easy = nil
                pool.recycle(easy)
            }
            ccurl_slist_free_all(exchange.headerList)
            exchange.headerList = nil
            ccurl_slist_free_all(exchange.connectToList)
            exchange.connectToList = nil
            exchange.body?.close()
        }
        finished.removeAll(keepingCapacity: true)
    }

    // MARK: - Timeouts

    /// Makes sure the loop wakes by `instant` to check timeouts.
    private func schedule(_ instant: ContinuousClock.Instant?) {
        guard let instant else { return }
        if let next = nextTimeoutCheck, next <= instant { return }
        nextTimeoutCheck = instant
    }

    /// Fires the timeouts that are due and finds the next instant to check; a no-op before `nextTimeoutCheck`.
    private func checkTimeouts() {
        guard let next = nextTimeoutCheck, clock.now >= next else { return }
        nextTimeoutCheck = nil
        var expired: [(CurlExchange, CurlTimeout)] = []
        for exchange in exchanges.values {
            if let timeout = exchange.expiredTimeout(at: clock.now) {
                expired.append((exchange, timeout))
            } else {
                schedule(exchange.timeoutInstant)
            }
        }
        for (exchange, timeout) in expired { apply(.timedOut(timeout), to: exchange) }
    }

    /// Tells the tests' clock that the timeouts due at its new time have fired (and their ends were delivered).
    private func reportClockChecks() {
        guard !clockChecks.isEmpty else { return }
        for done in clockChecks { done() }
        clockChecks.removeAll()
    }

    /// Milliseconds until the nearest Courier timeout, rounded up so the loop wakes after it, not just before.
    private func waitTimeout() -> Int32 {
        guard let next = nextTimeoutCheck else { return Self.maximumPollMilliseconds }
        let remaining = next - clock.source.now
        guard remaining > .zero else { return 0 }
        let (seconds, attoseconds) = remaining.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: min(milliseconds, Int64(Self.maximumPollMilliseconds)))
    }
}

extension CurlEventLoop: TransportClockObserver {
    /// A test's clock moved: a pass fires the timeouts now due and then calls `done`.
    func clockAdvanced(done: @escaping @Sendable () -> Void) {
        if !mailbox.send(.clockAdvanced(done: done)) { done() }
    }
}
