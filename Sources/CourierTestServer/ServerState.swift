/// Everything the server's threads and its callers share; lives inside one `Locked` box owned by
/// ``ServerCore``. Methods that wake waiters return the wake-ups so the caller can run them
/// after releasing the lock.
struct ServerState: Sendable {
    typealias WakeUp = @Sendable () -> Void

    enum Phase: Sendable {
        case running
        case stopping
    }

    var phase = Phase.running
    var report: ShutdownReport?

    // Scripting.
    var queue: [MockResponse] = []
    var routes: [Route] = []
    var nextRouteID = 0
    var routeServeCounts: [Int: Int] = [:]
    var dispatcher: (@Sendable (RecordedRequest) -> MockResponse)?
    /// Paths answered by ``TestServer/routeDuplexEcho(_:)``.
    var duplexEchoPaths: Set<String> = []

    // Recording.
    var records: [RecordedRequest] = []
    var nextUntaken = 0
    var takeWaiters: [WaitSlot<RecordedRequest>] = []
    var disconnectWatchers: [(path: String?, count: Int, slot: WaitSlot<[RecordedRequest]>)] = []
    var unexpected: [Int] = []
    var countByPath: [String: Int] = [:]

    // Connections and threads.
    var acceptThread: ServerThread?
    var acceptedConnections = 0
    var openSockets: [Int: Int32] = [:]
    var threads: [Int: ServerThread] = [:]
    var finishedThreads: [Int] = []
    var gates: [Gate] = []

    // WebSockets.
    var webSockets: [WebSocketRecording] = []
    var nextUntakenWebSocket = 0
    var webSocketWaiters: [WaitSlot<WebSocketRecording>] = []
    /// Handshake requests the server refused as invalid.
    var webSocketHandshakeViolations: [String] = []

    // Statistics.
    var bytesSent: Int64 = 0
    var bytesSentByPath: [String: Int64] = [:]

    // MARK: Recording

    /// Appends a request built with the next sequence number and hands it to the oldest waiter.
    mutating func record(_ make: (Int) -> RecordedRequest) -> (RecordedRequest, [WakeUp]) {
        let request = make(records.count)
        records.append(request)
        countByPath[request.path, default: 0] += 1
        return (request, deliverPending())
    }

    /// Hands untaken requests to waiters, oldest first, skipping waiters that already gave up.
    mutating func deliverPending() -> [WakeUp] {
        var wakeUps: [WakeUp] = []
        while nextUntaken < records.count, !takeWaiters.isEmpty {
            let waiter = takeWaiters.removeFirst()
            if let wakeUp = waiter.complete(.success(records[nextUntaken])) {
                wakeUps.append(wakeUp)
                nextUntaken += 1
            }
        }
        return wakeUps
    }

    /// Takes the next untaken request, or registers `slot` to receive it.
    mutating func takeOrWait(_ slot: WaitSlot<RecordedRequest>) -> RecordedRequest? {
        takeWaiters.removeAll { $0.isCompleted }
        if nextUntaken < records.count, takeWaiters.isEmpty {
            defer { nextUntaken += 1 }
            return records[nextUntaken]
        }
        takeWaiters.append(slot)
        return nil
    }

    /// Marks a request's client as gone and wakes disconnect watchers that are now satisfied.
    mutating func markDisconnected(_ sequenceNumber: Int) -> [WakeUp] {
        guard records.indices.contains(sequenceNumber), !records[sequenceNumber].clientDisconnected else { return [] }
        records[sequenceNumber].clientDisconnected = true
        var wakeUps: [WakeUp] = []
        var stillWaiting: [(path: String?, count: Int, slot: WaitSlot<[RecordedRequest]>)] = []
        for watcher in disconnectWatchers {
            let matches = disconnected(path: watcher.path)
            if matches.count >= watcher.count {
                if let wakeUp = watcher.slot.complete(.success(matches)) { wakeUps.append(wakeUp) }
            } else {
                stillWaiting.append(watcher)
            }
        }
        disconnectWatchers = stillWaiting
        return wakeUps
    }

    /// The requests whose clients went away, optionally only those for `path`.
    func disconnected(path: String?) -> [RecordedRequest] {
        records.filter { $0.clientDisconnected && (path == nil || $0.path == path) }
    }

    /// Appends a WebSocket session's recording and hands it to the oldest waiter still waiting.
    mutating func register(_ recording: WebSocketRecording) -> [WakeUp] {
        webSockets.append(recording)
        var wakeUps: [WakeUp] = []
        while nextUntakenWebSocket < webSockets.count, !webSocketWaiters.isEmpty {
            let waiter = webSocketWaiters.removeFirst()
            if let wakeUp = waiter.complete(.success(webSockets[nextUntakenWebSocket])) {
                wakeUps.append(wakeUp)
                nextUntakenWebSocket += 1
            }
        }
        return wakeUps
    }

    // MARK: Dispatch

    /// The route that answers `method path`: the latest registered match.
    func route(path: String, method: String) -> Route? {
        routes.last { $0.path == path && $0.method.matches(method) }
    }

    /// Decides where the answer to `request` comes from: routes, then the dispatcher, then the
    /// queue; an empty queue makes the request unexpected.
    mutating func decide(for request: RecordedRequest) -> DispatchDecision {
        if let route = route(path: request.path, method: request.method) {
            switch route.handler {
            case .closure(let handler):
                return .closure(handler)
            case .resource(let resource):
                let index = routeServeCounts[route.id, default: 0]
                routeServeCounts[route.id] = index + 1
                return .resource(resource, serveIndex: index)
            }
        }
        if let dispatcher { return .closure(dispatcher) }
        if !queue.isEmpty { return .response(queue.removeFirst()) }
        unexpected.append(request.sequenceNumber)
        return .unscripted
    }

    /// Whether to answer `Expect: 100-continue` for a request to `method path`, decided before
    /// its body is read: only a queued response can say no.
    func sendsContinue(path: String, method: String) -> Bool {
        if route(path: path, method: method) != nil || dispatcher != nil { return true }
        return queue.first?.behavior.sendsContinue ?? true
    }

    /// Adds a route with a fresh identity (so a resource's per-request counters start at 0).
    mutating func addRoute(path: String, method: RouteMethod, handler: Route.Handler) {
        routes.append(Route(id: nextRouteID, path: path, method: method, handler: handler))
        nextRouteID += 1
    }

    // MARK: Shutdown

    /// Moves to `.stopping` and collects what must be woken; nil if already stopping.
    mutating func beginShutdown() -> (report: ShutdownReport, wakeUps: [WakeUp], gates: [Gate])? {
        guard phase == .running else { return nil }
        phase = .stopping
        let report = ShutdownReport(unconsumedResponses: queue, unexpectedRequests: unexpected.map { records[$0] })
        self.report = report
        var wakeUps: [WakeUp] = []
        for waiter in takeWaiters {
            if let wakeUp = waiter.complete(.failure(TestServerError.shutdown)) { wakeUps.append(wakeUp) }
        }
        for watcher in disconnectWatchers {
            if let wakeUp = watcher.slot.complete(.failure(TestServerError.shutdown)) { wakeUps.append(wakeUp) }
        }
        for waiter in webSocketWaiters {
            if let wakeUp = waiter.complete(.failure(TestServerError.shutdown)) { wakeUps.append(wakeUp) }
        }
        takeWaiters = []
        disconnectWatchers = []
        webSocketWaiters = []
        // Dropping closures breaks reference cycles a route may have formed with the server.
        routes = []
        dispatcher = nil
        for fd in openSockets.values { Socket.shutdownBoth(fd) }
        return (report, wakeUps, gates)
    }
}
