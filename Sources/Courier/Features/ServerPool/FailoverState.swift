import Foundation

/// The outcomes of the last few exchanges with one server: a ring of failure flags.
struct OutcomeWindow: Sendable {
    private var ring: [Bool]
    private var next = 0
    private(set) var count = 0
    private(set) var failures = 0

    init(capacity: Int) {
        ring = Array(repeating: false, count: max(1, capacity))
    }

    mutating func append(failed: Bool) {
        if count == ring.count {
            if ring[next] { failures -= 1 }
        } else {
            count += 1
        }
        ring[next] = failed
        if failed { failures += 1 }
        next = (next + 1) % ring.count
    }

    mutating func reset() {
        self = OutcomeWindow(capacity: ring.count)
    }
}

/// One switch a ``ServerPool`` made, and why.
struct ServerSwitch: Sendable {
    enum Reason: Sendable {
        /// The current server's error rate crossed the threshold.
        case errorRate(failures: Int, of: Int)
        /// The preferred server's cool-down elapsed; it is tried again.
        case coolDownElapsed(Duration)
        /// The preferred server failed again during its trial.
        case trialFailed(failures: Int, of: Int, nextCoolDown: Duration)
        /// ``ServerPool/switchTo(_:)``.
        case manual
    }

    let from: Int?
    let to: Int
    let reason: Reason
}

/// The failover state machine of a ``ServerPool``, as a value: which server is current and
/// preferred, each server's recent outcomes and cool-down, and the preferred server's trial.
/// Time comes in as an argument, so every transition is deterministic.
struct FailoverState: Sendable {
    private struct Trial: Sendable {
        var count = 0
        var failures = 0
    }

    let policy: FailoverPolicy
    /// The server relative paths resolve against; `nil` only for an empty pool.
    private(set) var current: Int?
    /// The server the pool returns to after a failover.
    private(set) var preferred: Int?
    private var windows: [OutcomeWindow]
    private var leftAt: [ContinuousClock.Instant?]
    private var coolDowns: [Duration]
    private var trial: Trial?

    init(serverCount: Int, policy: FailoverPolicy) {
        self.policy = policy
        current = serverCount > 0 ? 0 : nil
        preferred = current
        windows = Array(repeating: OutcomeWindow(capacity: policy.window), count: serverCount)
        leftAt = Array(repeating: nil, count: serverCount)
        coolDowns = Array(repeating: policy.coolDown, count: serverCount)
    }

    /// Whether the preferred server is back on trial after a failover.
    var isOnTrial: Bool { trial != nil }

    /// Records one exchange with `server`; returns the switch it caused, if any.
    mutating func record(server: Int, failed: Bool, at now: ContinuousClock.Instant) -> ServerSwitch? {
        guard policy.isAutomatic, windows.indices.contains(server) else { return nil }
        windows[server].append(failed: failed)
        guard server == current else { return nil }
        if server == preferred, var running = trial {
            running.count += 1
            if failed { running.failures += 1 }
            trial = running
            if running.failures > policy.allowedTrialFailures {
                let next = min(coolDowns[server] * 2, policy.maximumCoolDown)
                coolDowns[server] = next
                return leave(server, at: now, reason: .trialFailed(failures: running.failures, of: running.count, nextCoolDown: next))
            }
            if running.count >= policy.minimumRequests {
                trial = nil
                coolDowns[server] = policy.coolDown
            }
            return nil
        }
        let window = windows[server]
        guard window.count >= policy.minimumRequests,
            Double(window.failures) > policy.threshold * Double(window.count)
        else { return nil }
        return leave(server, at: now, reason: .errorRate(failures: window.failures, of: window.count))
    }

    /// Switches back to the preferred server once its cool-down has elapsed.
    mutating func recoverIfDue(at now: ContinuousClock.Instant) -> ServerSwitch? {
        guard policy.isAutomatic, let preferred, let current, current != preferred,
            let left = leftAt[preferred], now - left >= coolDowns[preferred]
        else { return nil }
        activate(preferred)
        return ServerSwitch(from: current, to: preferred, reason: .coolDownElapsed(coolDowns[preferred]))
    }

    /// Makes `server` current and preferred, forgetting its history.
    mutating func switchManually(to server: Int) -> ServerSwitch? {
        guard windows.indices.contains(server) else { return nil }
        let previous = current
        preferred = server
        leftAt[server] = nil
        coolDowns[server] = policy.coolDown
        activate(server)
        trial = nil
        return previous == server ? nil : ServerSwitch(from: previous, to: server, reason: .manual)
    }

    /// Leaves `server` for the next one in order that is not cooling down; stays (with an empty
    /// window, so it is judged afresh) when every other server is.
    private mutating func leave(_ server: Int, at now: ContinuousClock.Instant, reason: ServerSwitch.Reason) -> ServerSwitch? {
        leftAt[server] = now
        let count = windows.count
        let candidates = (1..<max(count, 1)).map { (server + $0) % count }
        guard let next = candidates.first(where: { isAvailable($0, at: now) }) else {
            windows[server].reset()
            trial = nil
            return nil
        }
        activate(next)
        return ServerSwitch(from: server, to: next, reason: reason)
    }

    private func isAvailable(_ server: Int, at now: ContinuousClock.Instant) -> Bool {
        guard let left = leftAt[server] else { return true }
        return now - left >= coolDowns[server]
    }

    private mutating func activate(_ server: Int) {
        current = server
        windows[server].reset()
        trial = server == preferred ? Trial() : nil
    }
}
