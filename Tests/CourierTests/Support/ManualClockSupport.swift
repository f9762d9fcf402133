import Foundation
import CourierLocking
@_spi(Transport) @testable import Courier

/// Timeouts tested on a ``ManualTransportClock``: the time stands still until the test moves it,
/// so a timeout fires because the test said the time had come, never because a loaded machine
/// was slow, and no stall of the machine makes one fire that should not.
extension ManualTransportClock {
    /// Runs `operation` (a request that only a timeout can end) and moves the time on by `step`,
    /// then lets a few milliseconds of real time pass, again and again until it returns.
    ///
    /// One move is not enough: a transport starts a transfer's idle clock when it sends the
    /// request, a moment the test cannot see, and a move before that moment does not count for it.
    func advancing<T: Sendable>(by step: Duration, until operation: @escaping @Sendable () async -> T) async -> T {
        let finished = Locked(false)
        let task = Task {
            let value = await operation()
            finished.withLock { $0 = true }
            return value
        }
        while !finished.withLock({ $0 }) {
            await advance(by: step)
            try? await Task.sleep(for: .milliseconds(5))
        }
        return await task.value
    }
}

/// The body bytes a request has received so far, from its download progress, for a test that
/// moves a ``ManualTransportClock`` only once bytes have arrived.
final class ReceivedBytes: Sendable {
    private let count = Locked(Int64(0))

    /// Counts what `request` receives.
    init(_ request: some Request) {
        request.onDownloadProgress(queue: .global()) { [count] progress in
            count.withLock { $0 = max($0, progress.completedUnitCount) }
        }
    }

    /// The bytes received so far.
    var value: Int64 { count.withLock { $0 } }

    /// Waits until at least `bytes` have arrived (false after five minutes, the hang limit's time:
    /// under the whole suite and busy processes competing for two cores, tasks the test starts
    /// have waited more than a minute to run).
    func wait(for bytes: Int64) async -> Bool {
        await eventually(timeout: .seconds(300)) { self.value >= bytes }
    }
}
