import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierLocking

/// The namespace for interceptor, retry, authentication, monitor and cURL tests, so
/// `swift test --filter Pipeline` runs exactly these.
@Suite("Pipeline") enum Pipeline {}

// The helpers below lock with `Locked` (a pthread mutex) rather than `Mutex`, whose
// contended path ThreadSanitizer cannot see on Linux.

/// A clock whose time stands still: every sleep returns at once and is recorded, so retry
/// delays can be asserted exactly without waiting for them.
final class FrozenClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private let sleeps = Locked([Duration]())

    /// Every requested sleep, in order.
    var recorded: [Duration] { sleeps.withLock { $0 } }

    var now: Instant { Instant(offset: .zero) }
    var minimumResolution: Duration { .nanoseconds(1) }

    // `now` never moves, so the deadline is exactly the requested duration.
    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        sleeps.withLock { $0.append(deadline.offset) }
    }
}

/// A session whose retry delays are recorded by `clock` instead of slept.
func makeSession(
    _ transport: TransportUnderTest, server: TestServer, clock: FrozenClock,
    interceptor: (any RequestInterceptor)? = nil, monitors: [any EventMonitor] = []
) -> Session {
    makeSession(transport, server: server, interceptor: interceptor, monitors: monitors) { $0.retryClock = clock }
}

/// Counts to a target and lets tasks wait until it is reached (with a timeout, so a broken
/// test fails instead of hanging).
final class CountdownLatch: Sendable {
    private struct State {
        var count = 0
        var gaveUp = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let target: Int
    private let state = Locked(State())

    init(target: Int) {
        self.target = target
    }

    var count: Int { state.withLock { $0.count } }

    func arrive() {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.count += 1
            guard state.count >= target else { return [] }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in ready { waiter.resume() }
    }

    /// Returns true once the target is reached, false after `timeout`.
    func wait(timeout: Duration = .seconds(60)) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let reached = self.state.withLock { state in
                        if state.count >= self.target || state.gaveUp { return true }
                        state.waiters.append(continuation)
                        return false
                    }
                    if reached { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Release the waiter so the group can finish.
                let waiters = state.withLock { state in
                    state.gaveUp = true
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
            group.cancelAll()
            return first
        }
    }
}

/// Whether `condition` becomes true within `timeout` (for state that has no notification of its
/// own): checked between yields at first, then every millisecond, so that many waiters at once do
/// not keep the cooperative pool busy spinning (on two cores that starves the tasks they wait for).
func eventually(timeout: Duration = .seconds(120), _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: timeout) { () async -> Bool in condition() }
}

/// ``eventually(timeout:_:)`` for a condition that must await.
func eventually(timeout: Duration = .seconds(120), _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    var checks = 0
    while await !condition() {
        guard ContinuousClock.now < deadline else { return false }
        checks += 1
        if checks < 64 { await Task.yield() } else { try? await Task.sleep(for: .milliseconds(1)) }
    }
    return true
}

/// Adds `label` to the comma-separated `X-Chain` header, to show the order adapters ran in.
struct ChainAdapter: RequestAdapter {
    let label: String

    func adapt(_ request: URLRequest, for session: Session) async throws -> URLRequest {
        var adapted = request
        let chain = request.value(forHTTPHeaderField: "X-Chain").map { $0 + "," + label } ?? label
        adapted.setValue(chain, forHTTPHeaderField: "X-Chain")
        return adapted
    }
}

/// Records which retriers were asked, in order, and with which error kinds.
struct LabelledRetrier: RequestRetrier {
    let label: String
    let log: Collected<String>
    var decision: RetryDecision = .doNotRetry

    func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
        log.append("\(label):\(error.kind)")
        return decision
    }
}

/// An error of the test's own.
struct TestFailure: Error, Equatable {
    let reason: String
}

/// Runs `command` with `/bin/sh -c` and returns its exit status (output is discarded).
func runShell(_ command: String) async throws -> Int32 {
    let child = try ChildProcess(shell: command)
    guard let exit = await child.wait(timeout: .seconds(60)) else {
        child.send(SIGKILL)
        throw TestFailure(reason: "`\(command)` did not finish within 60 s")
    }
    return exit.signalled ? 128 + exit.status : exit.status
}
