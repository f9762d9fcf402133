/// Decides how long a pass on a caller's thread may wait for the response of the request it just
/// sent, so that a server that answers fast is answered on that thread with no thread hop.
///
/// A request sent from the caller's thread (``CurlEventLoop/runPassIfIdle()``) is otherwise
/// answered through two wake-ups: the loop thread's for the response, then the awaiting task's.
/// Against a server that answers within tens of microseconds (loopback, a sidecar, a LAN
/// service), waiting for the answer on the caller's thread costs less than those two wake-ups.
/// The wait is bounded by ``limit`` and offered only while recent responses on the loop arrived
/// well within it, so a slow or remote server is never waited for here.
struct CurlResponseWait {
    /// The default longest wait: a cooperative thread blocked longer than this would cost more than it saves.
    static let defaultLimit: Duration = .microseconds(250)

    /// The longest wait.
    let limit: Duration

    /// A smoothed recent time to the first response byte on this loop, if any was seen.
    private(set) var estimate: Duration?

    /// Waits of at most `limit`; `.zero` never waits.
    init(limit: Duration = Self.defaultLimit) {
        self.limit = limit
    }

    /// Folds in a finished transfer's time to its first response byte (an exponential moving
    /// average weighting the newest a quarter, so one slow response does not stop the waits).
    mutating func record(timeToFirstByte: Duration) {
        guard let previous = estimate else {
            estimate = timeToFirstByte
            return
        }
        estimate = (previous * 3 + timeToFirstByte) / 4
    }

    /// How long to wait for the response of a request just sent, or nil not to wait: twice the
    /// estimate (the answer usually comes well within it), and only when that fits the limit.
    var window: Duration? {
        guard let estimate, estimate * 2 <= limit else { return nil }
        return estimate * 2
    }
}
