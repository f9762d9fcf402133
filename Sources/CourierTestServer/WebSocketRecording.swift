import CourierLocking
import Foundation

/// What the server saw on one WebSocket connection: the handshake request, every frame the client
/// sent (with its masking key), the reassembled messages, the client's close frame, the protocol
/// violations the client committed, and how the session ended. Live: it fills in while the
/// session runs; get one with ``TestServer/takeWebSocket(timeout:)``.
///
/// ```swift
/// let socket = try await server.takeWebSocket()
/// try await socket.waitUntilFinished()
/// #expect(socket.frames.allSatisfy { $0.isMasked })
/// #expect(socket.clientClose?.code == 1000)
/// #expect(socket.violations == [])
/// ```
public final class WebSocketRecording: Sendable, CustomStringConvertible {
    /// One frame as the client sent it.
    public struct Frame: Sendable, Equatable, CustomStringConvertible {
        /// The opcode, possibly a reserved one.
        public let opcode: WebSocketScript.Opcode
        /// The FIN bit.
        public let fin: Bool
        /// The RSV1 bit.
        public let rsv1: Bool
        /// The RSV2 bit.
        public let rsv2: Bool
        /// The RSV3 bit.
        public let rsv3: Bool
        /// The masking key, big-endian; nil for an unmasked frame (a violation from a client).
        public let maskingKey: UInt32?
        /// The payload, unmasked, cut off at the server's recording limit.
        public let payload: Data
        /// The payload's full length.
        public let payloadLength: Int

        /// Whether the frame was masked (every client frame must be, RFC 6455 §5.1).
        public var isMasked: Bool { maskingKey != nil }

        /// A short description, e.g. `text(fin, masked, 5 bytes)`.
        public var description: String {
            var flags = [fin ? "fin" : "more"]
            if rsv1 { flags.append("rsv1") }
            if rsv2 { flags.append("rsv2") }
            if rsv3 { flags.append("rsv3") }
            flags.append(isMasked ? "masked" : "unmasked")
            return "\(opcode)(\(flags.joined(separator: ", ")), \(payloadLength) bytes)"
        }
    }

    /// The contents of a close frame.
    public struct Close: Sendable, Hashable, CustomStringConvertible {
        /// The status code; nil for a close frame without a payload.
        public let code: UInt16?
        /// The reason (invalid UTF-8 replaced).
        public let reason: String

        /// A close status.
        public init(code: UInt16?, reason: String = "") {
            self.code = code
            self.reason = reason
        }

        /// E.g. `1000 "bye"`, or `no code`.
        public var description: String {
            guard let code else { return "no code" }
            return reason.isEmpty ? "\(code)" : "\(code) \(reason.debugDescription)"
        }
    }

    /// How a session ended.
    public enum Ending: Sendable, Hashable, CustomStringConvertible {
        /// Both close frames were exchanged, then the server closed the connection.
        case closeHandshake
        /// The client broke the protocol: the server sent a close frame with `code` and dropped
        /// the connection (see ``WebSocketRecording/violations``).
        case failed(code: UInt16)
        /// The client's connection ended (FIN or RST) before a close handshake completed.
        case clientDisconnected
        /// An ``WebSocketScript/Step/end(_:)`` step ended it.
        case scripted(SocketEffect)
        /// The server shut down first.
        case serverShutdown

        /// The ending's name.
        public var description: String {
            switch self {
            case .closeHandshake: return "closeHandshake"
            case .failed(let code): return "failed(\(code))"
            case .clientDisconnected: return "clientDisconnected"
            case .scripted(let effect): return "scripted(\(effect))"
            case .serverShutdown: return "serverShutdown"
            }
        }
    }

    private struct State {
        var frames: [Frame] = []
        var messages: [WebSocketScript.Message] = []
        var violations: [String] = []
        var clientClose: Close?
        var serverClose: Close?
        var ending: Ending?
        var watchers: [(isSatisfied: @Sendable (State) -> Bool, slot: WaitSlot<Void>)] = []
    }

    /// The handshake request.
    public let request: RecordedRequest
    /// The subprotocol the server answered with, if any.
    public let subprotocol: String?
    private let state = Locked(State())

    init(request: RecordedRequest, subprotocol: String?) {
        self.request = request
        self.subprotocol = subprotocol
    }

    /// The subprotocols the client offered in `Sec-WebSocket-Protocol`, in order.
    public var offeredSubprotocols: [String] {
        WebSocketHandshake.listValues(request.headers, "Sec-WebSocket-Protocol")
    }

    /// The extensions the client offered in `Sec-WebSocket-Extensions`, each with its parameters
    /// as sent (e.g. `permessage-deflate; client_max_window_bits`). The server accepts none.
    public var offeredExtensions: [String] {
        WebSocketHandshake.listValues(request.headers, "Sec-WebSocket-Extensions")
    }

    /// Every frame the client sent, in order (control frames included).
    public var frames: [Frame] { state.withLock { $0.frames } }
    /// The data messages the client sent, reassembled, in order.
    public var messages: [WebSocketScript.Message] { state.withLock { $0.messages } }
    /// The payloads of the pongs the client sent, in order.
    public var pongs: [Data] { frames.filter { $0.opcode == .pong }.map(\.payload) }
    /// Each protocol violation the client committed (the server failed the connection at the
    /// first), naming the RFC 6455 rule; empty for a well-behaved client.
    public var violations: [String] { state.withLock { $0.violations } }
    /// The client's close frame, once received.
    public var clientClose: Close? { state.withLock { $0.clientClose } }
    /// The close frame the server sent (scripted, the answer to the client's, or a failure's).
    public var serverClose: Close? { state.withLock { $0.serverClose } }
    /// How the session ended; nil while it runs.
    public var ending: Ending? { state.withLock { $0.ending } }
    /// Whether the session has ended and its connection is closed (or being closed).
    public var isFinished: Bool { ending != nil }

    /// A short summary.
    public var description: String {
        let (frames, violations, ending) = state.withLock { ($0.frames.count, $0.violations, $0.ending) }
        return "WebSocketRecording(\(request.path), \(frames) frames, ending: \(ending.map(\.description) ?? "running")"
            + (violations.isEmpty ? ")" : ", violations: \(violations))")
    }

    // MARK: Waiting

    /// Waits until the session has ended and returns how.
    ///
    /// - Throws: ``TestServerError/timeout``, ``TestServerError/shutdown`` (only if the server
    ///   shut down without ending the session, which does not happen), or `CancellationError`.
    @discardableResult
    public func waitUntilFinished(timeout: Duration = .seconds(30)) async throws -> Ending {
        try await wait(timeout: timeout) { $0.ending != nil }
        return ending ?? .serverShutdown
    }

    /// Waits until the client has sent at least `count` data messages and returns them all.
    ///
    /// - Throws: ``TestServerError/timeout`` (also when the session ends with fewer), or
    ///   `CancellationError`.
    @discardableResult
    public func waitForMessages(count: Int, timeout: Duration = .seconds(30)) async throws -> [WebSocketScript.Message] {
        try await wait(timeout: timeout) { $0.messages.count >= count }
        return messages
    }

    /// Waits until the client has sent at least `count` frames (of any kind) and returns them all.
    @discardableResult
    public func waitForFrames(count: Int, timeout: Duration = .seconds(30)) async throws -> [Frame] {
        try await wait(timeout: timeout) { $0.frames.count >= count }
        return frames
    }

    private func wait(timeout: Duration, until isSatisfied: @escaping @Sendable (State) -> Bool) async throws {
        let slot = WaitSlot<Void>()
        let ready = state.withLock { state in
            if isSatisfied(state) { return true }
            state.watchers.append((isSatisfied, slot))
            return false
        }
        if ready { return }
        do {
            try await slot.value(timeout: timeout)
        } catch {
            state.withLock { $0.watchers.removeAll { $0.slot === slot } }
            throw error
        }
    }

    // MARK: Recording (server thread)

    private func update(_ change: (inout State) -> Void) {
        let wakeUps: [@Sendable () -> Void] = state.withLock { state in
            change(&state)
            let ready = state.watchers.filter { $0.isSatisfied(state) }
            state.watchers.removeAll { watcher in ready.contains { $0.slot === watcher.slot } }
            return ready.compactMap { $0.slot.complete(.success(())) }
        }
        for wakeUp in wakeUps { wakeUp() }
    }

    func record(_ frame: Frame) { update { $0.frames.append(frame) } }
    func record(_ message: WebSocketScript.Message) { update { $0.messages.append(message) } }
    func recordViolation(_ violation: String) { update { $0.violations.append(violation) } }
    func recordClientClose(_ close: Close) { update { $0.clientClose = close } }
    func recordServerClose(_ close: Close) { update { $0.serverClose = close } }

    /// Records the ending (the first one wins) and fails waiters that can no longer be satisfied.
    func finish(_ ending: Ending) {
        let wakeUps: [@Sendable () -> Void] = state.withLock { state in
            if state.ending == nil { state.ending = ending }
            let watchers = state.watchers
            state.watchers = []
            return watchers.compactMap { watcher in
                watcher.slot.complete(watcher.isSatisfied(state) ? .success(()) : .failure(TestServerError.timeout))
            }
        }
        for wakeUp in wakeUps { wakeUp() }
    }
}
