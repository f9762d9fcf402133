import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Issue 36 end to end, on both transports: each connection of a stream is parsed from a clean
/// state (an unfinished event of the last one is dropped, a byte-order mark is dropped again),
/// and a server that ends every connection at once is backed off instead of stormed.
@Suite struct EventStreamReconnectionTests {
    static let exact = EventStreamReconnection(jitter: 0)

    /// A route answering its `n`th request with `replies[n]` (the last one again past the end).
    static func sequence(_ replies: [MockResponse]) -> @Sendable (RecordedRequest) -> MockResponse {
        let count = Locked(0)
        return { _ in
            let index = count.withLock { count in
                defer { count += 1 }
                return count
            }
            return replies[min(index, replies.count - 1)]
        }
    }

    static func stream(_ text: String) -> MockResponse {
        MockResponse(status: 200, headers: ["Content-Type": "text/event-stream"], body: .text(text))
    }

    @Test(arguments: TransportUnderTest.available)
    func anUnfinishedEventIsDroppedWhenItsConnectionEnds(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            // The first connection ends cleanly in the middle of an event, the second is cut off
            // short of its Content-Length in the middle of another, whose id must not count.
            let cut = "id: 2\ndata: two\n\nid: 3\ndata: unfinished"
            server.route(
                "/events",
                Self.sequence([
                    Self.stream("id: 1\ndata: one\n\ndata: partial"),
                    Self.stream(cut + String(repeating: "x", count: 100)).truncated(afterBytes: Int64(cut.utf8.count)),
                    MockResponse(status: 204),
                ]))
            let session = makeSession(transport, server: server, clock: FrozenClock())
            var updates: [EventStreamUpdate] = []
            for try await update in session.eventStream("events", reconnection: Self.exact).updates() { updates.append(update) }
            let events = updates.compactMap { if case .event(let event) = $0 { event } else { nil } }
            #expect(events == [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "2", data: "two")])
            let reconnections = updates.compactMap { if case .reconnecting(let attempt) = $0 { attempt } else { nil } }
            #expect(reconnections.map(\.lastEventID) == ["1", "2"])
            #expect(reconnections.last?.reason?.kind == .connectionLost)
            #expect(server.recordedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "2"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func everyConnectionMayStartWithAByteOrderMark(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let bom = "\u{FEFF}"
            // The data line comes first: a byte-order mark left in place would hide it in a field
            // named "\u{FEFF}data", and the event would be lost.
            server.route(
                "/events",
                Self.sequence([
                    Self.stream(bom + "data: one\nid: 1\n\n"), Self.stream(bom + "data: two\nid: 2\n\n"),
                    Self.stream(bom + bom + "data: not an event\n\n"), MockResponse(status: 204),
                ]))
            let session = makeSession(transport, server: server, clock: FrozenClock())
            let events = try await collect(session.eventStream("events", reconnection: Self.exact).events())
            // Only one mark is dropped per connection: a second one is part of the field name.
            #expect(events == [ServerSentEvent(id: "1", data: "one"), ServerSentEvent(id: "2", data: "two")])
            #expect(server.recordedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "1", "2", "2"])
        }
    }

    /// `retry: 0` and a close after each event: the reported delays start at the 500 ms floor and
    /// double, the attempt numbers count up (recorded by a frozen clock, never slept).
    @Test(arguments: TransportUnderTest.available)
    func connectionsThatEndAtOnceBackOffFromTheFloor(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/events") { _ in Self.stream("retry: 0\ndata: tick\n\n") }
            let clock = FrozenClock()
            let session = makeSession(transport, server: server, clock: clock)
            let stream = session.eventStream("events", reconnection: Self.exact)
            var reconnections: [EventStreamReconnectionAttempt] = []
            var events = 0
            for try await update in stream.updates() {
                switch update {
                case .event: events += 1
                case .reconnecting(let attempt): reconnections.append(attempt)
                case .connected: break
                }
                if reconnections.count == 6 { break }
            }
            #expect(events == 6)
            #expect(
                reconnections.map(\.delay) == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(16)])
            #expect(reconnections.map(\.attempt) == [2, 3, 4, 5, 6, 7])
            #expect(reconnections.allSatisfy { $0.reason == nil }, "each connection ended cleanly")
            #expect(Array(clock.recorded.prefix(5)) == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8)])
        }
    }
}
