import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking
import CourierTestSupport

/// The URLSession backend (`URLSessionWebSocketTask` behind ``WebSocketMessageEngine``) against
/// CourierTestServer.
///
/// - On Linux, FoundationNetworking's task fails at once ("WebSockets not supported by libcurl"):
///   the socket must end with a clear `.invalidConfiguration` pointing at the curl transport, and
///   nothing may crash or hang. `realTask*` tests run the real task where it works (Apple
///   platforms); they compile everywhere.
/// - `loopback*` tests drive the same socket glue (lifecycle, inbox and backpressure, pings,
///   close, errors) over ``LoopbackEngine``, a message engine whose messages travel through a
///   curl-transport WebSocket to the test server: real I/O on Linux, in place of the task.
@Suite struct WebSocketURLSessionTests {
    /// Whether URLSessionWebSocketTask can open WebSockets here.
    static let taskWorks = !WebSocketTaskTranslation.isFoundationNetworking

    static func states(of socket: WebSocket) -> Locked<[WebSocket.State]> {
        let states = Locked([WebSocket.State]())
        socket.onStateChange(queue: testCallbackQueue) { state in states.withLock { $0.append(state) } }
        return states
    }

    // MARK: The engine is chosen by the transport

    @Test func theURLSessionTransportUsesTheMessageEngineAndCurlTheFrameEngine() throws {
        #expect(makeSession(.urlSession).webSocket("ws://127.0.0.1:9/").usesMessageEngine)
        if TransportUnderTest.available.contains(.curl) {
            #expect(!makeSession(.curl).webSocket("ws://127.0.0.1:9/").usesMessageEngine)
        }
    }

    // MARK: FoundationNetworking (Linux)

    /// Linux: the task's failure becomes `.invalidConfiguration` naming the curl transport, for
    /// every call, after the session's adapter ran; the server never sees a request.
    @Test(.enabled(if: !taskWorks))
    func onLinuxTheTaskFailsWithAClearErrorPointingAtTheCurlTransport() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(.echo) }
            let adapted = Locked(0)
            let adapter = CountingAdapter(count: adapted)
            let session = makeSession(.urlSession, server: server, headers: ["X-Session": "s"], interceptor: adapter)
            let socket = session.webSocket(server.url("/ws"), protocols: ["chat"], headers: ["Authorization": "Bearer t"])
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .invalidConfiguration)
            #expect(error?.message.contains("use the curl transport") == true, "\(String(describing: error))")
            #expect(error?.message.contains("WebSockets not supported by libcurl") == true, "\(String(describing: error))")
            #expect(error?.url?.scheme == "ws")
            for attempt in 0..<3 {
                let sendError = await #expect(throws: CourierError.self) { try await socket.send("hello \(attempt)") }
                #expect(sendError?.kind == .invalidConfiguration)
            }
            let readError = await #expect(throws: CourierError.self) { for try await _ in socket.messages {} }
            #expect(readError?.kind == .invalidConfiguration)
            let pingError = await #expect(throws: CourierError.self) { try await socket.ping() }
            #expect(pingError?.kind == .invalidConfiguration)
            try await socket.close()
            socket.cancel()
            #expect(socket.state == .closed)
            #expect(socket.closeStatus == nil, "it never opened")
            #expect(socket.subprotocol == nil)
            #expect(adapted.withLock { $0 } == 1, "the handshake went through the interceptor")
            #expect(server.requestCount == 0, "FoundationNetworking refuses before connecting")
        }
    }

    /// Linux: many sockets failing at once, cancelled at random moments, on one session: no
    /// crash (FoundationNetworking traps on some races), every call answered.
    @Test(.enabled(if: !taskWorks))
    func onLinuxManyFailingSocketsNeitherCrashNorHang() async throws {
        let session = makeSession(.urlSession)
        try await withThrowingTaskGroup(of: CourierError.Kind?.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let socket = session.webSocket("ws://127.0.0.1:9/\(index)")
                    if index % 3 == 0 { socket.cancel() }
                    do {
                        try await socket.send("x")
                        return nil
                    } catch let error as CourierError {
                        return error.kind
                    }
                }
            }
            for try await kind in group {
                #expect(kind == .invalidConfiguration || kind == .cancelled, "\(String(describing: kind))")
            }
        }
    }

    // MARK: The real task (Apple platforms)

    @Test(.enabled(if: taskWorks))
    func realTaskEchoesTextAndBinaryPingsAndClosesNormally() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.echo()], subprotocol: .ifOffered("chat"))) }
            let socket = makeSession(.urlSession, server: server).webSocket(server.url("/ws"), protocols: ["chat"])
            let states = Self.states(of: socket)
            try await socket.connect()
            #expect(socket.subprotocol == "chat")
            #expect(!socket.isCompressed)
            var iterator = socket.messages.makeAsyncIterator()
            for message: WebSocketMessage in [.text("hello"), .binary(Data([1, 2, 3])), .text(""), .binary(Data(count: 70_000))] {
                try await socket.send(message)
                #expect(try await iterator.next() == message)
            }
            _ = try await socket.ping()
            try await socket.close(code: .normalClosure, reason: "done")
            #expect(socket.closeStatus?.code == .normalClosure)
            #expect(await eventually { states.withLock { $0 } == [.open, .closing, .closed] })
            let recording = try await server.takeWebSocket()
            try await recording.waitUntilFinished()
            #expect(recording.messages.count == 4)
        }
    }

    @Test(.enabled(if: taskWorks))
    func realTaskReportsTheServersCloseCodeAndARefusal() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.send(.text("last")), .close(code: 4001, reason: "bye")])) }
            server.route("/refused") { _ in MockResponse(status: 401).body(.text("who are you?")) }
            let socket = makeSession(.urlSession, server: server).webSocket(server.url("/ws"))
            var received: [WebSocketMessage] = []
            let error = await #expect(throws: CourierError.self) {
                for try await message in socket.messages { received.append(message) }
            }
            #expect(received == [.text("last")])
            #expect(error?.kind == .webSocketClosed)
            #expect(error?.webSocketCloseStatus?.code == WebSocketCloseCode(4001))
            #expect(error?.webSocketCloseStatus?.reason == "bye")
            #expect(socket.closeStatus?.code == WebSocketCloseCode(4001))

            let refused = makeSession(.urlSession, server: server).webSocket(server.url("/refused"))
            let refusal = await #expect(throws: CourierError.self) { try await refused.connect() }
            #expect(refusal?.kind == .webSocketHandshakeFailed)
            #expect(refusal?.webSocketHandshakeResponse?.statusCode == 401)
        }
    }

    // MARK: The glue over a loopback engine (runs everywhere)

    /// A socket of a URLSession session opened over a ``LoopbackEngine`` to `path`.
    static func loopbackSocket(
        _ server: TestServer, _ path: String, protocols: [String] = [],
        configuration: WebSocketConfiguration = WebSocketConfiguration(), clock: any Clock<Duration> = ContinuousClock()
    ) throws -> (WebSocket, LoopbackEngine) {
        try #require(TransportUnderTest.available.contains(.curl), "the loopback engine runs over the curl transport")
        let session = makeSession(.urlSession, server: server)
        let socket = WebSocket(session: session, url: server.url(path), protocols: protocols, configuration: configuration, clock: clock)
        #expect(socket.usesMessageEngine)
        let inner = makeSession(.curl, server: server).webSocket(server.url(path), protocols: protocols)
        let engine = LoopbackEngine(inner: inner, observer: socket)
        socket.open(engine: engine, timeout: .seconds(60))
        return (socket, engine)
    }

    @Test func loopbackEchoesWithTheSameStatesAsTheCurlEngine() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.echo()], subprotocol: .ifOffered("chat"))) }
            let (socket, _) = try Self.loopbackSocket(server, "/ws", protocols: ["chat"])
            let states = Self.states(of: socket)
            #expect(socket.state == .connecting)
            try await socket.connect()
            #expect(socket.state == .open)
            #expect(socket.subprotocol == "chat")
            var iterator = socket.messages.makeAsyncIterator()
            for message: WebSocketMessage in [.text("hello"), .binary(Data([1, 2, 3])), .text(""), .binary(Data(count: 70_000))] {
                try await socket.send(message)
                #expect(try await iterator.next() == message)
            }
            try await socket.send(json: ["a": 1])
            #expect(try await iterator.next()?.decode([String: Int].self) == ["a": 1])
            let roundTrip = try await socket.ping()
            #expect(roundTrip > .zero)
            try await socket.close(code: .normalClosure, reason: "done")
            #expect(socket.state == .closed)
            #expect(socket.closeStatus?.code == .normalClosure)
            #expect(try await iterator.next() == nil)
            let late = await #expect(throws: CourierError.self) { try await socket.send("late") }
            #expect(late?.kind == .webSocketClosed)
            #expect(await eventually { states.withLock { $0 } == [.open, .closing, .closed] })
            let recording = try await server.takeWebSocket()
            try await recording.waitUntilFinished()
            #expect(recording.messages.count == 5)
            #expect(recording.clientClose?.code == 1000)
            #expect(recording.clientClose?.reason == "done")
        }
    }

    @Test func loopbackReportsTheServersCloseCodeAfterItsMessages() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.send(.text("one")), .send(.text("two")), .close(code: 4001, reason: "bye")])) }
            let (socket, _) = try Self.loopbackSocket(server, "/ws")
            let states = Self.states(of: socket)
            var received: [WebSocketMessage] = []
            let error = await #expect(throws: CourierError.self) {
                for try await message in socket.messages { received.append(message) }
            }
            #expect(received == [.text("one"), .text("two")])
            #expect(error?.kind == .webSocketClosed)
            #expect(error?.webSocketCloseStatus == WebSocketCloseStatus(code: WebSocketCloseCode(4001), reason: "bye", initiatedByServer: true))
            #expect(socket.closeStatus?.code == WebSocketCloseCode(4001))
            #expect(await eventually { states.withLock { $0 } == [.open, .closing, .closed] })
            _ = try await server.takeWebSocket().waitUntilFinished()
        }
    }

    /// A hang limit, not a time limit: on a loaded machine (a load of 9–12) the test once ran past
    /// a minute; if it ever hangs, the report says where the socket, the engine and the reader stood.
    /// The socket's timers (opening, keep-alive pings) run on a manual clock that never moves, so
    /// however long the machine takes, no ping or timeout joins the 20 messages.
    @Test(.hangLimit(.seconds(300))) func loopbackAsksForMessagesOnlyWhileTheInboxHasRoom() async throws {
        try await withServer { server in
            let size = 64 << 10
            server.route("/ws") { _ in
                .webSocket(WebSocketScript((0..<20).map { _ in .send(.binary(Data(count: size))) } + [.close(code: 1000)]))
            }
            var configuration = WebSocketConfiguration()
            configuration.receiveBufferSize = 4 * size
            let (socket, engine) = try Self.loopbackSocket(server, "/ws", configuration: configuration, clock: ManualClock())
            let count = Locked(0)
            WorkInProgress.describe("outer socket") {
                socket.core.withLock { core in
                    "\(socket.state), reading paused \(core.readingPaused), inbox \(core.inboxBytes) bytes in \(core.inbox.count - core.inboxHead) messages, "
                        + "a reader waiting \(core.messageWaiter != nil)"
                }
            }
            WorkInProgress.describe("loopback engine") { "\(engine.receiveRequests) receive requests, inner socket \(engine.inner.state)" }
            WorkInProgress.describe("reader") { "\(count.withLock { $0 }) of 20 messages read" }
            WorkInProgress.describe("server") { "\(server.activeConnectionCount) connections open, \(server.bytesSent()) bytes sent" }
            try await socket.connect()
            #expect(await eventually { socket.core.withLock { $0.readingPaused } })
            #expect(engine.receiveRequests == 4, "4 × 64 KiB fill the 256 KiB inbox; no fifth request: \(engine.receiveRequests)")
            for try await message in socket.messages {
                #expect(message.data.count == size)
                count.withLock { $0 += 1 }
            }
            let read = count.withLock { $0 }
            #expect(read == 20)
            #expect(socket.closeStatus?.code == .normalClosure)
            _ = try await server.takeWebSocket().waitUntilFinished()
        }
    }

    /// The keep-alive runs on a manual clock: the ping is due when the test moves the time to 20 s,
    /// its pong is given up at 50 s, however slow the machine (on the real clock, with 20 ms and
    /// 200 ms, a machine stalled for the server's 30 s would have ended the socket another way).
    @Test func loopbackKeepAliveFailsAConnectionWhosePongsStop() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.delay(.seconds(30))], answersPings: false)) }
            let clock = ManualClock()
            let (socket, _) = try Self.loopbackSocket(server, "/ws", clock: clock)
            // The handshake's 60 s limit is on the manual clock too: wait for the opening here, where only the
            // test's hang limit bounds it, so a busy machine cannot make the first wait below miss the ping.
            try await socket.connect()
            let reader = Task { () -> CourierError? in
                do {
                    for try await _ in socket.messages {}
                    return nil
                } catch {
                    return error as? CourierError ?? CourierError(wrapping: error)
                }
            }
            #expect(await clock.waitForSleep(until: .seconds(20)), "the keep-alive ping is due: \(clock.deadlines)")
            clock.advance(to: .seconds(20))
            #expect(await clock.waitForSleep(until: .seconds(50)), "its pong is awaited for 30 s: \(clock.deadlines)")
            clock.advance(to: .seconds(50))
            let error = await reader.value
            #expect(error?.kind == .timedOut)
            #expect(socket.closeStatus?.code == .abnormalClosure)
            _ = try await server.takeWebSocket().waitUntilFinished()
        }
    }

    @Test func loopbackRefusalCarriesTheStatus() async throws {
        try await withServer { server in
            server.route("/ws") { _ in MockResponse(status: 401).header("WWW-Authenticate", "Bearer").body(.text("who are you?")) }
            let (socket, _) = try Self.loopbackSocket(server, "/ws")
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .webSocketHandshakeFailed)
            #expect(error?.responseCode == 401)
            #expect(error?.webSocketHandshakeResponse?.headers["WWW-Authenticate"] == "Bearer")
            #expect(socket.state == .closed)
        }
    }

    @Test func loopbackCancellingTheReaderClosesWith1001() async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.delay(.seconds(30))])) }
            let (socket, _) = try Self.loopbackSocket(server, "/ws")
            try await socket.connect()
            let reader = Task { for try await _ in socket.messages {} }
            reader.cancel()
            let error = await #expect(throws: CourierError.self) { try await reader.value }
            #expect(error?.kind == .cancelled)
            #expect(socket.closeStatus?.code == .goingAway)
            let recording = try await server.takeWebSocket()
            _ = try await recording.waitUntilFinished()
            #expect(recording.clientClose?.code == 1001)
        }
    }
}

/// A ``WebSocketMessageEngine`` whose messages go through `inner`, a WebSocket on the curl
/// transport, reporting to its observer as URLSession's delegate does (open, the server's close
/// frame, completion). It stands in for `URLSessionWebSocketTask` where that cannot run.
final class LoopbackEngine: WebSocketMessageEngine {
    struct State {
        weak var observer: (any WebSocketTaskObserver)?
        var receiveRequests = 0
        var handshakeAnswer: (statusCode: Int, headers: HTTPHeaders)?
        var completed = false
    }

    let inner: WebSocket
    private let state: Locked<State>

    init(inner: WebSocket, observer: any WebSocketTaskObserver) {
        self.inner = inner
        state = Locked(State(observer: observer))
    }

    var receiveRequests: Int { state.withLock { $0.receiveRequests } }
    var handshakeAnswer: (statusCode: Int, headers: HTTPHeaders)? { state.withLock { $0.handshakeAnswer } }
    var serverClose: WebSocketCloseFrame? { nil }
    private var observer: (any WebSocketTaskObserver)? { state.withLock { $0.observer } }

    private func complete(_ error: (any Error)?) {
        let first = state.withLock { state -> Bool in
            defer { state.completed = true }
            return !state.completed
        }
        if first { observer?.webSocketTaskDidComplete(error: error) }
    }

    /// Reports how `inner` ended: its server's close frame, then completion.
    private func reportEnd(_ error: CourierError?) {
        if let status = inner.closeStatus, status.code != .abnormalClosure {
            observer?.webSocketTaskDidReceiveClose(code: Int(status.code.rawValue), reason: Data(status.reason.utf8))
            complete(nil)
        } else {
            complete(error ?? URLError(.networkConnectionLost))
        }
    }

    func start() {
        Task {
            do {
                try await inner.connect()
                observer?.webSocketTaskDidOpen(subprotocol: inner.subprotocol)
            } catch let error as CourierError {
                if let response = error.webSocketHandshakeResponse {
                    state.withLock { $0.handshakeAnswer = (response.statusCode, response.headers) }
                    complete(URLError(.badServerResponse))
                } else {
                    complete(error)
                }
            }
        }
    }

    func send(_ message: WebSocketMessage, completion: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do {
                try await inner.send(message)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    func receive(_ completion: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void) {
        state.withLock { $0.receiveRequests += 1 }
        Task {
            var iterator = inner.messages.makeAsyncIterator()
            do {
                if let message = try await iterator.next() {
                    completion(.success(message))
                } else {
                    completion(.failure(URLError(.networkConnectionLost)))
                    reportEnd(nil)
                }
            } catch {
                completion(.failure(error))
                reportEnd(error as? CourierError)
            }
        }
    }

    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            do {
                _ = try await inner.ping()
                pongReceived(nil)
            } catch {
                pongReceived(error)
            }
        }
    }

    func close(code: WebSocketCloseCode, reason: String) {
        Task {
            try? await inner.close(code: code, reason: reason)
            complete(nil)
        }
    }

    func abort() {
        inner.cancel()
        complete(URLError(.cancelled))
    }
}

/// An interceptor that counts its adaptations.
private struct CountingAdapter: RequestInterceptor {
    let count: Locked<Int>
    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        count.withLock { $0 += 1 }
        return request
    }
}
