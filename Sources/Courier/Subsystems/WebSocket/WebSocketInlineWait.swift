import CourierSupport
/// Decides whether a consumer asking for the next message waits for it on its own thread
/// (``WebSocket`` with ``FastPaths`` on), and for how long: only while recent messages came
/// within ``limit`` of being asked for, as an echo or request-reply exchange does on a fast link.
/// A miss makes the next attempts wait fewer and fewer times (2, 4, 8… up to 64 requests skipped),
/// so an idle socket or a remote server costs almost nothing.
struct WebSocketInlineWait: Sendable {
    /// The longest wait: a cooperative thread blocked longer costs more than the thread hop it saves.
    static let limit: Duration = .microseconds(250)

    /// A smoothed recent time from asking to the message's arrival, for waits that got one.
    private(set) var estimate: Duration?
    private var missesInARow = 0
    private var skipping = 0

    /// How long to wait this time, or nil not to: twice the estimate (the limit until there is
    /// one), and only while that fits the limit; every 64th request probes again.
    mutating func window() -> Duration? {
        if skipping > 0 {
            skipping -= 1
            return nil
        }
        guard let estimate else { return Self.limit }
        guard estimate * 2 <= Self.limit else {
            self.estimate = nil
            skipping = 64
            return nil
        }
        return max(estimate * 2, .microseconds(50))
    }

    /// Records how a wait went: the time until the message arrived, or nil when none did.
    mutating func record(_ arrival: Duration?) {
        guard let arrival else {
            missesInARow = min(missesInARow + 1, 6)
            skipping = 1 << missesInARow
            return
        }
        missesInARow = 0
        estimate = estimate.map { ($0 * 3 + arrival) / 4 } ?? arrival
    }
}
