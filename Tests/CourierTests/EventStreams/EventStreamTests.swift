import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking

/// Server-Sent Events end to end over CourierTestServer, on both transports: events in order,
/// reconnection with `Last-Event-ID` and the server's `retry:`, the ways a stream ends for good,
/// cancellation, limits and the callback API. Reconnection delays are recorded by a frozen clock,
/// never slept.
@Suite struct EventStreamTests {
    static let exact = EventStreamReconnection(jitter: 0)

    static func ticks(_ range: ClosedRange<Int>, retry: Int? = nil) -> [EventStreamScript.Event] {
        range.map { EventStreamScript.Event(id: "\($0)", data: "tick \($0)", retry: $0 == range.lowerBound ? retry : nil) }
    }

    @Test(arguments: TransportUnderTest.available)
    func eventsArriveInOrderAndA204EndsTheStreamCleanly(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: Self.ticks(1...5))
            server.route("/events") { request in
                request.headers["Last-Event-ID"] == "5" ? MockResponse(status: 204) : script.response(for: request)
            }
            let clock = FrozenClock()
            let session = makeSession(transport, server: server, clock: clock)
            let stream = session.eventStream("events", reconnection: Self.exact)
            var events: [ServerSentEvent] = []
            for try await event in stream.events() { events.append(event) }
            #expect(events == (1...5).map { ServerSentEvent(id: "\($0)", data: "tick \($0)") })
            // The clean end was reconnected after the default 3 s, naming the last id; the 204 ended it.
            #expect(clock.recorded == [.seconds(3)])
            let requests = server.recordedRequests
            #expect(requests.count == 2)
            #expect(requests.first?.headers["Accept"] == "text/event-stream")
            #expect(requests.first?.headers["Cache-Control"] == "no-cache")
            #expect(requests.first?.headers["Last-Event-ID"] == nil)
            #expect(requests.last?.headers["Last-Event-ID"] == "5")
        }
    }

    /// Every connection here stays open long enough to count as stable (the stepping clock moves a
    /// minute whenever it is read), so each reconnection is a first attempt after the server's retry.
    @Test(arguments: TransportUnderTest.available)
    func aDroppedConnectionReconnectsAfterTheServersRetryWithTheLastEventID(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: Self.ticks(1...7, retry: 750), dropAfter: 3)
            server.route("/events") { request in
                request.headers["Last-Event-ID"] == "7" ? MockResponse(status: 204) : script.response(for: request)
            }
            let clock = SteppingClock()
            let session = makeSession(transport, server: server) { $0.retryClock = clock }
            var updates: [EventStreamUpdate] = []
            for try await update in session.eventStream("events", reconnection: Self.exact).updates() { updates.append(update) }
            let events = updates.compactMap { if case .event(let event) = $0 { event } else { nil } }
            #expect(events.map(\.data) == (1...7).map { "tick \($0)" }, "no event lost or repeated across the drops")
            let reconnections = updates.compactMap { if case .reconnecting(let attempt) = $0 { attempt } else { nil } }
            #expect(reconnections.map(\.lastEventID) == ["3", "6", "7"])
            #expect(reconnections.map(\.attempt) == [1, 1, 1])
            #expect(reconnections.map(\.delay) == [.milliseconds(750), .milliseconds(750), .milliseconds(750)])
            #expect(reconnections[0].reason != nil, "a reset is a failure, not a clean end")
            #expect(reconnections[2].reason == nil, "the last connection ended cleanly")
            #expect(updates.filter { if case .connected = $0 { true } else { false } }.count == 3)
            #expect(clock.recorded == [.milliseconds(750), .milliseconds(750), .milliseconds(750)])
            #expect(server.recordedRequests.map { $0.headers["Last-Event-ID"] } == [nil, "3", "6", "7"])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func failedAttemptsBackOffExponentiallyUpToTheCap(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let attempts = Locked(0)
            let script = EventStreamScript(events: Self.ticks(1...1))
            server.route("/events") { request in
                let attempt = attempts.withLock {
                    $0 += 1; return $0
                }
                if attempt <= 5 { return MockResponse(status: 503) }
                return request.headers["Last-Event-ID"] == "1" ? MockResponse(status: 204) : script.response(for: request)
            }
            // The accepted connection stays open long enough to reset the count (see SteppingClock).
            let clock = SteppingClock()
            let session = makeSession(transport, server: server) { $0.retryClock = clock }
            var reconnection = Self.exact
            reconnection.defaultDelay = .seconds(1)
            reconnection.maximumDelay = .seconds(10)
            let events = try await collect(session.eventStream("events", reconnection: reconnection).events())
            #expect(events.map(\.data) == ["tick 1"])
            // 503 five times: 1, 2, 4, 8, 10 (capped); then the stream, its clean end (1 s), the 204.
            #expect(clock.recorded == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(1)])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aPOSTStreamSendsItsJSONBodyOnceAndDecodesUntilTheSentinel(transport: TransportUnderTest) async throws {
        struct Prompt: Encodable, Sendable { let prompt: String }
        struct Chunk: Decodable, Sendable, Equatable { let token: String }
        try await withServer { server async throws in
            let script = EventStreamScript(
                events: [
                    .init(data: #"{"token":"Hel"}"#), .init(data: #"{"token":"lo"}"#), .init(data: "[DONE]"),
                    .init(data: #"{"token":"never read"}"#),
                ], ending: .stall)
            server.route("/chat", method: .post) { script.response(for: $0) }
            let session = makeSession(transport, server: server)
            let stream = session.eventStream("chat", method: .post, parameters: Prompt(prompt: "hi"), encoder: .json)
            var tokens: [String] = []
            for try await chunk in stream.decodingEvents(of: Chunk.self, until: "[DONE]") { tokens.append(chunk.token) }
            #expect(tokens == ["Hel", "lo"])
            #expect(stream.isCancelled, "the sentinel ends the stream")
            let request = try #require(server.recordedRequests.first)
            #expect(request.method == "POST")
            #expect(request.headers["Content-Type"]?.hasPrefix("application/json") == true)
            #expect(String(decoding: request.body, as: UTF8.self) == #"{"prompt":"hi"}"#)

            // A POST whose connection drops is not sent again: the stream ends with the failure.
            let dropping = EventStreamScript(events: [.init(data: #"{"token":"a"}"#)], ending: .reset)
            server.route("/drop", method: .post) { dropping.response(for: $0) }
            var received: [Chunk] = []
            await #expect(throws: CourierError.self) {
                for try await chunk in session.eventStream("drop", method: .post, parameters: Prompt(prompt: "x"), encoder: .json)
                    .decodingEvents(of: Chunk.self)
                { received.append(chunk) }
            }
            #expect(received == [Chunk(token: "a")])
            #expect(server.recordedRequests.filter { $0.path == "/drop" }.count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aClientErrorOrAnotherContentTypeEndsTheStreamForGood(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/missing") { _ in MockResponse(status: 404, body: .text("no")) }
            server.route("/text") { _ in MockResponse.ok("data: x\n\n").header("Content-Type", "text/plain") }
            let clock = FrozenClock()
            let session = makeSession(transport, server: server, clock: clock)
            for (path, message) in [("missing", "404"), ("text", "text/plain")] {
                do throws(CourierError) {
                    for try await _ in session.eventStream(path).events() { Issue.record("no event expected") }
                    Issue.record("\(path) should fail")
                } catch {
                    #expect(error.kind == .validationFailed, "\(path)")
                    #expect(error.message.contains(message), "\(path): \(error.message)")
                }
            }
            #expect(server.recordedRequests.count == 2, "neither was retried")
            #expect(clock.recorded.isEmpty)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingMidStreamEndsItAndReleasesTheConnection(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: Self.ticks(1...3), ending: .stall)
            server.route("/events") { script.response(for: $0) }
            let session = makeSession(transport, server: server)

            // cancel()
            let stream = session.eventStream("events")
            var seen: [String] = []
            do throws(CourierError) {
                for try await event in stream.events() {
                    seen.append(event.data)
                    if seen.count == 2 { stream.cancel() }
                }
                Issue.record("a cancelled stream throws")
            } catch {
                #expect(error.kind == .cancelled)
            }
            #expect(seen.count >= 2)

            // The consuming task's cancellation.
            let task = Task { () throws(CourierError) -> Int in
                var count = 0
                for try await _ in session.eventStream("events").events() { count += 1 }
                return count
            }
            #expect(await eventually(timeout: .seconds(60)) { server.recordedRequests.count == 2 })
            task.cancel()
            let result = await task.result
            #expect((try? result.get()) == nil)
            // Both connections were closed by the client (the server sees them go).
            #expect(await eventually(timeout: .seconds(60)) { server.activeConnectionCount == 0 })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEventPastTheLimitEndsTheStream(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: [.init(data: "small"), .init(data: String(repeating: "x", count: 4096))], ending: .stall)
            server.route("/events") { script.response(for: $0) }
            let session = makeSession(transport, server: server)
            var events: [String] = []
            do throws(CourierError) {
                for try await event in session.eventStream("events", maximumEventSize: 1024).events() { events.append(event.data) }
                Issue.record("expected .responseTooLarge")
            } catch {
                #expect(error.kind == .responseTooLarge)
                #expect(error.message.contains("1024"))
            }
            #expect(events == ["small"])
            #expect(await eventually(timeout: .seconds(60)) { server.activeConnectionCount == 0 })
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func callbacksSeeEveryEventInOrderThenTheEnd(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: Self.ticks(1...4))
            server.route("/events") { script.response(for: $0) }
            let session = makeSession(transport, server: server)
            let events = Locked([String]())
            let updates = Locked(0)
            let error: CourierError? = await awaitCallback { done in
                session.eventStream("events", reconnection: .never)
                    .onEvent { event in
                        dispatchPrecondition(condition: .onQueue(testCallbackQueue))
                        events.withLock { $0.append(event.data) }
                    }
                    .onUpdate { _ in updates.withLock { $0 += 1 } }
                    .onCompletion { done($0) }
            }
            #expect(error == nil)
            #expect(events.withLock { $0 } == (1...4).map { "tick \($0)" })
            #expect(updates.withLock { $0 } == 5, "connected + 4 events")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func everyConnectionGoesThroughTheSessionsInterceptorsAndMonitors(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let script = EventStreamScript(events: Self.ticks(1...4), dropAfter: 2)
            server.route("/events") { request in
                request.headers["Last-Event-ID"] == "4" ? MockResponse(status: 204) : script.response(for: request)
            }
            let recorder = EventRecorder()
            let clock = FrozenClock()
            let session = makeSession(
                transport, server: server, interceptor: Interceptor(adapters: [ChainAdapter(label: "session")]),
                monitors: [recorder]
            ) { $0.retryClock = clock }
            let stream = session.eventStream(
                "events", interceptor: Interceptor(adapters: [ChainAdapter(label: "stream")]),
                reconnection: Self.exact)
            let events = try await collect(stream.events())
            #expect(events.count == 4)
            // Three connections (dropped, ended, 204), each adapted by the session's then the stream's adapter.
            #expect(server.recordedRequests.map { $0.headers["X-Chain"] } == ["session,stream", "session,stream", "session,stream"])
            #expect(recorder.recorded.filter { $0 == "created" }.count == 3, "\(recorder.recorded)")
            #expect(recorder.recorded.contains("response(204)"))
            let metrics = await stream.currentRequest?.metrics
            #expect(metrics != nil, "the last connection's metrics")
        }
    }

    @Test func aSecondConsumerFailsAtOnce() async throws {
        try await withServer { server async throws in
            server.route("/events") { EventStreamScript(events: Self.ticks(1...1)).response(for: $0) }
            let session = makeSession(.urlSession, server: server)
            let stream = session.eventStream("events", reconnection: .never)
            let first = try await collect(stream.events())
            #expect(first.count == 1)
            await #expect(throws: CourierError.self) { _ = try await collect(stream.events()) }
        }
    }
}

/// Every element of `sequence`, in order.
func collect<S: AsyncSequence>(_ sequence: S) async throws -> [S.Element] {
    var elements: [S.Element] = []
    for try await element in sequence { elements.append(element) }
    return elements
}

/// A clock for reconnection tests whose time moves a minute each time it is read, so that every
/// connection looks long-lived (stable); sleeps are recorded, never slept.
final class SteppingClock: Clock, Sendable {
    typealias Instant = FrozenClock.Instant

    private struct State {
        var offset = Duration.zero
        var sleeps: [Duration] = []
    }

    private let state = Locked(State())
    private let step: Duration

    init(step: Duration = .seconds(60)) {
        self.step = step
    }

    /// Every requested sleep, in order.
    var recorded: [Duration] { state.withLock { $0.sleeps } }

    var now: Instant {
        state.withLock { state in
            state.offset += step
            return Instant(offset: state.offset)
        }
    }

    var minimumResolution: Duration { .nanoseconds(1) }

    // `sleep(for:)` read `now` just before (one step ago): the deadline minus that reading is the
    // duration asked for.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        state.withLock { $0.sleeps.append(deadline.offset - $0.offset) }
    }
}
