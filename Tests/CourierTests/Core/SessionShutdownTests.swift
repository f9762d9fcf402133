import CourierLocking
import CourierTestServer
import Foundation
import Testing

@testable import Courier

/// `Session.shutdown(gracePeriod:clock:)`: the state machine as event → action tables, then the
/// behaviour on both transports against a server holding responses at a gate. The grace period
/// runs on a ``ManualClock``: a request is cancelled because the test moved the time, never
/// because the machine was slow.
@Suite struct SessionShutdownTests {
    typealias Lifecycle = SessionLifecycle<String>

    static let first = UUID(), second = UUID()

    /// A readable summary of a `shutdown` action.
    static func describe(_ action: Lifecycle.ShutdownAction) -> String {
        switch action {
        case .wait: "wait"
        case .release: "release"
        case .resume(let waiter): "resume(\(waiter))"
        }
    }

    static func describe(_ state: Lifecycle.State) -> String {
        switch state {
        case .open(let running): "open(\(running.count))"
        case .draining(let running, let waiters): "draining(\(running.count), \(waiters))"
        case .releasing(let waiters): "releasing(\(waiters))"
        case .closed: "closed"
        }
    }

    @Test func drainingWaitsForTheLastRequestThenReleases() {
        var lifecycle = Lifecycle()
        var steps: [String] = []
        steps.append("start first: \(lifecycle.start(Self.first))")
        steps.append("start second: \(lifecycle.start(Self.second))")
        steps.append("shutdown a: \(Self.describe(lifecycle.shutdown("a"))) → \(Self.describe(lifecycle.state))")
        steps.append("start new: \(lifecycle.start(UUID()))")
        steps.append("shutdown b: \(Self.describe(lifecycle.shutdown("b"))) → \(Self.describe(lifecycle.state))")
        steps.append("end unknown: \(lifecycle.end(UUID()))")
        steps.append("end first: \(lifecycle.end(Self.first)) → \(Self.describe(lifecycle.state))")
        steps.append("end second: \(lifecycle.end(Self.second)) → \(Self.describe(lifecycle.state))")
        steps.append("shutdown c: \(Self.describe(lifecycle.shutdown("c"))) → \(Self.describe(lifecycle.state))")
        steps.append("released: \(lifecycle.released()) → \(Self.describe(lifecycle.state))")
        steps.append("shutdown d: \(Self.describe(lifecycle.shutdown("d"))) → \(Self.describe(lifecycle.state))")
        steps.append("start late: \(lifecycle.start(UUID()))")
        steps.append("released again: \(lifecycle.released())")
        #expect(
            steps == [
                "start first: true",
                "start second: true",
                "shutdown a: wait → draining(2, [\"a\"])",
                "start new: false",
                "shutdown b: wait → draining(2, [\"a\", \"b\"])",
                "end unknown: none",
                "end first: none → draining(1, [\"a\", \"b\"])",
                "end second: release → releasing([\"a\", \"b\"])",
                "shutdown c: wait → releasing([\"a\", \"b\", \"c\"])",
                "released: [\"a\", \"b\", \"c\"] → closed",
                "shutdown d: resume(d) → closed",
                "start late: false",
                "released again: []",
            ])
    }

    @Test func anIdleSessionReleasesAtOnce() {
        var lifecycle = Lifecycle()
        let started = lifecycle.start(Self.first)
        let ended = lifecycle.end(Self.first)
        let shutdown = Self.describe(lifecycle.shutdown("a"))
        #expect(started && ended == .none && shutdown == "release")
        #expect(!lifecycle.isOpen && !lifecycle.isClosed)
        let released = lifecycle.released()
        #expect(released == ["a"])
        #expect(lifecycle.isClosed)
    }

    // MARK: - Both transports

    @Test(arguments: TransportUnderTest.available)
    func aRequestInFlightFinishesWithinTheGracePeriodAndNewOnesFail(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("done").waiting(for: gate) }
            let session = makeSession(transport, server: server)
            let held = session.request("held").serializingString()
            held.resume()
            #expect(await gate.waitUntilWaiting(count: 1))

            let clock = ManualClock()
            let shutdown = Task { await session.shutdown(gracePeriod: .seconds(30), clock: clock) }
            #expect(await eventually { session.isShutDown })

            let refused = await session.request("held").serializingString().response
            #expect(refused.error?.kind == .sessionInvalidated)
            let refusedDownload = await session.download("held").serializingDownloadedFileURL().response
            #expect(refusedDownload.error?.kind == .sessionInvalidated)

            gate.open()
            #expect(try await held.value == "done")
            await shutdown.value
            #expect(clock.now.offset == .zero, "it finished without the time moving")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func whatStillRunsAtTheDeadlineIsCancelled(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("late").waiting(for: gate) }
            let session = makeSession(transport, server: server)
            let held = session.request("held").serializingString()
            held.resume()
            let download = session.download("held").serializingDownloadedFileURL()
            download.resume()
            #expect(await gate.waitUntilWaiting(count: 2))

            let clock = ManualClock()
            let ended = Locked(false)
            let shutdown = Task {
                await session.shutdown(gracePeriod: .seconds(30), clock: clock)
                ended.withLock { $0 = true }
            }
            #expect(await clock.waitForSleep(until: .seconds(30)))
            #expect(!ended.withLock { $0 }, "shutdown waits for the requests in flight")
            clock.advance(by: .seconds(30))

            #expect(await held.response.error?.kind == .cancelled)
            #expect(await download.response.error?.kind == .cancelled)
            await shutdown.value
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSecondCallWaitsForTheSameEndAndALaterOneReturnsAtOnce(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("done").waiting(for: gate) }
            let session = makeSession(transport, server: server)
            let held = session.request("held").serializingString()
            held.resume()
            #expect(await gate.waitUntilWaiting(count: 1))

            let clock = ManualClock()
            let first = Task { await session.shutdown(gracePeriod: .seconds(30), clock: clock) }
            let second = Task { await session.shutdown(gracePeriod: .seconds(60), clock: clock) }
            #expect(await clock.waitForSleep(until: .seconds(30)))
            #expect(await clock.waitForSleep(until: .seconds(60)))
            gate.open()
            #expect(try await held.value == "done")
            await first.value
            await second.value
            await session.shutdown(gracePeriod: .seconds(30), clock: clock)
            #expect(clock.deadlines.isEmpty, "no timer outlives a shutdown")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anIdleSessionShutsDownAtOnceAndRefusesWebSockets(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server)
            await session.shutdown(gracePeriod: .seconds(30), clock: ManualClock())
            #expect(session.isShutDown)
            let refused = await session.request("never").serializingString().response
            #expect(refused.error?.kind == .sessionInvalidated)
            let socket = session.webSocket(server.url("/ws"))
            let error = await #expect(throws: CourierError.self) { try await socket.connect() }
            #expect(error?.kind == .sessionInvalidated)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingTheCallerCancelsWhatRunsAtOnce(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("late").waiting(for: gate) }
            let session = makeSession(transport, server: server)
            let held = session.request("held").serializingString()
            held.resume()
            #expect(await gate.waitUntilWaiting(count: 1))

            let clock = ManualClock()
            let shutdown = Task { await session.shutdown(gracePeriod: .seconds(30), clock: clock) }
            #expect(await clock.waitForSleep(until: .seconds(30)))
            shutdown.cancel()
            #expect(await held.response.error?.kind == .cancelled)
            await shutdown.value
            gate.open()
        }
    }
}
