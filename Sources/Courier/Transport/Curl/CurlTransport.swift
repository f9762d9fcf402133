import CourierSupport
import Foundation
import CourierLocking

/// Courier's libcurl transport, the default on Linux: libcurl's multi interface driven by
/// dedicated event-loop threads (one, and more under concurrent load), with libcurl loaded at run time.
///
/// A transfer started while the transport has no other goes out from the caller's thread, so a
/// request made one at a time costs no wake-up of the loop thread to send it (Linux; see
/// ``CurlEventLoop``).
///
/// Pauses in place (`suspend()` keeps the connection and loses no byte), applies backpressure
/// through the flow-control window, enforces idle and resource timeouts itself, and reuses
/// connections up to ``TransportConfiguration/maximumConnectionsPerHost`` per host (shared out
/// between the loops). Requests that may share an HTTP/2 connection use one connection to their
/// origin up to 100 in flight and one more beyond (``CurlLoopPlan/streamsBeforeOverflow``), where
/// they wait for a stream to free once both are full (with a single event loop, or while another
/// loop has a request to the origin in flight, they keep to the home loop). A transfer
/// waiting for a free connection or stream counts that wait towards its idle timeout.
@_spi(Transport) public final class CurlTransport: Transport {
    /// What this transport can do: everything the contract describes.
    public let capabilities = TransportCapabilities(name: "curl", pausesInPlace: true, appliesBackpressure: true)
    /// The libcurl in use.
    let library: CurlLibrary

    /// The private CA bundle, when the configuration trusts extra certificates; removed at shutdown.
    let trustStore: CurlTrustStore?

    /// The event loops that may run, each with its share of the per-host connection limit.
    private let plan: CurlLoopPlan
    let defaults: CurlHandleDefaults
    /// The raw connections (WebSocket) and the poller that watches them.
    let rawConnections = CurlRawConnections()

    /// The loops started so far; after shutdown, the loops that were running then.
    private enum Loops: Sendable {
        case running(LoopSet)
        case shutDown([CurlLoop])
    }

    /// The running loops: those that share out ``TransportConfiguration/maximumConnectionsPerHost``,
    /// and the overflow loop for HTTP/2 origins (``CurlLoopPlan/streamsBeforeOverflow``), started
    /// with the first transfer it gets.
    private struct LoopSet: Sendable {
        var shared: [CurlLoop]
        var overflow: CurlLoop?

        var all: [CurlLoop] { overflow.map { shared + [$0] } ?? shared }
    }

    // Protects the set of started loops and the choice of a loop for each transfer; held briefly
    // (starting a second loop's thread happens under it, once).
    private let loops: Locked<Loops>
    // Held by the thread that joins the loops for the whole join, so concurrent `shutdown()` calls
    // return only once every loop has ended. No loop thread takes it.
    private let joinLock = Locked(())

    /// Loads libcurl and starts the first event loop; throws `.transportFailed` when libcurl cannot be
    /// loaded (so the session can fall back to URLSession) or the loop cannot start, and
    /// `.fileSystem` when an extra trusted certificate cannot be read.
    ///
    /// More loops (up to one per processor, at most ``CurlLoopPlan/maximumLoops``) start when
    /// transfers to one origin overlap: one libcurl multi handle is driven by one thread, and
    /// under concurrent load that thread alone would cap the transport.
    ///
    /// `receiveBufferSize` is the most one socket read returns (`CURLOPT_BUFFERSIZE`); an origin
    /// whose recent responses were small gets less, down to 4 KiB (see `CurlReceiveBufferSizing`).
    public convenience init(configuration: TransportConfiguration, receiveBufferSize: Int = 64 * 1024) throws(CourierError) {
        try self.init(
            configuration: configuration, receiveBufferSize: receiveBufferSize,
            responseWaitLimit: FastPaths.isOn(.callerpass) ? CurlResponseWait.defaultLimit : .zero,
            proxies: CurlProxyEnvironment.current().tuned(by: configuration.tuning))
    }

    /// Like ``init(configuration:receiveBufferSize:)``, with the longest a pass on a caller's thread
    /// waits for a fast answer (tests lengthen it to make the wait observable), the proxy settings,
    /// the environment (`SSL_CERT_FILE`, `SSL_CERT_DIR`) and whether one parsed trust store is
    /// shared by every connection (``CurlSharedTrust``; tests run both ways).
    init(
        configuration: TransportConfiguration, receiveBufferSize: Int, responseWaitLimit: Duration,
        proxies: CurlProxyEnvironment, environment: [String: String] = ProcessInfo.processInfo.environment,
        sharesTrust: Bool = FastPaths.isOn(.trust)
    ) throws(CourierError) {
        library = try CurlLibrary.load()
        try configuration.tls.validate()
        let (tls, store) = try CurlTLSSettings.make(
            for: configuration.tls, library: library,
            environment: environment, sharing: sharesTrust)
        trustStore = store
        defaults = CurlHandleDefaults(
            receiveBufferSize: receiveBufferSize, tls: tls, share: CurlShare(),
            responseWaitLimit: responseWaitLimit, proxies: proxies,
            alternativeServices: configuration.usesHTTP3WhenAdvertised && library.speaksHTTP3 ? CurlAlternativeServices() : nil,
            tuning: configuration.tuning, clock: configuration.clock)
        plan = CurlLoopPlan(
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            processors: ProcessInfo.processInfo.activeProcessorCount)
        do {
            let first = try CurlLoop.start(
                perHostConnections: plan.connectionsPerHost(forLoop: 0), defaults: defaults, trustStore: trustStore)
            loops = Locked(.running(LoopSet(shared: [first])))
        } catch {
            trustStore?.remove()
            throw error
        }
    }

    deinit { shutdown() }

    /// Whether every TLS connection verifies against one store parsed for this transport.
    var sharesTrustStore: Bool { defaults.tls.sharedTrust != nil }

    /// Hands the request to an event loop and returns its handle at once: the loop with the fewest
    /// unfinished transfers to the request's host and port (then the fewest in all), or a new loop
    /// when every running loop already has one there and another may start. A request that may
    /// multiplex goes to its origin's home loop, unless that has ``CurlLoopPlan/streamsBeforeOverflow``
    /// requests to the origin in flight: then to the overflow loop, whose per-host limit of one
    /// makes libcurl queue the requests beyond that connection's streams rather than open a
    /// connection for each.
    ///
    /// After ``shutdown()`` the sink receives `completed` with `.sessionInvalidated` right here, on
    /// the calling thread, before this method returns.
    public func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        // The key balances the loops (each loop enforces its own share of the limit), so a single
        // loop needs none, and names the origins that may multiplex over HTTP/2.
        let candidate = Self.mayMultiplex(request)
        let setsPace = Self.keepsOffSharedHTTP2(request)
        let origin = plan.loopCount > 1 || candidate ? Self.originKey(request.url) : ""
        let known = candidate || setsPace ? defaults.routing.lookup(origin) : CurlMultiplexRouting.Origin()
        let multiplexes = candidate && !known.speaksHTTP1
        let mayOverflow = multiplexes && plan.allowsOverflow && Self.mayOverflow(request)
        // libcurl marks an origin's connections as not multiplexing once one of them speaks
        // HTTP/1.1: a paced stream's own HTTP/1.1 connection goes to another loop (another
        // connection cache) than the origin's HTTP/2 home, where there is one.
        let avoid = setsPace && !known.speaksHTTP1 ? known.home : nil
        let choice = loops.withLock { state -> (loop: CurlLoop, alone: Bool)? in
            guard case .running(var set) = state, !set.shared.isEmpty else { return nil }
            var running = set.shared
            var index = 0
            var fewest = running[0].mailbox.transfersInFlight(to: origin)
            var total = fewest.total + (set.overflow?.mailbox.transfersInFlight(to: origin).total ?? 0)
            // One look at each loop's counts: the least loaded loop, and for an HTTP/2 origin its
            // home loop's requests to it and whether another shared loop has any.
            let home = multiplexes ? known.home : nil
            var atHome = home == 0 ? fewest.origin : 0
            var elsewhere = home != 0 && fewest.origin > 0
            for (candidateIndex, loop) in running.enumerated().dropFirst() {
                let load = loop.mailbox.transfersInFlight(to: origin)
                total += load.total
                if candidateIndex == home { atHome = load.origin } else if load.origin > 0 { elsewhere = true }
                if (load.origin, load.total) < (fewest.origin, fewest.total) {
                    index = candidateIndex
                    fewest = load
                }
            }
            if let home, home < running.count {
                // An HTTP/2 origin's transfers go to its home loop, to share its connection, up to
                // the streams one connection surely has; the rest to the overflow loop's one.
                if mayOverflow, atHome >= CurlLoopPlan.streamsBeforeOverflow, !elsewhere {
                    if set.overflow == nil,
                        let started = try? CurlLoop.start(
                            perHostConnections: CurlLoopPlan.overflowConnectionsPerHost, defaults: defaults, trustStore: trustStore)
                    {
                        set.overflow = started
                        state = .running(set)
                    }
                    // An overflow loop that cannot start leaves the transfer on the home loop.
                    if let overflow = set.overflow {
                        overflow.mailbox.transferAssigned(origin: origin)
                        return (overflow, total == 0)
                    }
                }
                running[home].mailbox.transferAssigned(origin: origin)
                return (running[home], total == 0)
            }
            if let avoid, index == avoid, let other = running.indices.first(where: { $0 != avoid }) { index = other }
            if !multiplexes, fewest.origin > 0 || (avoid != nil && index == avoid), running.count < plan.loopCount,
                let started = try? CurlLoop.start(
                    perHostConnections: plan.connectionsPerHost(forLoop: running.count), defaults: defaults, trustStore: trustStore)
            {
                // A loop that cannot start leaves the transport with the loops it has.
                running.append(started)
                set.shared = running
                state = .running(set)
                index = running.count - 1
            }
            if multiplexes { defaults.routing.assign(origin, to: index) }
            running[index].mailbox.transferAssigned(origin: origin)
            return (running[index], total == 0)
        }
        guard let (loop, alone) = choice else { return invalidated(request, sink: sink) }
        let handle = CurlTransferHandle(
            request: request, sink: sink, mailbox: loop.mailbox, origin: origin,
            mayMultiplex: multiplexes, submitted: defaults.clock.now)
        // Only the transport's one transfer is sent from this thread: under concurrent load the
        // callers' threads are the busy ones, and the loops send in batches on threads of their own.
        switch loop.mailbox.sendOfferingPass(.start(handle), passAllowed: alone && FastPaths.isOn(.callerpass)) {
        case .rejected:
            // Shutdown won the race after the loop was chosen.
            loop.mailbox.transferEnded(origin: origin)
            return invalidated(request, sink: sink)
        case .queued:
            break
        case .runPass:
            // The loop sleeps: send the request from this thread rather than wake it for that.
            if !loop.runPassIfIdle() { loop.mailbox.wakeIfWaiting() }
        }
        return handle
    }

    /// Whether `request` may share an HTTP/2 connection with others to its origin.
    static func mayMultiplex(_ request: TransportRequest) -> Bool {
        if keepsOffSharedHTTP2(request) { return false }
        switch request.httpVersion {
        case .http1_1: return false
        case .http2PriorKnowledge: return true
        case .http3: return request.url.scheme?.lowercased() == "https"
        case .automatic, .http2: return request.url.scheme?.lowercased() == "https"
        }
    }

    /// Whether a request that may multiplex (``mayMultiplex(_:)``) may go to the overflow loop once
    /// its origin's home has ``CurlLoopPlan/streamsBeforeOverflow`` in flight: not cleartext
    /// HTTP/2 where libcurl gives each request a connection of its own (curl issue 10634), nor
    /// HTTP/3, which keeps its earlier routing (not measured with the overflow).
    static func mayOverflow(_ request: TransportRequest) -> Bool {
        switch request.httpVersion {
        case .automatic, .http2: true
        case .http2PriorKnowledge: CurlLibrary.reusesCleartextHTTP2 || request.url.scheme?.lowercased() == "https"
        case .http1_1, .http3: false
        }
    }

    /// Whether `request` is a stream whose consumer sets the pace, kept off shared HTTP/2
    /// connections (a connection of its own, over HTTP/1.1) where libcurl's paused streams hold up
    /// their siblings (see ``CurlLibrary/pausesHTTP2StreamsIndependently``).
    static func keepsOffSharedHTTP2(_ request: TransportRequest) -> Bool {
        request.consumerSetsPace && request.httpVersion == .automatic && !CurlLibrary.pausesHTTP2StreamsIndependently
            && request.url.scheme?.lowercased() == "https"
    }

    /// `"https://host:port"`: what the loops count transfers by, and what HTTP/2 routing remembers.
    static func originKey(_ url: URL) -> String {
        "\(url.scheme ?? "")://\(url.host(percentEncoded: true) ?? ""):\(url.port ?? 0)"
    }

    /// Whether every running loop sleeps without transfers; the next transfer then goes out from
    /// the caller's thread (where the reactor allows it).
    var loopsSleepIdle: Bool {
        loops.withLock { state in
            guard case .running(let set) = state else { return false }
            return set.all.allSatisfy(\.mailbox.sleepsIdle)
        }
    }

    /// For tests: the next socket libcurl asks each loop started so far to watch is refused as if
    /// its descriptor were negative (see ``CurlEventLoop/refuseNextSocket()``).
    func refuseNextSocket() {
        for loop in startedLoops { loop.refuseNextSocket() }
    }

    /// How many times the loop threads woke from their sleep so far (for tests).
    var loopWakeUps: Int { startedLoops.reduce(0) { $0 + $1.wakeUpCount } }

    /// How many transfers were answered while a pass on the caller's thread waited (for tests).
    var answeredOnCallers: Int { startedLoops.reduce(0) { $0 + $1.answeredOnCallersCount } }

    /// For each loop started so far, whether its thread runs as a batch thread (for tests; see
    /// ``CurlLoopScheduling``).
    var loopThreadsYieldOnWake: [Bool] { startedLoops.map(\.threadYieldsOnWake) }

    /// Every loop started so far, running or shut down.
    private var startedLoops: [CurlLoop] {
        loops.withLock { state in
            switch state {
            case .running(let set): set.all
            case .shutDown(let loops): loops
            }
        }
    }

    private func invalidated(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        let error = CourierError(.sessionInvalidated, "The transport was shut down before the request started.", url: request.url)
        sink.receive(.completed(error: error, metrics: TransferMetrics(transport: capabilities.name)))
        return InertTransfer()
    }

    /// Cancels every transfer (in flight: `.cancelled`; not yet started: `.sessionInvalidated`),
    /// stops the loops and waits for their threads to end. Idempotent.
    ///
    /// Called from inside a loop's pass (a sink, on the loop thread or on a thread running a pass
    /// for a transfer it started), it cannot wait: waiting for the thread it runs on, for a loop
    /// that waits for the pass it is in, or for a loop whose sink is calling this at the same moment,
    /// would never end. The loop threads are detached instead and end on their own once their
    /// current callbacks return.
    public func shutdown() {
        let (all, first) = loops.withLock { state -> ([CurlLoop], Bool) in
            switch state {
            case .running(let set):
                state = .shutDown(set.all)
                return (set.all, true)
            case .shutDown(let running):
                return (running, false)
            }
        }
        if first { for loop in all { loop.mailbox.send(.shutdown) } }
        rawConnections.shutdown()
        if all.contains(where: \.isCurrent) {
            for loop in all { loop.detach() }
            return
        }
        joinLock.withLock { _ in
            for loop in all { loop.join() }
        }
        trustStore?.remove()
    }
}

/// How many event loops a ``CurlTransport`` may run, and each loop's share of the per-host limit.
///
/// Besides these, the overflow loop takes an HTTP/2 origin's requests beyond the
/// ``streamsBeforeOverflow`` its home loop has in flight, with one connection per origin: libcurl
/// 7.88 opens a connection for every transfer that finds the open ones at the server's stream limit
/// (up to the loop's per-host limit), where AsyncHTTPClient's pool opens one only once the open
/// ones are full; with a limit of one, libcurl queues such a transfer until a stream frees. So an
/// origin whose server allows 100 streams or more gets one connection up to 100 requests in
/// flight and two beyond, cold or warm.
struct CurlLoopPlan: Sendable, Equatable {
    /// At most this many loops, however many processors there are.
    static let maximumLoops = 4

    /// An HTTP/2 origin's requests in flight on its home loop before the next go to the overflow
    /// loop: the fewest streams RFC 9113 (§6.5.2) recommends a server allow, and libcurl's own
    /// default cap per connection.
    static let streamsBeforeOverflow = 100

    /// Connections per origin of the overflow loop.
    static let overflowConnectionsPerHost = 1

    /// Whether the overflow loop may be used. Its connection comes out of the per-host limit: it
    /// takes an origin's requests only while no other shared loop has one in flight, so the origin's
    /// connections are its home loop's share (at most the limit less one when two or more loops
    /// share it) plus the overflow's one. With a single loop (one processor, or a limit of one) the
    /// home's share is the whole limit, and there is no overflow.
    var allowsOverflow: Bool { loopCount >= 2 }

    /// How many loops may run: one per processor, no more than `maximumLoops`, and no more than the
    /// per-host limit (each loop needs at least one connection per host).
    let loopCount: Int
    private let perHost: Int

    init(maximumConnectionsPerHost: Int, processors: Int) {
        perHost = max(1, maximumConnectionsPerHost)
        loopCount = max(1, min(Self.maximumLoops, processors, perHost))
    }

    /// Connections per host for loop `index`: the limit shared out, so all loops together never exceed it.
    func connectionsPerHost(forLoop index: Int) -> Int {
        perHost / loopCount + (index < perHost % loopCount ? 1 : 0)
    }
}

/// One started event loop as the transport sees it: its mailbox, the loop and its thread.
final class CurlLoop: Sendable {
    let mailbox: CurlMailbox
    private let loop: CurlEventLoop
    private let thread: CurlThread

    /// What became of the loop thread.
    private enum ThreadDisposal: Sendable {
        case running
        case joined
        case detached
    }

    // Protects the one-time choice between joining and detaching the loop thread; held only briefly.
    private let disposal = Locked(ThreadDisposal.running)

    private init(loop: CurlEventLoop, thread: CurlThread) {
        mailbox = loop.mailbox
        self.loop = loop
        self.thread = thread
    }

    /// Creates a loop that opens at most `perHostConnections` connections to one host, and starts its thread.
    static func start(
        perHostConnections: Int, defaults: CurlHandleDefaults,
        trustStore: CurlTrustStore?
    ) throws(CourierError) -> CurlLoop {
        let loop = try CurlEventLoop(
            perHostConnections: perHostConnections, defaults: defaults,
            trustStore: trustStore)
        do {
            return CurlLoop(loop: loop, thread: try CurlThread.start(name: "courier-curl") { loop.run() })
        } catch {
            loop.discard()
            throw CourierError(.transportFailed, "Cannot start the curl event-loop thread (pthread_create error \(error.code)).")
        }
    }

    /// Runs a pass for the commands queued while the loop sleeps; see ``CurlEventLoop/runPassIfIdle()``.
    func runPassIfIdle() -> Bool { loop.runPassIfIdle() }

    /// For tests: see ``CurlEventLoop/refuseNextSocket()``.
    func refuseNextSocket() { loop.refuseNextSocket() }

    /// How many times the loop thread woke from its sleep.
    var wakeUpCount: Int { loop.wakeUpCount }

    /// How many transfers were answered while a pass on a caller's thread waited.
    var answeredOnCallersCount: Int { loop.answeredOnCallersCount }

    /// Whether the loop thread runs as a batch thread; see ``CurlEventLoop/threadYieldsOnWake``.
    var threadYieldsOnWake: Bool { loop.threadYieldsOnWake }

    /// Whether the calling thread is this loop's thread, or runs one of its passes.
    var isCurrent: Bool { thread.isCurrent || loop.isRunningPassOnCurrentThread }

    /// After `.shutdown` was sent: waits for the thread to end, unless it was already joined or detached.
    func join() {
        if claim(.joined) { thread.join() }
    }

    /// After `.shutdown` was sent: lets the thread end on its own, unless it was already joined or detached.
    func detach() {
        if claim(.detached) { thread.detach() }
    }

    private func claim(_ disposition: ThreadDisposal) -> Bool {
        disposal.withLock { state in
            guard state == .running else { return false }
            state = disposition
            return true
        }
    }
}
