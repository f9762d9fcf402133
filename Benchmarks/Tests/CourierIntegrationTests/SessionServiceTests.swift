import Courier
import CourierServiceLifecycle
import CourierTestServer
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// CourierServiceLifecycle: a `SessionService` in a real `ServiceGroup` shuts its session down
/// gracefully when the group does (#40). The group's graceful shutdown is triggered in the test,
/// not by a signal.
@Suite struct SessionServiceTests {
    @Test(arguments: TransportUnderTest.available)
    func aGracefulShutdownLetsTheHeldRequestFinishAndRefusesNewOnes(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("done").waiting(for: gate) }
            let session = transport.session(server, monitors: [])
            let group = ServiceGroup(services: [SessionService(session, gracePeriod: .seconds(600))], logger: Logger(label: "test"))
            let running = Task { try await group.run() }

            let held = session.request("held").serializingString()
            held.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            await group.triggerGracefulShutdown()
            #expect(await eventually { session.isShutDown })

            let refused = await session.request("held").serializingString().response
            #expect(refused.error?.kind == .sessionInvalidated)
            gate.open()
            #expect(try await held.value == "done")
            try await running.value
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingTheGroupCancelsWhatStillRuns(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/held") { _ in MockResponse.ok("late").waiting(for: gate) }
            let session = transport.session(server, monitors: [])
            let group = ServiceGroup(services: [SessionService(session, gracePeriod: .seconds(600))], logger: Logger(label: "test"))
            let running = Task { try await group.run() }

            let held = session.request("held").serializingString()
            held.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            running.cancel()
            #expect(await held.response.error?.kind == .cancelled)
            _ = try? await running.value
            #expect(session.isShutDown)
            gate.open()
        }
    }
}

/// Polls `condition` until it holds (false after `timeout`, a margin only a hang exceeds).
func eventually(timeout: Duration = .seconds(120), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now > deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return true
}
