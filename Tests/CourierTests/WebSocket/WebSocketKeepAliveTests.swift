import CourierTestServer
import Foundation
import Testing
@_spi(Transport) @testable import Courier

/// The default keep-alive (issue 36): a server that goes silent, even in the middle of a frame,
/// cannot hold a connection with the default configuration; one still sending is not failed
/// because a pong waits behind its bytes. Timed on a ``ManualClock`` the socket's timers sleep on,
/// so the 20 s and 30 s are never waited for; on the curl engine and the URLSession engine (the
/// real task where it runs, the loopback engine on Linux).
@Suite struct WebSocketKeepAliveTests {
    @Test func theDefaultsAreAPingEvery20SecondsAndAPongWithin30() {
        let configuration = WebSocketConfiguration()
        #expect(configuration.pingInterval == .seconds(20))
        #expect(configuration.pingTimeout == .seconds(30))
    }

    /// One message, then the first 100 bytes of a 1,000-byte frame in the same write, then nothing.
    static let helloThenHalfAFrame =
        WebSocketScript.Frame.text("hello").wireBytes + WebSocketScript.Frame.binary(Data(repeating: 7, count: 1000)).wireBytes.prefix(100)

    @Test(arguments: TransportUnderTest.available)
    func aServerThatStallsInTheMiddleOfAFrameFailsWithTheDefaultConfiguration(transport: TransportUnderTest) async throws {
        try await withServer { server in
            server.route("/ws") { _ in .webSocket(WebSocketScript([.raw(Self.helloThenHalfAFrame), .end(.stall)])) }
            let clock = ManualClock()
            let socket = try WebSocketClosingTests.socket(transport, server, "/ws", clock: clock)
            var iterator = socket.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("hello"))
            let reader = Task {
                var next = socket.messages.makeAsyncIterator()
                return try await next.next()
            }

            guard await clock.waitForSleep(until: .seconds(20)) else {
                Issue.record("no keep-alive ping is due after 20 s, so the stalled server holds the connection: \(clock.deadlines)")
                socket.cancel()
                return
            }
            clock.advance(to: .seconds(20))
            #expect(await clock.waitForSleep(until: .seconds(50)), "its pong is awaited for 30 s: \(clock.deadlines)")
            clock.advance(to: .seconds(50))

            let error = await #expect(throws: CourierError.self) { try await reader.value }
            #expect(error?.kind == .timedOut, "\(error.map { "\($0)" } ?? "no error")")
            #expect(socket.state == .closed)
            #expect(socket.closeStatus?.code == .abnormalClosure)
            // (A stalled session records nothing more, so the ping is not seen there.)
            _ = try await server.takeWebSocket().waitUntilFinished()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func bytesStillArrivingKeepAPingsWaitAlive(transport: TransportUnderTest) async throws {
        try await withServer { server in
            let gate = Gate()
            let frame = WebSocketScript.Frame.binary(Data(repeating: 7, count: 1000)).wireBytes
            // The server never answers pings: only its other bytes show it is there.
            server.route("/ws") { _ in
                .webSocket(WebSocketScript([.raw(Self.helloThenHalfAFrame), .wait(gate), .raw(frame.dropFirst(100))], answersPings: false))
            }
            let clock = ManualClock()
            let socket = try WebSocketClosingTests.socket(transport, server, "/ws", clock: clock)
            var iterator = socket.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("hello"))

            #expect(await clock.waitForSleep(until: .seconds(20)), "\(clock.deadlines)")
            clock.advance(to: .seconds(20))
            #expect(await clock.waitForSleep(until: .seconds(50)), "the first ping's wait: \(clock.deadlines)")
            // The rest of the frame arrives while the first ping waits.
            gate.open()
            #expect(try await iterator.next() == .binary(Data(repeating: 7, count: 1000)))
            clock.advance(to: .seconds(40))
            #expect(await clock.waitForSleep(until: .seconds(70)), "the second ping's wait: \(clock.deadlines)")

            // 30 s after the first ping, bytes have come since: its wait starts again.
            clock.advance(to: .seconds(50))
            #expect(await clock.waitForSleep(until: .seconds(80)), "the first ping's wait started again: \(clock.deadlines)")
            #expect(socket.state == .open)

            // 30 s after the second ping, nothing has come since: the server is gone.
            let reader = Task {
                var next = socket.messages.makeAsyncIterator()
                return try await next.next()
            }
            clock.advance(to: .seconds(70))
            let error = await #expect(throws: CourierError.self) { try await reader.value }
            #expect(error?.kind == .timedOut, "\(error.map { "\($0)" } ?? "no error")")
            #expect(socket.closeStatus?.code == .abnormalClosure)
            let recording = try await server.takeWebSocket()
            try await recording.waitUntilFinished()
            #expect(recording.frames.filter { $0.opcode == .ping }.count >= 2, "the keep-alive pings went out")
        }
    }
}
