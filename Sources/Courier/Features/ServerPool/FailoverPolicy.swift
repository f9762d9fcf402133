import Foundation

/// When a ``ServerPool`` leaves its current server for the next one, and when it comes back.
///
/// ```swift
/// ServerPool([primary, backup], failover: .errorRate(0.1, minimumRequests: 40))
/// ```
/// With `.errorRate`, the pool keeps the outcomes of the last `window` exchanges with each
/// server (a count-based sliding window, so tests and low-traffic apps behave the same). Only
/// transport failures count as failures (no connection, timeouts, lost connections, TLS
/// failures); HTTP error statuses and validation failures prove the server answers, and
/// cancelled exchanges are not counted at all. Once the current server has at least
/// `minimumRequests` outcomes and more than `threshold` of them failed, the pool switches to
/// the next server in order that is not cooling down.
///
/// Recovery: the server the pool prefers (the first, or the one chosen with
/// ``ServerPool/switchTo(_:)``) cools down for `coolDown` after it was left; then the pool
/// switches back to it, on trial. The trial fails as soon as its failures exceed what the
/// threshold allows over `minimumRequests` exchanges (with 10% of 40: the fifth failure), and
/// the pool leaves again with the cool-down doubled (up to `maximumCoolDown`); once
/// `minimumRequests` exchanges went well, the trial is over and the cool-down back to `coolDown`.
///
/// Hysteresis, so the pool never flaps: a server just switched to starts with an empty window
/// and cannot be left before `minimumRequests` of its own outcomes; the preferred server comes
/// back only after its cool-down, which grows while it keeps failing; late outcomes of requests
/// sent to a server before the switch do not count against the new one.
public struct FailoverPolicy: Sendable, Hashable, CustomStringConvertible {
    /// The fraction of failed exchanges (0...1) above which the pool switches.
    public let threshold: Double
    /// How many outcomes the current server needs before its error rate is judged.
    public let minimumRequests: Int
    /// How many of a server's most recent outcomes are considered.
    public let window: Int
    /// How long a server that was left is not used again, at first.
    public let coolDown: Duration
    /// The longest a cool-down grows to after failed trials.
    public let maximumCoolDown: Duration
    /// Whether the pool switches by itself at all.
    public let isAutomatic: Bool

    /// No automatic switching: the pool stays on the server you choose with ``ServerPool/switchTo(_:)``.
    public static let manual = FailoverPolicy(
        threshold: 1, minimumRequests: .max, window: 1, coolDown: .zero,
        maximumCoolDown: .zero, isAutomatic: false)

    /// Switches when more than `threshold` (0...1) of the last `window` exchanges with the
    /// current server failed at the transport level, once there were at least `minimumRequests`.
    ///
    /// - Parameters:
    ///   - threshold: The failure fraction to exceed, e.g. `0.1` for 10%.
    ///   - minimumRequests: Outcomes needed before judging (at least 1).
    ///   - window: How many recent outcomes count; `minimumRequests` when `nil` or smaller.
    ///   - coolDown: How long the preferred server rests before the pool tries it again.
    ///   - maximumCoolDown: The cap for a cool-down that doubles after each failed trial.
    public static func errorRate(
        _ threshold: Double, minimumRequests: Int = 20, window: Int? = nil,
        coolDown: Duration = .seconds(30), maximumCoolDown: Duration = .seconds(600)
    ) -> FailoverPolicy {
        let minimum = max(1, minimumRequests)
        let base = max(.zero, coolDown)
        return FailoverPolicy(
            threshold: min(max(threshold, 0), 1), minimumRequests: minimum, window: max(window ?? minimum, minimum),
            coolDown: base, maximumCoolDown: max(base, maximumCoolDown), isAutomatic: true)
    }

    /// The most failures a trial of `minimumRequests` exchanges may have without failing.
    var allowedTrialFailures: Int { Int((threshold * Double(minimumRequests)).rounded(.down)) }

    /// `errorRate(10% of ≥40, window 40, cool-down 30s)` or `manual`.
    public var description: String {
        guard isAutomatic else { return "manual" }
        return "errorRate(\(Self.percent(threshold)) of ≥\(minimumRequests), window \(window), cool-down \(coolDown))"
    }

    static func percent(_ fraction: Double) -> String {
        let value = fraction * 100
        return value == value.rounded() ? "\(Int(value))%" : String(format: "%.1f%%", value)
    }
}
