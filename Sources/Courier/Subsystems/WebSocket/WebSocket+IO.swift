import Foundation

extension WebSocket: RawConnectionObserver {
    func connectionIsReady(readable: Bool, writable: Bool) {
        withCore { core in
            if writable, core.writeBlocked { flush(&core) }
            if readable, core.inlineReading != .waiting { readAvailable(&core) }
        }
    }

    func transportDidShutDown() {
        withCore { core in
            apply(.failed(CourierError(.sessionInvalidated, "The session's transport shut down.", url: url), nil), &core)
        }
    }
}

// Reading, writing and the protocol's actions. Every function here runs under the lock.
extension WebSocket {
    /// The first byte of a pong frame the client sends: FIN and opcode 0xA.
    static let pongFrameStart: UInt8 = 0x8A

    // MARK: - Reading

    /// Reads what the connection has, until it would block, the consumer's buffer is full, or it ends.
    func readAvailable(_ core: inout WebSocketCore) {
        while !core.readingPaused, let connection = core.connection {
            let result = core.readBuffer.withUnsafeMutableBytes { connection.receive(into: $0) }
            switch result {
            case .transferred(let count):
                received(Data(core.readBuffer[0..<count]), &core)
                // A short read emptied a plain socket: asking again would only say so (the poller
                // reports what comes next).
                if count < core.readBuffer.count, !connection.holdsReadBytes { return }
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
        core.bytesReceived &+= UInt64(bytes.count)
        if case .rejected = core.phase {
            apply(.rejectionBody(bytes, ended: false), &core)
        } else if let actions = core.client?.handle(.bytesReceived(bytes)) {
            perform(actions, &core)
        }
    }

    /// The connection ended (`error` nil: the server closed it).
    private func connectionEnded(_ error: CourierError?, _ core: inout WebSocketCore) {
        core.connection?.close()
        core.connection = nil
        if case .rejected = core.phase {
            apply(.rejectionBody(Data(), ended: true), &core)
        } else if let error {
            apply(.failed(error, WebSocketCloseStatus(code: .abnormalClosure)), &core)
        } else if let actions = core.client?.handle(.connectionClosed) {
            perform(actions, &core)
        }
    }

    // MARK: - The protocol's actions

    /// Carries out what the protocol asked for.
    func perform(_ actions: [WebSocketClientConnection.Action], _ core: inout WebSocketCore) {
        for action in actions {
            switch action {
            case .opened(let accepted):
                core.subprotocol = accepted.subprotocol
                core.isCompressed = accepted.compression != nil
                apply(.accepted, &core)
            case .handshakeFailed(.unexpectedStatus, let head?, let remainder):
                apply(.refused(head), &core)
                if !remainder.isEmpty { apply(.rejectionBody(remainder, ended: false), &core) }
            case .handshakeFailed(let failure, let head, let remainder):
                let response = head.map { WebSocketHandshakeResponse(statusCode: $0.statusCode, headers: $0.headers, body: remainder) }
                apply(.failed(CourierError(webSocketHandshake: failure, response: response, url: url), nil), &core)
            case .protocol(let action):
                perform(action, &core)
            }
            if core.isClosed { return }
        }
    }

    private func perform(_ action: WebSocketStateMachine.Action, _ core: inout WebSocketCore) {
        switch action {
        case .send(let bytes):
            // A pong behind another pong that has not started to go out replaces it: a server
            // that pings without reading the answers cannot grow the queue (§5.5.3 allows
            // answering only the most recent ping).
            if bytes.first == Self.pongFrameStart, core.output.count > 1, let last = core.output.last, last.first == Self.pongFrameStart {
                core.outputBytes += bytes.count - last.count
                core.output[core.output.count - 1] = bytes
            } else {
                core.output.append(bytes)
                core.outputBytes += bytes.count
            }
            flush(&core)
        case .deliver(let message):
            deliver(message, &core)
        case .pongReceived(let payload):
            guard let index = core.pings.firstIndex(where: { $0.payload == payload }) else { return }
            let now = ContinuousClock.now
            // A pong answers its ping and vouches for the ones before it (§5.5.3).
            let answered = core.pings[...index]
            core.pings.removeFirst(index + 1)
            core.later { for ping in answered { ping.waiter?.resume(returning: now - ping.sentAt) } }
        case .closeReceived(let frame):
            apply(.closeReceived(frame), &core)
        case .fail(let violation):
            apply(.protocolEnded(.failed(violation)), &core)
        case .closeConnection:
            core.connection?.close()
            core.connection = nil
        case .closed(let outcome):
            apply(.protocolEnded(outcome), &core)
        case .refused:
            break
        }
    }

    func deliver(_ message: WebSocketMessage, _ core: inout WebSocketCore) {
        // After the application's close(), messages still come until the server's close frame
        // (§7.1.2) and are delivered while they fit the receive buffer; past it they are
        // discarded rather than reads paused, so that the close handshake can finish.
        if core.closeRequested, core.inboxBytes >= configuration.receiveBufferSize, core.messageWaiter == nil { return }
        if let waiter = core.messageWaiter {
            core.messageWaiter = nil
            core.later { waiter.resume(returning: message) }
            return
        }
        core.inbox.append(message)
        core.inboxBytes += message.byteCount
        if !core.readingPaused, !core.closeRequested, core.inboxBytes >= configuration.receiveBufferSize {
            core.readingPaused = true
            updateWatch(&core)
        }
    }

    // MARK: - Writing

    /// Writes what the socket takes of the queued bytes; watches for room when it takes no more.
    func flush(_ core: inout WebSocketCore) {
        guard let connection = core.connection else { return }
        var blocked = false
        while !blocked, let first = core.output.first {
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
            case .wouldBlock, .ended:
                blocked = true
            case .failed(let error):
                connectionEnded(error, &core)
                return
            }
        }
        if blocked != core.writeBlocked {
            core.writeBlocked = blocked
            updateWatch(&core)
        }
        if core.outputBytes <= configuration.sendBufferSize, !core.sendWaiters.isEmpty {
            let waiters = core.sendWaiters
            core.sendWaiters.removeAll()
            core.later { for waiter in waiters { waiter.resume() } }
        }
    }

    /// Tells the transport what the connection waits for.
    func updateWatch(_ core: inout WebSocketCore) {
        core.connection?.watch(reading: !core.readingPaused && core.inlineReading == .off, writing: core.writeBlocked)
    }

    // MARK: - Timers

    /// Runs `body` under the lock after `delay` on `clock` (the socket's ``clock`` when nil),
    /// unless the connection ended first.
    func schedule(
        after delay: Duration, on clock: (any Clock<Duration>)? = nil, _ core: inout WebSocketCore,
        _ body: @escaping @Sendable (WebSocket, inout WebSocketCore) -> Void
    ) {
        guard !core.isClosed else { return }
        core.nextTimer += 1
        let id = core.nextTimer
        let clock = clock ?? self.clock
        core.timers[id] = Task { [weak self] in
            do { try await clock.sleep(for: delay) } catch { return }
            guard let self else { return }
            self.withCore { core in
                guard core.timers.removeValue(forKey: id) != nil, !core.isClosed else { return }
                body(self, &core)
            }
        }
    }

    /// Drops the connection once the close timeout passes; the protocol then says how it ended.
    func scheduleCloseTimeout(_ core: inout WebSocketCore) {
        schedule(after: configuration.closeTimeout, &core) { socket, core in
            if socket.usesMessageEngine { return socket.closeTimedOutOverEngine(&core) }
            core.connection?.close()
            core.connection = nil
            if let actions = core.client?.handle(.connectionClosed) { socket.perform(actions, &core) }
        }
    }

    func startKeepAlive(_ core: inout WebSocketCore) {
        guard let interval = configuration.pingInterval else { return }
        schedule(after: interval, &core) { socket, core in
            guard core.isOpen else { return }
            socket.sendPing(Data(), waiter: nil, &core)
            socket.startKeepAlive(&core)
        }
    }
}
