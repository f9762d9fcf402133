import Foundation

/// Runs the tests that hold hundreds of MiB in the test process, and the tests that measure the
/// test process's peak RSS, one at a time.
///
/// All test targets share one process and Swift Testing runs suites in parallel, so a peak-RSS
/// check would otherwise also count another test's 256 MiB upload recorded by its server (a CI run
/// failed that way: +127 MiB against a 96 MiB bound). Ordinary tests still run alongside.
public final class PeakMemoryGate: Sendable {
    /// The one gate of the test process.
    public static let shared = PeakMemoryGate()

    private struct State {
        var busy = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = TestLock(State())

    /// Runs `body` once no other gated test is running.
    public func run<T>(_ body: () async throws -> T) async rethrows -> T {
        await acquire()
        defer { release() }
        return try await body()
    }

    private func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                guard state.busy else {
                    state.busy = true
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private func release() {
        // Ownership passes straight to the next waiter, so no newcomer can overtake it.
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiters.isEmpty else {
                state.busy = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}

extension PeakMemoryGate {
    /// Resets the process's peak RSS (VmHWM) to its current RSS, on Linux; call it inside ``run(_:)``
    /// so an earlier test's peak cannot hide this one's.
    public static func resetPeak() {
        #if os(Linux)
        if let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") {
            try? handle.write(contentsOf: Data("5".utf8))
            try? handle.close()
        }
        #endif
    }
}
