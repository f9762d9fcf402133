import Foundation

/// The most of a refused handshake's body read for the error.
private let rejectionBodyLimit = 64 << 10

extension WebSocket: RawConnectionObserver {
    func connectionIsReady(readable: Bool, writable: Bool) {
        core.withLock { core in
            if writable, core.writeBlocked { flush(&core) }
            if readable { readAvailable(&core) }
        }
    }

    func transportDidShutDown() {
        core.withLock { core in
            fail(CourierError(.sessionInvalidated, "The session's transport shut down.", url: url), &core)
        }
    }
}

// Reading, writing and the protocol's actions. Every function here runs under the lock.
extension WebSocket {
    // MARK: - Reading

    /// Reads what the connection has, until it would block, the consumer's buffer is full, or it ends.
    func readAvailable(_ core: inout WebSocketCore) {
        while !core.readingPaused, let connection = core.phase.connection {
            let result = core.readBuffer.withUnsafeMutableBytes { connection.receive(into: $0) }
            switch result {
            case .transferred(let count):
                received(Data(core.readBuffer[0..<count]), &core)
            case .wouldBlock:
                return
            case .ended:
                connectionEnded(nil, &core)
                return
            case .failed(let error):
                connectionEnded(error, &core)
                return
            }
        }
    }

    private func received(_ bytes: Data, _ core: inout WebSocketCore) {
        if case .rejected(let connection, let head, var body) = core.phase {
            body.append(bytes.prefix(rejectionBodyLimit - body.count))
            core.phase = .rejected(connection, head, body: body)
            if body.count >= rejectionBodyLimit || (head.expectedContentLength >= 0 && body.count >= head.expectedContentLength) {
                finishRejection(head, body: body, &core)
            }
            return
        }
        guard let actions = core.client?.handle(.bytesReceived(bytes)) else { return }
        perform(actions, &core)
    }

    /// The connection ended (`error` nil: the server closed it).
    private func connectionEnded(_ error: CourierError?, _ core: inout WebSocketCore) {
        if case .rejected(_, let head, let body) = core.phase {
            finishRejection(head, body: body, &core)
            return
        }
        if let error, core.failure == nil { core.failure = error }
        core.phase.connection?.close()
        guard let actions = core.client?.handle(.connectionClosed) else { return }
        perform(actions, &core)
        if !core.isClosed { end(outcome: .abnormal, &core) }
    }

    private func finishRejection(_ head: ResponseHead, body: Data, _ core: inout WebSocketCore) {
        let response = WebSocketHandshakeResponse(statusCode: head.statusCode, headers: head.headers, body: body)
        end(.failed(CourierError(webSocketHandshake: .unexpectedStatus(head.statusCode), response: response, url: url), nil), &core)
    }

    // MARK: - The protocol's actions

    /// Carries out what the protocol asked for, then ends the connection if the protocol has.
    func perform(_ actions: [WebSocketClientConnection.Action], _ core: inout WebSocketCore) {
        for action in actions {
            switch action {
            case .opened(let accepted):
                guard case .handshaking(let connection) = core.phase else { continue }
                core.phase = .open(connection)
                core.subprotocol = accepted.subprotocol
                core.isCompressed = accepted.compression != nil
                for waiter in core.openWaiters { waiter.resume() }
                core.openWaiters.removeAll()
                notifyState(&core)
                startKeepAlive(&core)
            case .handshakeFailed(let failure, let head, let remainder):
                if case .unexpectedStatus = failure, let head, let connection = core.phase.connection {
                    core.phase = .rejected(connection, head, body: Data())
                    received(remainder, &core)
                    if head.expectedContentLength == 0 { finishRejection(head, body: Data(), &core) }
                } else {
                    let response = head.map { WebSocketHandshakeResponse(statusCode: $0.statusCode, headers: $0.headers, body: remainder) }
                    end(.failed(CourierError(webSocketHandshake: failure, response: response, url: url), nil), &core)
                }
            case .protocol(let action):
                perform(action, &core)
            }
            if core.isClosed { return }
        }
        // (A refused handshake ends once its body is read, not when the protocol gives up.)
        if case .closed(let outcome)? = core.client?.state, !core.isClosed, !core.isReadingRejection {
            end(outcome: outcome, &core)
        }
    }

    private func perform(_ action: WebSocketStateMachine.Action, _ core: inout WebSocketCore) {
        switch action {
        case .send(let bytes):
            core.output.append(bytes)
            core.outputBytes += bytes.count
            flush(&core)
        case .deliver(let message):
            deliver(message, &core)
        case .pongReceived(let payload):
            guard let index = core.pings.firstIndex(where: { $0.payload == payload }) else { return }
            let now = ContinuousClock.now
            // A pong answers its ping and vouches for the ones before it (§5.5.3).
            for ping in core.pings[...index] { ping.waiter?.resume(returning: now - ping.sentAt) }
            core.pings.removeFirst(index + 1)
        case .closeHandshakeCompleted:
            if case .open(let connection) = core.phase {
                core.serverClosedFirst = true
                core.phase = .closing(connection)
                notifyState(&core)
            }
            // The server closes the TCP connection now (§7.1.1); if it does not, Courier does.
            scheduleCloseTimeout(&core)
        case .fail(let violation):
            if core.failure == nil { core.failure = CourierError(webSocketViolation: violation, url: url) }
        case .closeConnection:
            // What is queued (the close frame) goes out if the socket takes it now.
            flush(&core)
            core.phase.connection?.close()
        case .closed(let outcome):
            end(outcome: outcome, &core)
        case .refused:
            break
        }
    }

    private func deliver(_ message: WebSocketMessage, _ core: inout WebSocketCore) {
        // After the application's close(), it asked for nothing more.
        guard !core.closeRequested else { return }
        if let waiter = core.messageWaiter {
            core.messageWaiter = nil
            waiter.resume(returning: message)
            return
        }
        core.inbox.append(message)
        core.inboxBytes += message.byteCount
        if !core.readingPaused, core.inboxBytes >= configuration.receiveBufferSize {
            core.readingPaused = true
            updateWatch(&core)
        }
    }

    // MARK: - Writing

    /// Writes what the socket takes of the queued bytes; watches for room when it takes no more.
    func flush(_ core: inout WebSocketCore) {
        guard let connection = core.phase.connection else { return }
        var blocked = false
        while let first = core.output.first {
            let offset = core.outputOffset
            let result = first.withUnsafeBytes { bytes in connection.send(UnsafeRawBufferPointer(rebasing: bytes[offset...])) }
            switch result {
            case .transferred(let count):
                core.outputBytes -= count
                if offset + count == first.count {
                    core.output.removeFirst()
                    core.outputOffset = 0
                } else {
                    core.outputOffset += count
                }
            case .wouldBlock:
                blocked = true
            case .ended:
                blocked = true
            case .failed(let error):
                connectionEnded(error, &core)
                return
            }
            if blocked { break }
        }
        if blocked != core.writeBlocked {
            core.writeBlocked = blocked
            updateWatch(&core)
        }
        if core.outputBytes <= configuration.sendBufferSize, !core.sendWaiters.isEmpty {
            for waiter in core.sendWaiters { waiter.resume() }
            core.sendWaiters.removeAll()
        }
    }

    /// Tells the transport what the connection waits for.
    func updateWatch(_ core: inout WebSocketCore) {
        core.phase.connection?.watch(reading: !core.readingPaused, writing: core.writeBlocked)
    }

    // MARK: - The end

    /// Fails the connection with `error` at once.
    func fail(_ error: CourierError, _ core: inout WebSocketCore) {
        guard !core.isClosed else { return }
        if core.failure == nil { core.failure = error }
        core.phase.connection?.close()
        end(outcome: .abnormal, &core)
    }

    /// Ends the connection as the protocol's `outcome` says.
    private func end(outcome: WebSocketCloseOutcome, _ core: inout WebSocketCore) {
        switch outcome {
        case .clean(let frame):
            let status = WebSocketCloseStatus(code: frame.code, reason: frame.reason, initiatedByServer: core.serverClosedFirst)
            if let failure = core.failure {
                end(.failed(failure, status), &core)
            } else if core.serverClosedFirst, !status.isNormal {
                end(.failed(CourierError(webSocketClosedWith: status, url: url), status), &core)
            } else {
                end(.closed(status), &core)
            }
        case .abnormal:
            let error = core.failure ?? CourierError(.connectionLost, "The connection closed without a WebSocket close frame.", url: url)
            end(.failed(error, WebSocketCloseStatus(code: .abnormalClosure, initiatedByServer: core.sentClose == nil)), &core)
        case .failed(let violation):
            let error = core.failure ?? CourierError(webSocketViolation: violation, url: url)
            end(.failed(error, WebSocketCloseStatus(code: violation.closeCode)), &core)
        }
    }

    /// The one transition into `closed`: releases the connection and answers every waiter.
    func end(_ end: WebSocketEnd, _ core: inout WebSocketCore) {
        guard !core.isClosed else { return }
        switch core.phase {
        case .connecting(let attempt): attempt.cancel()
        default: core.phase.connection?.close()
        }
        core.phase = .closed(end)
        core.output.removeAll()
        core.outputBytes = 0
        for timer in core.timers.values { timer.cancel() }
        core.timers.removeAll()
        let error: CourierError? = if case .failed(let error, _) = end { error } else { nil }
        let notOpen = notOpenError(core)
        for waiter in core.openWaiters { waiter.resume(throwing: notOpen) }
        for waiter in core.sendWaiters { waiter.resume(throwing: notOpen) }
        for ping in core.pings { ping.waiter?.resume(throwing: notOpen) }
        for waiter in core.closeWaiters { waiter.resume() }
        core.openWaiters.removeAll()
        core.sendWaiters.removeAll()
        core.pings.removeAll()
        core.closeWaiters.removeAll()
        if let waiter = core.messageWaiter {
            core.messageWaiter = nil
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
        notifyState(&core)
    }

    // MARK: - Timers and hooks

    /// Runs `body` under the lock after `delay`, unless the connection ended first.
    func schedule(after delay: Duration, _ core: inout WebSocketCore,
                  _ body: @escaping @Sendable (WebSocket, inout WebSocketCore) -> Void) {
        guard !core.isClosed else { return }
        core.nextTimer += 1
        let id = core.nextTimer
        core.timers[id] = Task { [weak self] in
            do { try await Task.sleep(for: delay) } catch { return }
            guard let self else { return }
            self.core.withLock { core in
                guard core.timers.removeValue(forKey: id) != nil, !core.isClosed else { return }
                body(self, &core)
            }
        }
    }

    func scheduleCloseTimeout(_ core: inout WebSocketCore) {
        schedule(after: configuration.closeTimeout, &core) { socket, core in
            core.phase.connection?.close()
            guard let actions = core.client?.handle(.connectionClosed) else { return }
            socket.perform(actions, &core)
            if !core.isClosed { socket.end(outcome: .abnormal, &core) }
        }
    }

    private func startKeepAlive(_ core: inout WebSocketCore) {
        guard let interval = configuration.pingInterval else { return }
        schedule(after: interval, &core) { socket, core in
            guard case .open = core.phase else { return }
            socket.sendPing(Data(), waiter: nil, &core)
            socket.startKeepAlive(&core)
        }
    }

    /// Tells the state handlers about a new state.
    func notifyState(_ core: inout WebSocketCore) {
        let state = core.phase.state
        guard state != core.reportedState else { return }
        core.reportedState = state
        for (queue, handler) in core.stateHandlers { queue.async { handler(state) } }
    }
}
