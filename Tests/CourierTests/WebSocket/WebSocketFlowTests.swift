import CourierLocking
import CourierTestServer
import CourierTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@_spi(Transport) @testable import Courier

/// Flow control both ways against CourierTestServer: reads pause once the receive buffer is full
/// and resume as the consumer takes messages, with nothing lost; `send` suspends while the server
/// does not read; a taken message is released at once; messages the server sends before
/// answering `close()` still arrive.
@Suite(.hangLimit(.seconds(300)))
struct WebSocketFlowTests {
    static func session(_ server: TestServer) throws -> Session {
        try #require(TransportUnderTest.available.contains(.curl), "libcurl is needed")
        return makeSession(.curl, server: server)
    }

    static func configuration(receive: Int = 4 << 20, send: Int = 4 << 20) -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration()
        configuration.receiveBufferSize = receive
        configuration.sendBufferSize = send
        configuration.offersCompression = false
        return configuration
    }

    /// Message `index` of a flood: 64 KiB that say which one they are.
    static func payload(_ index: Int) -> Data { Data(repeating: UInt8(truncatingIfNeeded: index), count: 64 << 10) }

    @Test func readsPauseWhileTheConsumerDoesNotReadAndNothingIsLost() async throws {
        try await withServer { server async throws in
            let count = 64  // 4 MiB, sixteen times the receive buffer
            server.enqueue(.webSocket(WebSocketScript((0..<count).map { .send(.binary(Self.payload($0))) } + [.close()])))
            let socket = try Self.session(server).webSocket("live", configuration: Self.configuration(receive: 256 << 10))
            try await socket.connect()
            #expect(await eventually { socket.core.withLock { $0.readingPaused } }, "reads paused with the buffer full")
            let held = socket.core.withLock { $0.inboxBytes }
            // At most the buffer, plus what one read (64 KiB) completed past it.
            #expect(held >= 256 << 10 && held <= (256 << 10) + (128 << 10), "\(held) bytes held")
            var received = 0
            for try await message in socket.messages {
                #expect(message == .binary(Self.payload(received)), "message \(received) intact and in order")
                received += 1
            }
            #expect(received == count)
            #expect(socket.closeStatus?.code == .normalClosure)
        }
    }

    @Test func aTakenMessageIsReleasedAtOnce() async throws {
        try await withServer { server async throws in
            server.enqueue(.webSocket(WebSocketScript((0..<8).map { .send(.binary(Self.payload($0))) } + [.echo()])))
            let socket = try Self.session(server).webSocket("live", configuration: Self.configuration())
            // The pong comes after the eight messages: all of them wait in the inbox by then.
            try await socket.ping()
            var iterator = socket.messages.makeAsyncIterator()
            for taken in 1...8 {
                _ = try await iterator.next()
                let (held, waiting) = socket.core.withLock { core in
                    (core.inbox.compactMap { $0 }.count, core.inbox.count - core.inboxHead)
                }
                #expect(held == waiting, "after \(taken) taken, \(held) messages still referenced for \(waiting) waiting")
            }
            try await socket.close()
        }
    }

    @Test func sendSuspendsWhileTheServerDoesNotRead() async throws {
        // CourierTestServer reads whatever its script does; this server answers the handshake and
        // then reads nothing, so the kernel's buffers fill and then Courier's.
        let server = try SilentWebSocketServer()
        defer { server.stop() }
        let session = makeSession(.curl)
        let socket = session.webSocket("ws://127.0.0.1:\(server.port)/live", configuration: Self.configuration(send: 256 << 10))
        try await socket.connect()
        let sent = Locked(0)
        let sender = Task {
            for index in 0..<1024 {  // 64 MiB, far more than any socket buffer
                try await socket.send(.binary(Self.payload(index)))
                sent.withLock { $0 += 1 }
            }
        }
        #expect(await eventually { socket.core.withLock { !$0.sendWaiters.isEmpty } }, "a send is suspended")
        let queued = socket.core.withLock { $0.outputBytes }
        #expect(queued <= (256 << 10) + (64 << 10) + 16, "Courier's queue stays at the send buffer size plus one message (\(queued))")
        #expect(sent.withLock { $0 } < 1024)
        socket.cancel()
        let error = await #expect(throws: CourierError.self) { try await sender.value }
        #expect(error?.kind == .cancelled, "the suspended send fails with the socket")
    }

    @Test func messagesTheServerSendsBeforeAnsweringCloseStillArrive() async throws {
        try await withServer { server async throws in
            // The echo of "a" goes out before the server answers the close frame behind it.
            server.enqueue(.webSocket(.echo))
            let socket = try Self.session(server).webSocket("live", configuration: Self.configuration())
            try await socket.send("a")
            try await socket.close()
            var received: [WebSocketMessage] = []
            for try await message in socket.messages { received.append(message) }
            #expect(received == [.text("a")])
            #expect(socket.closeStatus?.code == .normalClosure)
        }
    }
}

/// A WebSocket server that accepts one connection, answers its handshake with 101, and never
/// reads again (on a thread of its own).
final class SilentWebSocketServer: Sendable {
    let port: Int
    private let listener: Int32
    private let accepted = Locked<Int32>(-1)

    init() throws {
        let (descriptor, port) = try bindLoopbackSocket()
        guard listen(descriptor, 4) == 0 else { throw CourierError(.transportFailed, "listen() failed: \(errno)") }
        listener = descriptor
        self.port = port
        let accepted = self.accepted
        Thread.detachNewThread {
            let connection = accept(descriptor, nil, nil)
            guard connection >= 0 else { return }
            accepted.withLock { $0 = connection }
            var head = Data()
            var byte: UInt8 = 0
            while !head.ends(with: Data("\r\n\r\n".utf8)), recv(connection, &byte, 1, 0) == 1 { head.append(byte) }
            let text = String(decoding: head, as: UTF8.self)
            let key =
                text.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
                .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
            let response =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(WebSocketHandshakeRequest.accept(forKey: key))\r\n\r\n"
            _ = response.withCString { send(connection, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        }
    }

    func stop() {
        close(listener)
        let connection = accepted.withLock { $0 }
        if connection >= 0 { close(connection) }
    }
}

extension Data {
    fileprivate func ends(with suffix: Data) -> Bool { count >= suffix.count && self[(endIndex - suffix.count)...] == suffix }
}
