import Foundation

/// Whether a connection can have sat idle long enough to be dropped between two exchanges.
///
/// libcurl does not reuse a connection idle for more than 118 s (`CURLOPT_MAXAGE_CONN`'s default).
/// A test that asserts reuse opens a window before the earlier exchange starts and asks, once the
/// later one has ended, whether the whole window (an upper bound on the idle time between them) was
/// shorter than that. A machine that stalled the test longer rightly gets a new connection, and
/// only then is reuse not asserted.
struct IdleWindow {
    /// Well under libcurl's 118 s, so that a window this short proves the connection was reusable.
    static let reusableFor: Duration = .seconds(100)

    private let opened = ContinuousClock.now

    /// Whether everything since the window opened took less than ``reusableFor``; prints a line
    /// saying reuse goes unchecked when it did not.
    func provesReuse(_ what: String) -> Bool {
        let elapsed = opened.duration(to: .now)
        if elapsed < Self.reusableFor { return true }
        print("\(what): \(elapsed) between two exchanges on a stalled machine; connection reuse not asserted")
        return false
    }
}
