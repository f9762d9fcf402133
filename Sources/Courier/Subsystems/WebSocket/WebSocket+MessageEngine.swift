import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The socket over a ``WebSocketMessageEngine`` (a URLSession transport's `URLSessionWebSocketTask`):
// the same lifecycle, waiters, inbox and timers as over the curl transport's bytes, with the
// engine in place of the framing. Engine calls go out after the lock is released (`later`), so
// that an engine answering on the calling thread cannot find the lock held.
extension WebSocket: WebSocketTaskObserver {
    // MARK: - Opening

    /// Creates the task through `transport` and starts it. Called once, by the session.
    func open(_ request: URLRequest, through transport: any WebSocketTaskTransport, timeout: Duration) {
        guard beginOpening(timeout: timeout) else { return }
        let maximumMessageSize = configuration.maximumMessageSize
        transport.makeWebSocketTask(request, observer: self) { [self] result in
            switch result {
            case .success(let task):
                start(URLSessionWebSocketEngine(task: task, transport: transport, maximumMessageSize: maximumMessageSize))
            case .failure(let error):
                failToOpen(error)
            }
        }
    }

    /// Starts `engine`, which reports to this socket as its ``WebSocketTaskObserver`` (tests drive
    /// the socket over engines of their own this way).
    func open(engine: any WebSocketMessageEngine, timeout: Duration) {
        guard beginOpening(timeout: timeout) else {
            engine.abort()
            return
        }
        start(engine)
    }

    private func beginOpening(timeout: Duration) -> Bool {
        withCore { core -> Bool in
            guard core.phase == .preparing else { return false }
            apply(.connecting, &core)
            schedule(after: timeout, &core) { socket, core in socket.apply(.openingTimedOut(timeout), &core) }
            return true
        }
    }

    private func start(_ engine: any WebSocketMessageEngine) {
        withCore { core in
            guard core.phase == .connecting else {
                core.later { engine.abort() }
                return
            }
            core.engine = engine
            core.later { engine.start() }
        }
    }

    func webSocketTaskDidOpen(subprotocol: String?) {
        withCore { core in
            guard core.phase == .connecting, core.engine != nil else { return }
            let chosen = subprotocol.flatMap { $0.isEmpty ? nil : $0 }
            if let chosen, !protocols.contains(chosen) {
                apply(.failed(CourierError(webSocketHandshake: .unexpectedSubprotocol(chosen), response: nil, url: url), nil), &core)
                return
            }
            core.subprotocol = chosen
            apply(.connected, &core)
            apply(.accepted, &core)
            receiveFromEngine(&core)
        }
    }

    func webSocketTaskDidReceiveClose(code: Int, reason: Data?) {
        withCore { core in
            guard let frame = WebSocketTaskTranslation.closeFrame(code: code, reason: reason), !core.isClosed else { return }
            core.serverClose = frame
            apply(.closeReceived(frame), &core)
            // Messages the server sent before its close frame come first, through the receive
            // loop, which then fails and ends the socket; without a receive pending, end now.
            if !core.engineReceiving || core.sentClose != nil { engineEnded(error: nil, &core) }
        }
    }

    func webSocketTaskDidComplete(error: (any Error)?) {
        withCore { core in engineEnded(error: error, &core) }
    }

    /// The task ended or its receive loop failed for good: tells the lifecycle how.
    private func engineEnded(error: (any Error)?, _ core: inout WebSocketCore) {
        guard !core.isClosed, let engine = core.engine else { return }
        let end = WebSocketTaskTranslation.End(
            error: error, handshakeAnswer: engine.handshakeAnswer,
            serverClose: core.serverClose ?? engine.serverClose, opened: core.hasOpened,
            sentClose: core.sentClose, maximumMessageSize: configuration.maximumMessageSize)
        let event = WebSocketTaskTranslation.event(for: end, url: url)
        // As over the curl transport: the server's close frame takes the socket through closing.
        if case .protocolEnded(.clean) = event, let frame = end.serverClose, core.phase == .open { apply(.closeReceived(frame), &core) }
        apply(event, &core)
    }

    // MARK: - Messages

    /// Asks the engine for the next message while the inbox has room (backpressure: a consumer
    /// that stops taking messages stops the requests, and URLSession stops reading).
    func receiveFromEngine(_ core: inout WebSocketCore) {
        guard let engine = core.engine, core.hasOpened, !core.isClosed, !core.engineReceiving, !core.readingPaused else { return }
        core.engineReceiving = true
        core.later {
            engine.receive { [weak self] result in self?.engineReceived(result) }
        }
    }

    private func engineReceived(_ result: Result<WebSocketMessage, any Error>) {
        withCore { core in
            core.engineReceiving = false
            guard !core.isClosed else { return }
            switch result {
            case .success(let message):
                core.bytesReceived &+= UInt64(message.byteCount)
                deliver(message, &core)
                receiveFromEngine(&core)
            case .failure:
                // The server's close frame (reported or not yet), or a failure the task's
                // completion reports next; an application's close ends here too.
                // Otherwise the task's completion, which comes next, says why.
                if core.serverClose != nil || core.engine?.serverClose != nil || core.sentClose != nil {
                    engineEnded(error: nil, &core)
                }
            }
        }
    }

    /// ``send(_:)-(WebSocketMessage)`` over the engine: returns once the task wrote the message.
    func sendThroughEngine(_ message: WebSocketMessage) async throws {
        let engine = try withCore { core throws(CourierError) -> (any WebSocketMessageEngine)? in
            switch core.phase.state {
            case .connecting: return nil
            case .closing, .closed: throw notOpenError(core)
            case .open: return core.engine
            }
        }
        guard let engine else {
            try await connect()
            return try await sendThroughEngine(message)
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                withCore { core in
                    guard !core.isClosed else {
                        let error = notOpenError(core)
                        core.later { continuation.resume(throwing: error) }
                        return
                    }
                    core.nextEngineSend += 1
                    let id = core.nextEngineSend
                    core.engineSends[id] = continuation
                    core.later {
                        engine.send(message) { [weak self] error in self?.engineSent(id, error: error) }
                    }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    private func engineSent(_ id: Int, error: (any Error)?) {
        withCore { core in
            // Gone when the socket ended first: its end answered the sender.
            guard let continuation = core.engineSends.removeValue(forKey: id) else { return }
            if let error {
                let failure = core.isClosed ? notOpenError(core) : CourierError(wrapping: error, url: url)
                core.later { continuation.resume(throwing: failure) }
            } else {
                core.later { continuation.resume() }
            }
        }
    }

    // MARK: - Pings and the end

    /// A ping over the engine (which chooses its payload itself): `waiter` hears the round trip.
    func sendEnginePing(waiter: CheckedContinuation<Duration, any Error>?, _ core: inout WebSocketCore) {
        guard core.isOpen, let engine = core.engine else {
            let error = notOpenError(core)
            core.later { waiter?.resume(throwing: error) }
            return
        }
        core.pingCounter += 1
        let payload = withUnsafeBytes(of: core.pingCounter.bigEndian) { Data($0) }
        core.pings.append(WebSocketCore.Ping(payload: payload, sentAt: .now, waiter: waiter))
        core.later {
            engine.sendPing { [weak self] error in self?.enginePong(payload, error: error) }
        }
        schedulePingTimeout(for: payload, &core)
    }

    private func enginePong(_ payload: Data, error: (any Error)?) {
        let now = ContinuousClock.now
        withCore { core in
            guard let index = core.pings.firstIndex(where: { $0.payload == payload }) else { return }
            let ping = core.pings.remove(at: index)
            if let error {
                let failure = core.isClosed ? notOpenError(core) : CourierError(wrapping: error, url: url)
                core.later { ping.waiter?.resume(throwing: failure) }
            } else {
                core.later { ping.waiter?.resume(returning: now - ping.sentAt) }
            }
        }
    }

    /// Sends the application's close frame through the engine.
    func closeEngine(_ engine: any WebSocketMessageEngine, code: WebSocketCloseCode, reason: String, _ core: inout WebSocketCore) {
        core.sentClose = WebSocketCloseFrame(code: code, reason: reason)
        core.later { engine.close(code: code, reason: reason) }
    }

    /// Lets the engine go at the socket's end: answers the server's close frame if nothing was
    /// sent yet, else aborts; every send still waiting fails with `error`.
    func releaseEngine(failing error: CourierError, _ core: inout WebSocketCore) {
        let sends = core.engineSends.values
        core.engineSends.removeAll()
        if !sends.isEmpty { core.later { for send in sends { send.resume(throwing: error) } } }
        guard let engine = core.engine else { return }
        core.engine = nil
        core.engineReceiving = false
        if core.sentClose != nil { return }
        if let server = core.serverClose {
            let code = server.code.isValidOnWire ? server.code : .normalClosure
            core.later { engine.close(code: code, reason: "") }
        } else {
            core.later { engine.abort() }
        }
    }

    /// The close timeout over the engine: the close handshake ends with what is known.
    func closeTimedOutOverEngine(_ core: inout WebSocketCore) {
        apply(.protocolEnded(core.serverClose.map { .clean($0) } ?? .abnormal), &core)
    }
}
