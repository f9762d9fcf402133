import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// The matrix's event-stream rows (issue 36), on both transports, each against a raw server
/// playing the same script to every connection:
///
/// | Case | curl | URLSession | Notes |
/// | --- | --- | --- | --- |
/// | an endless event | responseTooLarge | responseTooLarge | `maximumEventSize`; the server is stopped near the limit |
/// | an event-stream gzip bomb | responseTooLarge | responseTooLarge | one 64 MiB event from 64 KB; 1 GiB: `LimitMemoryTests` |
/// | a drop in the middle of an event, then reconnect | every event whole | every event whole | the unfinished event is dropped |
/// | a byte-order mark on every connection | every event | every event | each connection is a new stream |
/// | `retry: 0` and a close after each event | a few connections | a few connections | 500 ms floor, backoff: not a storm |
extension HostileServerMatrixTests {
    static let eventStreamHead = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n"

    /// How one stream against a raw server went.
    struct StreamRun {
        let updates: [EventStreamUpdate]
        let error: CourierError?
        /// Body bytes the last connection received.
        let received: Int64?
        /// What the server had written when the stream ended.
        let written: Int
    }

    /// Reads an event stream from `server` on a fresh session (reconnection delays recorded by a
    /// frozen clock) until `enough` says so or the stream ends, then drops the session: sockets
    /// still open after that are leaks, not pooled connections. Its 30 s timeout runs on a
    /// ``ManualTransportClock`` that never moves: a stream that ends, ends by what the server did,
    /// however slow the machine, and one that would wait for the timeout is a hang the suite's
    /// hang limit reports.
    static func runEventStream(
        _ transport: TransportUnderTest, server: ScriptedReplyServer, maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize,
        until enough: @escaping ([EventStreamUpdate]) -> Bool = { _ in false }
    ) async -> StreamRun {
        let session = makeSession(transport) { configuration in
            configuration.requestTimeout = 30
            configuration.retryClock = FrozenClock()
            configuration.transportClock = .manual(ManualTransportClock())
        }
        let stream = session.eventStream(server.url, maximumEventSize: maximumEventSize)
        var updates: [EventStreamUpdate] = []
        var failure: CourierError?
        do throws(CourierError) {
            for try await update in stream.updates() {
                updates.append(update)
                if enough(updates) { break }
            }
        } catch {
            failure = error
        }
        let written = server.bytesWritten
        let received = await stream.currentRequest?.metrics?.bytesReceived
        return StreamRun(updates: updates, error: failure, received: received, written: written)
    }

    static func events(_ updates: [EventStreamUpdate]) -> [ServerSentEvent] {
        updates.compactMap { if case .event(let event) = $0 { event } else { nil } }
    }

    static func connections(_ updates: [EventStreamUpdate]) -> Int {
        updates.count { if case .connected = $0 { true } else { false } }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEndlessEventStopsAtTheEventLimit(transport: TransportUnderTest) async throws {
        let limit = 1 << 20
        let server = try ScriptedReplyServer([
            .readHead, .write(Data((Self.eventStreamHead + "data: ").utf8)), .writeForever(Data(repeating: UInt8(ascii: "x"), count: 64 << 10)),
        ])
        defer { server.stop() }
        let run = await Self.runEventStream(transport, server: server, maximumEventSize: limit)
        #expect(Self.events(run.updates).isEmpty)
        #expect(run.error?.kind == .responseTooLarge, "\(run.error.map { "\($0)" } ?? "no error")")
        #expect(run.error?.message.contains("maximumEventSize") == true)
        // The stream failed near the limit: the client had taken in the limit, what waits in the
        // transport and in flight (the margin), not the hundreds of MiB an unbounded reader takes
        // in first; on curl the server had written no more than that and socket buffers.
        // (FoundationNetworking reads on for a while after a cancel, dropping what it reads, so
        // the server's count says nothing there.)
        #expect((run.received ?? .max) < Int64(limit) + (48 << 20), "\((run.received ?? -1) >> 20) MiB received")
        if transport == .curl { #expect(run.written < limit + (48 << 20), "\(run.written >> 20) MiB written") }
        server.stop()
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    @Test(arguments: TransportUnderTest.available)
    func anEventStreamGzipBombStopsAtTheEventLimit(transport: TransportUnderTest) async throws {
        let limit = 1 << 20
        // "data: " and one 64 MiB line of "x", about 64 KB gzipped. (FoundationNetworking inflates
        // what it read before a cancel takes effect, so a larger one only costs time here; the
        // memory bound for 1 GiB is `LimitMemoryTests`'.)
        let bomb = CompressibleBody(runs: Array("data: ".utf8).map { (byte: $0, count: 1) } + [(byte: UInt8(ascii: "x"), count: 64 << 20)]).gzip
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Encoding: gzip\r\nContent-Length: \(bomb.count)\r\n\r\n"
        let server = try ScriptedReplyServer([.readHead, .write(Data(head.utf8)), .write(bomb)])
        defer { server.stop() }
        let run = await Self.runEventStream(transport, server: server, maximumEventSize: limit)
        #expect(Self.events(run.updates).isEmpty)
        #expect(run.error?.kind == .responseTooLarge, "\(run.error.map { "\($0)" } ?? "no error")")
        #expect(run.error?.message.contains("maximumEventSize") == true)
        #expect((run.received ?? .max) < Int64(limit) + (48 << 20), "\((run.received ?? -1) >> 20) MiB received")
        server.stop()
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    @Test(arguments: TransportUnderTest.available)
    func aDropInTheMiddleOfAnEventNeverReachesTheNextConnection(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([.readHead, .write(Data((Self.eventStreamHead + "id: 1\ndata: one\n\ndata: partial").utf8))])
        defer { server.stop() }
        let run = await Self.runEventStream(transport, server: server) { Self.events($0).count == 3 || Self.connections($0) == 6 }
        #expect(run.error == nil, "\(run.error.map { "\($0)" } ?? "")")
        #expect(Self.events(run.updates) == Array(repeating: ServerSentEvent(id: "1", data: "one"), count: 3))
        server.stop()
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    @Test(arguments: TransportUnderTest.available)
    func aByteOrderMarkOnEveryConnection(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([.readHead, .write(Data((Self.eventStreamHead + "\u{FEFF}data: one\n\n").utf8))])
        defer { server.stop() }
        // By the fourth connection, three have been read whole.
        let run = await Self.runEventStream(transport, server: server) { Self.connections($0) == 4 }
        #expect(run.error == nil, "\(run.error.map { "\($0)" } ?? "")")
        #expect(Self.events(run.updates) == Array(repeating: ServerSentEvent(data: "one"), count: 3))
        server.stop()
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    /// Issue 36 measured about 12,000 connections in 10 s from this server. Now the delays are
    /// 0.5, 1, 2, 4 s...: a handful of connections in the few seconds watched, however slow the
    /// machine (a slower one makes fewer); a storm would make thousands.
    @Test(arguments: TransportUnderTest.available)
    func retryZeroAndACloseAfterEachEventIsNotAStorm(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([.readHead, .write(Data((Self.eventStreamHead + "retry: 0\ndata: tick\n\n").utf8))])
        defer { server.stop() }
        let connections = try await Self.connectionsInAFewSeconds(transport, server: server)
        #expect(connections < 40, "\(connections) connections")
        server.stop()
        await Self.expectNoSocketLeft(toPort: server.port)
    }

    /// Reads a stream from `server` on the real clock until it has connected three times, then two
    /// seconds more; the connections the server accepted by then.
    static func connectionsInAFewSeconds(_ transport: TransportUnderTest, server: ScriptedReplyServer) async throws -> Int {
        let session = makeSession(transport) { $0.requestTimeout = 30 }
        let stream = session.eventStream(server.url, reconnection: EventStreamReconnection(jitter: 0))
        let reader = Task {
            do throws(CourierError) {
                for try await _ in stream.updates() {}
            } catch {}
        }
        #expect(await eventually(timeout: .seconds(60)) { server.connectionCount >= 3 }, "the stream reconnects")
        try await Task.sleep(for: .seconds(2))
        let connections = server.connectionCount
        stream.cancel()
        await reader.value
        return connections
    }
}
