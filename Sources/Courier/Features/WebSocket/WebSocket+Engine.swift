import Foundation

// The connection's machinery. Every function taking `inout WebSocketCore` runs under the lock.
extension WebSocket {
    // MARK: - Opening

    /// Connects through `transport` and writes the handshake `request`. Called once, by the session.
    func open(_ request: WebSocketHandshakeRequest, through transport: any RawConnectionTransport, timeout: Duration) {
        core.withLock { core in
            guard case .preparing = core.phase else { return }
            core.client = WebSocketClientConnection(request: request, maximumMessageSize: configuration.maximumMessageSize,
                                                    maximumHeadSize: configuration.maximumHandshakeResponseSize)
            // Until `attempt` is returned, a completion finds the phase still `preparing`.
            schedule(after: timeout, &core) { socket, core in
                guard core.phase.state == .connecting else { return }
                socket.fail(CourierError(.timedOut, "The WebSocket did not open within \(timeout).", url: socket.url), &core)
            }
        }
        let attempt = transport.openRawConnection(to: request.url, timeout: timeout, observer: self) { [weak self] result in
            self?.connected(result)
        }
        core.withLock { core in
            if case .preparing = core.phase { core.phase = .connecting(attempt) }
            if core.isClosed { attempt.cancel() }
        }
    }

    /// Ends the connection before it could open (the request could not be prepared).
    func failToOpen(_ error: CourierError) {
        core.withLock { core in
            guard !core.isClosed else { return }
            end(.failed(error.with(url: url), nil), &core)
        }
    }

    private func connected(_ result: Result<any RawConnection, CourierError>) {
        core.withLock { core in
            switch result {
            case .failure(let error):
                guard !core.isClosed else { return }
                end(.failed(error, nil), &core)
            case .success(let connection):
                guard !core.isClosed, let client = core.client else {
                    connection.close()
                    return
                }
                core.phase = .handshaking(connection)
                core.output.append(client.request.head)
                core.outputBytes += client.request.head.count
                flush(&core)
                updateWatch(&core)
            }
        }
    }

    // MARK: - The application's requests

    /// Encodes `message` and starts writing it; throws when the protocol refuses it.
    func enqueue(_ message: WebSocketMessage, _ core: inout WebSocketCore) throws(CourierError) {
        guard let actions = core.client?.handle(.send(message)) else { throw notOpenError(core) }
        if case .protocol(.refused)? = actions.first { throw notOpenError(core) }
        perform(actions, &core)
    }

    /// Suspends until the bytes waiting to be written fall to the send buffer size.
    func waitForRoomToSend() async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                core.withLock { core in
                    if core.isClosed {
                        continuation.resume(throwing: notOpenError(core))
                    } else if core.outputBytes <= configuration.sendBufferSize {
                        continuation.resume()
                    } else {
                        core.sendWaiters.append(continuation)
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Sends a ping; `waiter` (nil for keep-alive) hears the round trip.
    func sendPing(_ payload: Data, waiter: CheckedContinuation<Duration, any Error>?, _ core: inout WebSocketCore) {
        guard case .open = core.phase, core.client != nil else {
            waiter?.resume(throwing: notOpenError(core))
            return
        }
        var payload = payload
        if payload.isEmpty {
            core.pingCounter += 1
            payload = withUnsafeBytes(of: core.pingCounter.bigEndian) { Data($0) }
        }
        guard let actions = core.client?.handle(.sendPing(payload)) else { return }
        if case .protocol(.refused(let refusal))? = actions.first {
            let detail = if case .controlPayloadTooLong(let count) = refusal { "a ping payload may have at most 125 bytes, not \(count)" }
                else { "\(refusal)" }
            waiter?.resume(throwing: CourierError(.invalidRequest, "The ping cannot be sent: \(detail).", url: url))
            return
        }
        core.pings.append(WebSocketCore.Ping(payload: payload, sentAt: .now, waiter: waiter))
        perform(actions, &core)
        let timeout = configuration.pingTimeout
        let sent = payload
        schedule(after: timeout, &core) { socket, core in
            guard core.pings.contains(where: { $0.payload == sent }) else { return }
            if core.readingPaused {
                // Unanswered because the consumer holds the reads back, not because the server is gone.
                return
            }
            socket.fail(CourierError(.timedOut, "The server did not answer a ping within \(timeout).", url: socket.url), &core)
        }
    }

    /// Sends the close frame (or abandons a connection that is not open yet).
    func startClose(code: WebSocketCloseCode, reason: String, _ core: inout WebSocketCore) {
        switch core.phase {
        case .open(let connection):
            core.closeRequested = true
            guard let actions = core.client?.handle(.close(code, reason: reason)) else { return }
            core.sentClose = WebSocketCloseFrame(code: code, reason: reason)
            core.phase = .closing(connection)
            perform(actions, &core)
            scheduleCloseTimeout(&core)
            notifyState(&core)
        case .closing, .closed:
            break
        case .preparing, .connecting, .handshaking, .rejected:
            fail(CourierError(.cancelled, "The WebSocket was closed before it opened.", url: url), &core)
        }
    }

    /// Closes with 1001 without waiting for the server, failing whatever waits with `.cancelled`.
    func abandon(_ core: inout WebSocketCore) {
        let cancelled = CourierError(.cancelled, "The WebSocket was cancelled.", url: url)
        if case .open = core.phase, let actions = core.client?.handle(.close(.goingAway, reason: "")) {
            core.sentClose = WebSocketCloseFrame(code: .goingAway)
            perform(actions, &core)
        }
        end(.failed(cancelled, WebSocketCloseStatus(code: .goingAway)), &core)
    }

    /// The next message for ``Messages``.
    func nextMessage() async throws -> WebSocketMessage? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage?, any Error>) in
                core.withLock { core in
                    if core.inboxHead < core.inbox.count {
                        continuation.resume(returning: takeMessage(&core))
                    } else if case .closed(let end) = core.phase {
                        switch end {
                        case .closed: continuation.resume(returning: nil)
                        case .failed(let error, _): continuation.resume(throwing: error)
                        }
                    } else if core.messageWaiter != nil {
                        continuation.resume(throwing: CourierError(.invalidRequest, "Another task is already reading this WebSocket's messages.",
                                                                   url: url))
                    } else {
                        core.messageWaiter = continuation
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    private func takeMessage(_ core: inout WebSocketCore) -> WebSocketMessage {
        let message = core.inbox[core.inboxHead]
        core.inboxHead += 1
        core.inboxBytes -= message.byteCount
        if core.inboxHead == core.inbox.count {
            core.inbox.removeAll(keepingCapacity: true)
            core.inboxHead = 0
        } else if core.inboxHead >= 1024 {
            core.inbox.removeFirst(core.inboxHead)
            core.inboxHead = 0
        }
        if core.readingPaused, core.inboxBytes < configuration.receiveBufferSize {
            core.readingPaused = false
            updateWatch(&core)
            // TLS may hold decrypted bytes the socket no longer signals: read now.
            readAvailable(&core)
        }
        return message
    }

    /// The error for a call that needs an open connection.
    func notOpenError(_ core: WebSocketCore) -> CourierError {
        if case .closed(.failed(let error, _)) = core.phase { return error }
        return CourierError(.webSocketClosed, "The WebSocket is \(core.phase.state == .closing ? "closing" : "closed").",
                            underlyingError: (core.phase.state == .closed ? closeStatus(of: core) : nil).map(WebSocketCloseError.init),
                            url: url)
    }

    private func closeStatus(of core: WebSocketCore) -> WebSocketCloseStatus? {
        if case .closed(let end) = core.phase { end.status } else { nil }
    }
}
