import Foundation

extension TestServer {
    /// The next recorded request in arrival order, waiting up to `timeout` for one.
    ///
    /// - Throws: ``TestServerError/timeout`` if none arrives in time,
    ///   ``TestServerError/shutdown`` if the server shuts down first (requests already recorded
    ///   are still returned after shutdown), `CancellationError` if the task is cancelled.
    public func takeRequest(timeout: Duration = .seconds(30)) async throws -> RecordedRequest {
        let slot = WaitSlot<RecordedRequest>()
        if let ready = try takeOrRegister(slot) { return ready }
        do {
            return try await slot.value(timeout: timeout)
        } catch {
            core.state.withLock { $0.takeWaiters.removeAll { $0 === slot } }
            throw error
        }
    }

    /// The blocking form of ``takeRequest(timeout:)`` for synchronous code; do not call it from
    /// Swift concurrency's cooperative threads.
    public func takeRequestBlocking(timeout: Duration = .seconds(30)) throws -> RecordedRequest {
        let slot = WaitSlot<RecordedRequest>()
        if let ready = try takeOrRegister(slot) { return ready }
        let result = slot.blockingValue(timeout: timeout)
        if case .failure = result {
            core.state.withLock { $0.takeWaiters.removeAll { $0 === slot } }
        }
        return try result.get()
    }

    private func takeOrRegister(_ slot: WaitSlot<RecordedRequest>) throws -> RecordedRequest? {
        let outcome: Result<RecordedRequest?, TestServerError> = core.state.withLock { state in
            if state.phase == .stopping {
                guard state.nextUntaken < state.records.count else { return .failure(.shutdown) }
                defer { state.nextUntaken += 1 }
                return .success(state.records[state.nextUntaken])
            }
            return .success(state.takeOrWait(slot))
        }
        return try outcome.get()
    }

    /// How many requests the server has recorded (including malformed and unexpected ones).
    public var requestCount: Int {
        core.state.withLock { $0.records.count }
    }

    /// How many recorded requests had exactly this path (without query).
    public func requestCount(path: String) -> Int {
        core.state.withLock { $0.countByPath[path] ?? 0 }
    }

    /// Every recorded request in arrival order; unaffected by ``takeRequest(timeout:)``.
    public var recordedRequests: [RecordedRequest] {
        core.state.withLock { $0.records }
    }

    /// How many connections the server has accepted.
    public var connectionCount: Int {
        core.state.withLock { $0.acceptedConnections }
    }

    /// How many accepted connections are still open on the server's side.
    public var activeConnectionCount: Int {
        core.state.withLock { $0.openSockets.count }
    }

    /// Response body bytes handed to the socket so far (after content coding, without chunk
    /// framing), in total or for requests to `path`; proves, for example, that a resumed
    /// download did not fetch the beginning again. Bytes are counted just before each write, so
    /// whatever a client has received is already counted.
    public func bytesSent(path: String? = nil) -> Int64 {
        core.state.withLock { state in
            guard let path else { return state.bytesSent }
            return state.bytesSentByPath[path] ?? 0
        }
    }

    /// How many requests (optionally only for `path`) lost their client before the response
    /// was complete; see ``RecordedRequest/clientDisconnected``.
    public func clientDisconnectCount(path: String? = nil) -> Int {
        core.state.withLock { $0.disconnected(path: path).count }
    }

    /// Waits until at least `count` requests (optionally only for `path`) have lost their client
    /// before the response was complete, and returns them.
    ///
    /// A disconnect is noticed while a response is held (gate, delay, throttle pause, stall) or
    /// when a write fails; a client that closes after a small response was fully buffered by the
    /// kernel goes unnoticed.
    /// - Throws: ``TestServerError/timeout``, ``TestServerError/shutdown``, or `CancellationError`.
    @discardableResult
    public func waitForClientDisconnect(
        path: String? = nil, count: Int = 1,
        timeout: Duration = .seconds(30)
    ) async throws -> [RecordedRequest] {
        let slot = WaitSlot<[RecordedRequest]>()
        let ready: Result<[RecordedRequest]?, TestServerError> = core.state.withLock { state in
            let matches = state.disconnected(path: path)
            if matches.count >= count { return .success(matches) }
            if state.phase == .stopping { return .failure(.shutdown) }
            state.disconnectWatchers.append((path, count, slot))
            return .success(nil)
        }
        if let matches = try ready.get() { return matches }
        do {
            return try await slot.value(timeout: timeout)
        } catch {
            core.state.withLock { $0.disconnectWatchers.removeAll { $0.slot === slot } }
            throw error
        }
    }
}
