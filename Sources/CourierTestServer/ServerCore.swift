#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierLocking

/// The engine behind ``TestServer``: the listener, the accept thread, per-connection threads,
/// and the shared state. Threads hold the core, never the public `TestServer`, so dropping the
/// last `TestServer` reference can shut everything down.
final class ServerCore: Sendable {
    let configuration: TestServer.Configuration
    let port: Int
    let state = Locked(ServerState())
    private let listener: Int32

    init(configuration: TestServer.Configuration) throws {
        self.configuration = configuration
        let backlog = Int32(clamping: configuration.backlog)
        (listener, port) = try Socket.makeListener(port: configuration.port, backlog: backlog)
        let name = "\(configuration.threadName.prefix(13))-a"
        guard let thread = ServerThread.start(name: name, { [self] in acceptLoop() }) else {
            Socket.closeNow(listener)
            throw TestServerError.threadStartFailed
        }
        state.withLock { $0.acceptThread = thread }
    }

    /// Whether shutdown has begun.
    var isStopping: Bool {
        state.withLock { $0.phase == .stopping }
    }

    // MARK: Accepting

    /// Writes to standard error when the listener's descriptor no longer holds this server's port:
    /// something else in the process closed it and the number went to another socket, so this
    /// server's connections are refused while another's land here (seen as a test's own server
    /// refusing connections, with no other trace).
    private func reportIfTheListenerWasReplaced() {
        let bound = Socket.localPort(of: listener)
        guard bound != port else { return }
        let now = bound.map { "a socket on port \($0)" } ?? "no socket"
        let line = Array(
            "CourierTestServer \(configuration.threadName): descriptor \(listener), the listener of port \(port), now holds \(now): closed elsewhere in the process\n"
                .utf8)
        _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    private func acceptLoop() {
        let connectionThreadName = "\(configuration.threadName.prefix(13))-c"
        reportIfTheListenerWasReplaced()
        while true {
            guard let fd = Socket.acceptConnection(listener) else {
                let code = Socket.lastError
                if isStopping { return }
                if code == ECONNABORTED || code == EPROTO || code == EPERM { continue }
                if code == EMFILE || code == ENFILE || code == ENOBUFS || code == ENOMEM {
                    // Out of descriptors: back off briefly instead of spinning.
                    Socket.sleep(milliseconds: 10)
                    continue
                }
                // The listener is gone (EBADF, ENOTSOCK: closed, perhaps by a stray close elsewhere in
                // the process): from now on connections are refused, so say why where a test's
                // failure will be read.
                let line = Array(
                    "CourierTestServer \(configuration.threadName): accept failed with errno \(code); no more connections are accepted\n".utf8)
                _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
                return
            }
            reportIfTheListenerWasReplaced()
            Socket.configureAccepted(fd)
            let registration: (id: Int, reap: [ServerThread])? = state.withLock { state in
                guard state.phase == .running else { return nil }
                let id = state.acceptedConnections
                state.acceptedConnections += 1
                state.openSockets[id] = fd
                let reap = state.finishedThreads.compactMap { state.threads.removeValue(forKey: $0) }
                state.finishedThreads = []
                return (id, reap)
            }
            guard let registration else {
                Socket.closeNow(fd)
                return
            }
            for thread in registration.reap { thread.join() }
            let thread = ServerThread.start(name: connectionThreadName) { [self] in
                var connection = Connection(core: self, fd: fd, index: registration.id)
                connection.run()
            }
            if let thread {
                state.withLock { $0.threads[registration.id] = thread }
            } else {
                state.withLock { _ = $0.openSockets.removeValue(forKey: registration.id) }
                Socket.closeNow(fd)
            }
        }
    }

    /// Called by a connection thread just before it closes its socket: from now on shutdown
    /// will not touch the descriptor, so its number can be reused safely.
    func releaseSocket(_ id: Int) {
        state.withLock { _ = $0.openSockets.removeValue(forKey: id) }
    }

    /// Called by a connection thread as its last act, so the thread can be joined.
    func threadFinished(_ id: Int) {
        state.withLock { $0.finishedThreads.append(id) }
    }

    // MARK: Helpers for connection threads

    /// Records a request and wakes a waiting `takeRequest`.
    func record(_ make: (Int) -> RecordedRequest) -> RecordedRequest {
        let (request, wakeUps) = state.withLock { $0.record(make) }
        for wakeUp in wakeUps { wakeUp() }
        return request
    }

    /// Chooses and produces the response for a recorded request.
    func response(for request: RecordedRequest) -> MockResponse {
        let decision = state.withLock { $0.decide(for: request) }
        return decision.response(for: request)
    }

    /// Marks that the client of a request went away before its response was complete.
    func markDisconnected(_ sequenceNumber: Int) {
        let wakeUps = state.withLock { $0.markDisconnected(sequenceNumber) }
        for wakeUp in wakeUps { wakeUp() }
    }

    /// Counts body bytes written for a request to `path`.
    func addBytesSent(_ count: Int, path: String) {
        state.withLock { state in
            state.bytesSent += Int64(count)
            state.bytesSentByPath[path, default: 0] += Int64(count)
        }
    }

    /// Records a WebSocket session that has started and wakes a waiting `takeWebSocket`.
    func register(_ recording: WebSocketRecording) {
        let wakeUps = state.withLock { $0.register(recording) }
        for wakeUp in wakeUps { wakeUp() }
    }

    /// Records a WebSocket handshake the server refused as invalid.
    func noteWebSocketViolation(_ violation: String) {
        state.withLock { $0.webSocketHandshakeViolations.append(violation) }
    }

    /// Remembers a gate a response is held on, so shutdown can open it.
    func noteGate(_ gate: Gate) {
        state.withLock { state in
            if !state.gates.contains(where: { $0 === gate }) { state.gates.append(gate) }
        }
    }

    // MARK: Shutdown

    /// Stops accepting, closes every connection, wakes every waiter and joins every thread.
    func shutdown() -> ShutdownReport {
        let begun = state.withLock { $0.beginShutdown() }
        guard let begun else {
            // A repeated call returns the first report without waiting: a concurrent caller may
            // be one of the threads the first call is joining.
            return state.withLock { $0.report } ?? ShutdownReport(unconsumedResponses: [], unexpectedRequests: [])
        }
        for wakeUp in begun.wakeUps { wakeUp() }
        for gate in begun.gates { gate.open() }
        Socket.shutdownBoth(listener)
        #if !os(Linux)
        // Shutting a listener down does not wake `accept` everywhere; a connection does.
        Socket.poke(port: port)
        #endif
        if let thread = state.withLock({ $0.acceptThread }) { thread.join() }
        Socket.closeNow(listener)
        let threads = state.withLock { state in
            defer {
                state.threads = [:]
                state.finishedThreads = []
            }
            return Array(state.threads.values)
        }
        for thread in threads { thread.join() }
        // Only now is every WebSocket session over, so every violation is recorded.
        let (handshakes, sessions) = state.withLock { ($0.webSocketHandshakeViolations, $0.webSockets) }
        var report = begun.report
        report.webSocketViolations =
            handshakes
            + sessions.flatMap { session in
                session.violations.map { "\(session.request.path): \($0)" }
            }
        state.withLock { $0.report = report }
        return report
    }
}
