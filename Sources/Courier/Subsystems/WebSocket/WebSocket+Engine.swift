import CourierSupport
import Foundation

// The connection's machinery. Every function taking `inout WebSocketCore` runs under the lock.
extension WebSocket {
    // MARK: - The lifecycle

    /// Feeds `event` to the lifecycle and carries out its actions.
    func apply(_ event: WebSocketLifecycle.Event, _ core: inout WebSocketCore) {
        for action in core.lifecycle.handle(event) {
            switch action {
            case .writeHandshake:
                guard let head = core.client?.request.head else { continue }
                core.output.append(head)
                core.outputBytes += head.count
                flush(&core)
                updateWatch(&core)
            case .opened:
                core.hasOpened = true
                let waiters = core.openWaiters
                core.openWaiters.removeAll()
                core.later { for waiter in waiters { waiter.resume() } }
                startKeepAlive(&core)
            case .sendClose(let code, let reason):
                core.closeRequested = true
                endInlineLease(&core)
                if let engine = core.engine {
                    closeEngine(engine, code: code, reason: reason, &core)
                    continue
                }
                if core.readingPaused {
                    // The server's close frame must be read, whether the consumer reads or not.
                    core.readingPaused = false
                    updateWatch(&core)
                }
                if let actions = core.client?.handle(.close(code, reason: reason)) { perform(actions, &core) }
            case .scheduleCloseTimeout:
                scheduleCloseTimeout(&core)
            case .stateChanged(let state):
                for (queue, handler) in core.stateHandlers { queue.async { handler(state) } }
            case .finish(let end):
                finish(end, &core)
            }
        }
    }

    /// Releases the connection and answers every waiter with `end`.
    private func finish(_ end: WebSocketEnd, _ core: inout WebSocketCore) {
        // What is queued (a close frame) goes out if the socket takes it now.
        flush(&core)
        core.attempt?.cancel()
        core.attempt = nil
        core.connection?.close()
        core.connection = nil
        core.output.removeAll()
        core.outputBytes = 0
        for timer in core.timers.values { timer.cancel() }
        core.timers.removeAll()
        let notOpen = notOpenError(core)
        releaseEngine(failing: notOpen, &core)
        let (openWaiters, sendWaiters, pings, closeWaiters, messageWaiter) =
            (core.openWaiters, core.sendWaiters, core.pings, core.closeWaiters, core.messageWaiter)
        core.openWaiters.removeAll()
        core.sendWaiters.removeAll()
        core.pings.removeAll()
        core.closeWaiters.removeAll()
        core.messageWaiter = nil
        core.later {
            for waiter in openWaiters { waiter.resume(throwing: notOpen) }
            for waiter in sendWaiters { waiter.resume(throwing: notOpen) }
            for ping in pings { ping.waiter?.resume(throwing: notOpen) }
            for waiter in closeWaiters { waiter.resume() }
            switch end {
            case .closed: messageWaiter?.resume(returning: nil)
            case .failed(let error, _): messageWaiter?.resume(throwing: error)
            }
        }
    }

    // MARK: - Opening

    /// Connects through `transport` and writes the handshake `request`. Called once, by the session.
    func open(_ request: WebSocketHandshakeRequest, through transport: any RawConnectionTransport, timeout: Duration) {
        let proceed = withCore { core -> Bool in
            guard core.phase == .preparing else { return false }
            core.client = WebSocketClientConnection(
                request: request, maximumMessageSize: configuration.maximumMessageSize,
                maximumHeadSize: configuration.maximumHandshakeResponseSize)
            apply(.connecting, &core)
            schedule(after: timeout, &core) { socket, core in socket.apply(.openingTimedOut(timeout), &core) }
            return true
        }
        guard proceed else { return }
        let attempt = transport.openRawConnection(to: request.url, timeout: timeout, observer: self) { [weak self] result in
            self?.connected(result)
        }
        withCore { core in
            if core.phase == .connecting { core.attempt = attempt } else { attempt.cancel() }
        }
    }

    /// Ends the connection before it could open (the request could not be prepared). The error
    /// names the socket's `ws(s)://` URL, not the `http(s)://` one the handshake is sent to.
    func failToOpen(_ error: CourierError) {
        withCore { core in apply(.failed(error.replacingURL(with: url), nil), &core) }
    }

    private func connected(_ result: Result<any RawConnection, CourierError>) {
        withCore { core in
            core.attempt = nil
            switch result {
            case .failure(let error):
                // The connection was opened to the http(s) URL; the socket's caller knows the ws(s) one.
                apply(.failed(error.replacingURL(with: url), nil), &core)
            case .success(let connection):
                guard core.phase == .connecting else {
                    connection.close()
                    return
                }
                core.connection = connection
                apply(.connected, &core)
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
                withCore { core in
                    if core.isClosed {
                        let error = notOpenError(core)
                        core.later { continuation.resume(throwing: error) }
                    } else if core.outputBytes <= configuration.sendBufferSize {
                        core.later { continuation.resume() }
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
        if usesMessageEngine { return sendEnginePing(waiter: waiter, &core) }
        guard core.isOpen, core.client != nil else {
            let error = notOpenError(core)
            core.later { waiter?.resume(throwing: error) }
            return
        }
        // The pong must be read as it arrives, or the round trip would include the lease.
        endInlineLease(&core)
        var payload = payload
        if payload.isEmpty {
            core.pingCounter += 1
            payload = withUnsafeBytes(of: core.pingCounter.bigEndian) { Data($0) }
        }
        guard let actions = core.client?.handle(.sendPing(payload)) else { return }
        if case .protocol(.refused(let refusal))? = actions.first {
            let detail =
                if case .controlPayloadTooLong(let count) = refusal { "a ping payload may have at most 125 bytes, not \(count)" } else {
                    "\(refusal)"
                }
            let error = CourierError(.invalidRequest, "The ping cannot be sent: \(detail).", url: url)
            core.later { waiter?.resume(throwing: error) }
            return
        }
        core.pings.append(WebSocketCore.Ping(payload: payload, sentAt: .now, waiter: waiter))
        perform(actions, &core)
        schedulePingTimeout(for: payload, &core)
    }

    /// Fails the connection when the ping with `payload` is still unanswered after the ping timeout
    /// and nothing else came from the server meanwhile; while reading is paused for the consumer,
    /// or while bytes keep arriving (a large message in front of the pong), the wait starts again.
    func schedulePingTimeout(for payload: Data, _ core: inout WebSocketCore) {
        let timeout = configuration.pingTimeout
        let receivedBefore = core.bytesReceived
        schedule(after: timeout, &core) { socket, core in
            guard core.pings.contains(where: { $0.payload == payload }) else { return }
            if core.readingPaused || core.bytesReceived != receivedBefore {
                // Unanswered because the consumer holds the reads back, or because the pong waits
                // behind what the server is still sending: not because the server is gone.
                socket.schedulePingTimeout(for: payload, &core)
                return
            }
            socket.apply(
                .failed(
                    CourierError(.timedOut, "The server did not answer a ping within \(timeout).", url: socket.url),
                    WebSocketCloseStatus(code: .abnormalClosure)), &core)
        }
    }

    /// Runs `body` under the lock, then resumes the continuations it queued (``WebSocketCore/later(_:)``).
    func withCore<Value, Failure: Error>(_ body: (inout WebSocketCore) throws(Failure) -> Value) throws(Failure) -> Value {
        let (result, resumptions) = core.withLock { core in
            let result = Result { () throws(Failure) -> Value in try body(&core) }
            defer { core.resumptions.removeAll() }
            return (result, core.resumptions)
        }
        for resume in resumptions { resume() }
        return try result.get()
    }

    /// The next message for ``Messages``.
    func nextMessage() async throws -> WebSocketMessage? {
        if let message = receiveInline() { return message }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<WebSocketMessage?, any Error>) in
                withCore { core in
                    if core.inboxHead < core.inbox.count {
                        let message = takeMessage(&core)
                        core.later { continuation.resume(returning: message) }
                    } else if case .closed(let end) = core.phase {
                        core.later {
                            switch end {
                            case .closed: continuation.resume(returning: nil)
                            case .failed(let error, _): continuation.resume(throwing: error)
                            }
                        }
                    } else if core.messageWaiter != nil {
                        let error = CourierError(.invalidRequest, "Another task is already reading this WebSocket's messages.", url: url)
                        core.later { continuation.resume(throwing: error) }
                    } else {
                        endInlineLease(&core)
                        core.messageWaiter = continuation
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// A speed trick (``FastPaths``): when the consumer asks for the next message while none is
    /// there and recent messages came quickly, it waits a little for the socket on its own thread
    /// and reads there, instead of parking and being woken by the poller thread (two thread hops
    /// per message against one). The poller does not read meanwhile. Returns nil to park as usual.
    private func receiveInline() -> WebSocketMessage? {
        guard FastPaths.isOn(.wsinline) else { return nil }
        enum Plan {
            case park
            case take(WebSocketMessage)
            case wait(any RawConnection, Duration)
        }
        let plan = withCore { core -> Plan in
            if core.inboxHead < core.inbox.count { return .park }
            guard core.isOpen, !core.readingPaused, core.inlineReading != .waiting, core.messageWaiter == nil,
                let connection = core.connection, let window = core.inlineWait.window()
            else { return .park }
            let wasLeased = core.inlineReading == .leased
            core.inlineReading = .waiting
            // Under a lease the poller is not reading already: nothing to tell it.
            if !wasLeased { updateWatch(&core) }
            // Bytes libcurl already decrypted do not make the socket readable: read them first.
            if connection.holdsReadBytes { readAvailable(&core) }
            guard core.inboxHead == core.inbox.count, core.connection === connection else {
                core.inlineReading = .off
                updateWatch(&core)
                return core.inboxHead < core.inbox.count ? .take(takeMessage(&core)) : .park
            }
            return .wait(connection, window)
        }
        guard case .wait(let connection, let window) = plan else {
            if case .take(let message) = plan { return message }
            return nil
        }
        let started = ContinuousClock.now
        let readable = connection.awaitReadable(within: window)
        return withCore { core -> WebSocketMessage? in
            guard core.connection === connection else {
                core.inlineReading = .off
                return nil
            }
            // Read while still `.waiting`, so that nothing the read does re-arms the poller (it
            // would wake for these very bytes, or stay armed under the lease).
            if readable { readAvailable(&core) }
            let arrived = core.inboxHead < core.inbox.count
            if arrived, core.isOpen {
                beginInlineLease(&core)
            } else {
                core.inlineReading = .off
                updateWatch(&core)
            }
            core.inlineWait.record(arrived ? ContinuousClock.now - started : nil)
            return arrived ? takeMessage(&core) : nil
        }
    }

    /// How long a consumer that took a message inline may go without asking for the next one
    /// before the poller reads again (answers pings, sees a close) on its behalf.
    static let inlineLeaseLimit: Duration = .milliseconds(50)

    /// Keeps the poller off the socket after an inline read (``WebSocketCore/InlineReading/leased``).
    private func beginInlineLease(_ core: inout WebSocketCore) {
        core.inlineReading = .leased
        guard !core.inlineLeaseTimer else { return }
        core.inlineLeaseTimer = true
        // One timer per limit, not per message: it ends whichever lease is held when it fires.
        // Real time whatever the socket's clock: a speed trick, not a timeout anyone sees.
        schedule(after: Self.inlineLeaseLimit, on: ContinuousClock(), &core) { socket, core in
            core.inlineLeaseTimer = false
            socket.endInlineLease(&core)
        }
    }

    /// Lets the poller read again after an inline read: the consumer parks, pings, closes, or
    /// held the lease past ``inlineLeaseLimit``.
    func endInlineLease(_ core: inout WebSocketCore) {
        guard core.inlineReading == .leased else { return }
        core.inlineReading = .off
        updateWatch(&core)
    }

    private func takeMessage(_ core: inout WebSocketCore) -> WebSocketMessage {
        // Never nil: the caller checked `inboxHead < inbox.count`, and only taken slots are emptied.
        let message = core.inbox[core.inboxHead] ?? .binary(Data())
        core.inbox[core.inboxHead] = nil
        core.inboxHead += 1
        core.inboxBytes -= message.byteCount
        if core.inboxHead == core.inbox.count {
            core.inbox.removeAll(keepingCapacity: true)
            core.inboxHead = 0
        } else if core.inboxHead >= 1024, core.inboxHead * 2 >= core.inbox.count {
            core.inbox.removeFirst(core.inboxHead)
            core.inboxHead = 0
        }
        if core.readingPaused, core.inboxBytes < configuration.receiveBufferSize {
            core.readingPaused = false
            updateWatch(&core)
            // TLS may hold decrypted bytes the socket no longer signals: read now.
            readAvailable(&core)
            receiveFromEngine(&core)
        }
        return message
    }

    /// The error for a call that needs an open connection.
    func notOpenError(_ core: WebSocketCore) -> CourierError {
        switch core.phase {
        case .closed(.failed(let error, _)):
            return error
        case .closed(.closed(let status)):
            return CourierError(
                .webSocketClosed, "The WebSocket is closed (\(status)).", underlyingError: WebSocketCloseError(status: status),
                url: url)
        default:
            return CourierError(.webSocketClosed, "The WebSocket is closing.", url: url)
        }
    }
}
