import CourierSupport
import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
@_spi(Transport) @testable import Courier

/// The consumer's inline wait (a ``FastPaths`` speed trick): how long it waits, as a table of
/// events, and that a consumer which took a message inline and then stops asking does not keep the
/// socket unread: pings are still answered and a close is still seen.
@Suite(.hangLimit(.seconds(300)))
struct WebSocketInlineReadTests {
    // MARK: - The wait's window, without I/O

    private static let limit = WebSocketInlineWait.limit

    @Test func theFirstRequestWaitsUpToTheLimit() {
        var wait = WebSocketInlineWait()
        #expect(wait.window() == Self.limit)
    }

    @Test func aFastArrivalNarrowsTheWindowToTwiceTheEstimateWithAFloor() {
        // (arrivals recorded, the window then)
        let rows: [([Duration], Duration)] = [
            ([.microseconds(40)], .microseconds(80)),
            ([.microseconds(10)], .microseconds(50)),  // the floor
            ([.microseconds(40), .microseconds(80)], .microseconds(100)),  // (3·40 + 80) / 4 = 50, doubled
            ([.microseconds(100), .microseconds(100)], .microseconds(200)),
        ]
        for (arrivals, expected) in rows {
            var wait = WebSocketInlineWait()
            for arrival in arrivals {
                _ = wait.window()
                wait.record(arrival)
            }
            #expect(wait.window() == expected, "after \(arrivals)")
        }
    }

    @Test func aSlowServerStopsTheWaitsAndEvery64thRequestProbesAgain() {
        var wait = WebSocketInlineWait()
        _ = wait.window()
        wait.record(.microseconds(200))  // twice that exceeds the limit
        #expect(wait.window() == nil, "the estimate is too slow to wait for")
        for skipped in 1...64 { #expect(wait.window() == nil, "request \(skipped) after the slow one") }
        #expect(wait.window() == Self.limit, "the probe")
    }

    @Test func missesBackOffExponentially() {
        var wait = WebSocketInlineWait()
        // (misses in a row, requests skipped after the last one)
        for (misses, skipped) in [(1, 2), (2, 4), (3, 8), (6, 64), (7, 64)] {
            var wait = wait
            for _ in 0..<misses {
                while wait.window() == nil {}
                wait.record(nil)
            }
            var count = 0
            while wait.window() == nil { count += 1 }
            #expect(count == skipped, "after \(misses) misses")
        }
        wait.record(.microseconds(30))
        #expect(wait.window() == .microseconds(60), "an arrival resets the misses")
    }

    // MARK: - The inline lease, end to end

    private static func session(_ server: TestServer) throws -> Session {
        try #require(TransportUnderTest.available.contains(.curl), "libcurl is needed")
        return makeSession(.curl, server: server)
    }

    private static func configuration() -> WebSocketConfiguration {
        var configuration = WebSocketConfiguration()
        configuration.offersCompression = false
        configuration.pingInterval = nil
        return configuration
    }

    /// Echoes until a message was taken inline (the poller then no longer reads the socket), then
    /// sends the rest of the script's `attempts` messages without reading their echoes (a send
    /// keeps the lease); returns whether a message was taken inline.
    private static func echoUntilLeased(_ socket: WebSocket, attempts: Int) async throws -> Bool {
        var iterator = socket.messages.makeAsyncIterator()
        for index in 0..<attempts {
            try await socket.send(.text("\(index)"))
            let message = try await iterator.next()
            #expect(message == .text("\(index)"))
            guard socket.core.withLock({ $0.inlineReading == .leased }) else { continue }
            for rest in index + 1..<attempts { try await socket.send(.text("\(rest)")) }
            return true
        }
        return false
    }

    /// A socket whose consumer took a message inline and then asks for nothing more, with the
    /// server's recording; opening `gate` makes the server do `then`.
    private static func idleAfterAnInlineRead(
        _ server: TestServer, gate: Gate, then step: WebSocketScript.Step
    ) async throws -> (WebSocket, WebSocketRecording) {
        let attempts = 2_000
        server.enqueue(.webSocket(WebSocketScript([.echo(messages: attempts), .wait(gate), step])))
        let socket = try session(server).webSocket("live", configuration: configuration())
        try await socket.connect()
        let recording = try await server.takeWebSocket()
        let leased = try await echoUntilLeased(socket, attempts: attempts)
        // Without the fast paths the poller reads throughout; with them, one of 2,000 loopback
        // echoes arrives within the inline window (250 µs) even on a loaded machine.
        #expect(leased == FastPaths.isOn(.wsinline), "a message was taken inline")
        return (socket, recording)
    }

    @Test func aConsumerThatStopsAskingAfterAnInlineReadStillAnswersPings() async throws {
        try await withServer { server async throws in
            let gate = Gate()
            let (socket, recording) = try await Self.idleAfterAnInlineRead(server, gate: gate, then: .ping(Data("late".utf8)))
            // The consumer asks for nothing more; the server pings.
            gate.open()
            #expect(await eventually(timeout: .seconds(60)) { recording.pongs.contains(Data("late".utf8)) }, "the ping was answered")
            #expect(socket.core.withLock { $0.inlineReading } == .off, "the lease ended on its own")
            try await socket.close()
            #expect(recording.violations.isEmpty, "\(recording.violations)")
        }
    }

    @Test func aConsumerThatStopsAskingAfterAnInlineReadStillSeesTheServersClose() async throws {
        try await withServer { server async throws in
            let gate = Gate()
            let (socket, recording) = try await Self.idleAfterAnInlineRead(server, gate: gate, then: .close(code: 4000, reason: "bye"))
            gate.open()
            // The close handshake completes without the consumer asking for another message.
            let ending = try await recording.waitUntilFinished()
            #expect(recording.clientClose?.code == 4000, "\(ending)")
            #expect(await eventually(timeout: .seconds(60)) { socket.closeStatus != nil })
            #expect(socket.closeStatus?.code == WebSocketCloseCode(rawValue: 4000))
        }
    }

    @Test func aPingAfterAnInlineReadEndsTheLeaseSoThePongIsReadAtOnce() async throws {
        try await withServer { server async throws in
            let attempts = 2_000
            server.enqueue(.webSocket(WebSocketScript([.echo(messages: attempts)])))
            let socket = try Self.session(server).webSocket("live", configuration: Self.configuration())
            try await socket.connect()
            var iterator = socket.messages.makeAsyncIterator()
            var pingedUnderLease = false
            for index in 0..<attempts where !pingedUnderLease {
                try await socket.send(.text("\(index)"))
                #expect(try await iterator.next() == .text("\(index)"))
                // Checked and pinged under one lock: the lease's own timer cannot end it in between.
                pingedUnderLease = socket.withCore { core in
                    guard core.inlineReading == .leased else { return false }
                    socket.sendPing(Data("now".utf8), waiter: nil, &core)
                    let stillLeased = core.inlineReading == .leased
                    #expect(stillLeased == false, "the ping ended the lease")
                    return true
                }
            }
            #expect(pingedUnderLease == FastPaths.isOn(.wsinline), "a message was taken inline")
            try await socket.close()
        }
    }
}
