import Foundation

extension TestServer {
    /// The next WebSocket session the server accepted, in order, waiting up to `timeout` for one.
    ///
    /// ```swift
    /// server.enqueue(.webSocket(.echo))
    /// // … the client connects, sends, closes …
    /// let socket = try await server.takeWebSocket()
    /// try await socket.waitUntilFinished()
    /// ```
    /// - Throws: ``TestServerError/timeout``, ``TestServerError/shutdown`` (sessions already
    ///   accepted are still returned after shutdown), or `CancellationError`.
    public func takeWebSocket(timeout: Duration = .seconds(30)) async throws -> WebSocketRecording {
        let slot = WaitSlot<WebSocketRecording>()
        let ready: Result<WebSocketRecording?, TestServerError> = core.state.withLock { state in
            if state.nextUntakenWebSocket < state.webSockets.count, state.webSocketWaiters.isEmpty {
                defer { state.nextUntakenWebSocket += 1 }
                return .success(state.webSockets[state.nextUntakenWebSocket])
            }
            if state.phase == .stopping { return .failure(.shutdown) }
            state.webSocketWaiters.removeAll { $0.isCompleted }
            state.webSocketWaiters.append(slot)
            return .success(nil)
        }
        if let recording = try ready.get() { return recording }
        do {
            return try await slot.value(timeout: timeout)
        } catch {
            core.state.withLock { $0.webSocketWaiters.removeAll { $0 === slot } }
            throw error
        }
    }

    /// Every WebSocket session the server accepted, in order; unaffected by
    /// ``takeWebSocket(timeout:)``.
    public var webSockets: [WebSocketRecording] {
        core.state.withLock { $0.webSockets }
    }
}
