import CourierLocking
import Testing

/// A time limit that catches hangs and says where the work stood when it fired.
///
/// Swift Testing's `.timeLimit` reports only that a test ran too long. This trait records an issue
/// that also lists what the test said about its progress (``WorkInProgress/describe(_:_:)``), then
/// cancels the test. A limit must be one only a hang exceeds: on a loaded two-core machine, under
/// ThreadSanitizer, a test can take ten times its quiet time.
///
/// ```swift
/// @Test(.hangLimit(.seconds(300))) func drainsTheInbox() async throws {
///     WorkInProgress.describe("socket") { "state \(socket.state), \(count) of 20 messages read" }
///     …
/// }
/// ```
public struct HangLimit: TestTrait, SuiteTrait, TestScoping {
    /// How long a test may run.
    public let limit: Duration

    /// Applies to each test of a suite, one at a time.
    public var isRecursive: Bool { true }

    /// Runs the test with a watchdog; suites pass through (their tests get their own).
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        let board = WorkInProgress()
        let limit = limit
        let start = ContinuousClock.now
        try await WorkInProgress.$current.withValue(board) {
            try await withoutActuallyEscaping(function) { function in
                try await withThrowingTaskGroup(of: Bool.self) { group in
                    group.addTask {
                        try await function()
                        return true
                    }
                    group.addTask {
                        // Time the test spent queued for a place (``WorkInProgress/uncounted(_:)``) is not its own.
                        while true {
                            let counted = board.countedTime(since: start)
                            if counted >= limit { return false }
                            try await Task.sleep(for: limit - counted)
                        }
                    }
                    // The first to finish decides; the other is cancelled (a finished test's
                    // watchdog at once, a hung test as far as it responds to cancellation).
                    defer { group.cancelAll() }
                    if let finished = try await group.next(), !finished {
                        Issue.record(
                            Comment(
                                rawValue: "Still running after \(limit) of its own time (\(ContinuousClock.now - start) in all): a hang, "
                                    + "the limit being far above a slow machine's time. Where the work stands:\n\(board.report())"))
                    }
                }
            }
        }
    }
}

extension Trait where Self == HangLimit {
    /// Fails a test still running after `limit`, with what it said about its progress; see ``HangLimit``.
    public static func hangLimit(_ limit: Duration) -> HangLimit { HangLimit(limit: limit) }
}

/// What a running test says about its progress, reported when its ``HangLimit`` fires.
public final class WorkInProgress: Sendable {
    /// The board of the test running in this task, if it has a ``HangLimit``.
    @TaskLocal public static var current: WorkInProgress?

    private struct State {
        /// The named progress descriptions, in the order they were given.
        var entries: [(name: String, state: @Sendable () -> String)] = []
        /// Time spent in ``WorkInProgress/uncounted(_:)`` so far, and since when the current stay, if any.
        var uncounted: Duration = .zero
        var uncountedSince: ContinuousClock.Instant?
        var depth = 0
    }

    // Guards the descriptions and the time not counted against the limit.
    private let state = Locked(State())

    init() {}

    /// Runs `body` without counting its time against the current test's ``HangLimit``: for a wait in
    /// a queue the test does not control (its turn among the tests that may run with a server at once).
    public static func uncounted<T>(_ body: () async throws -> T) async rethrows -> T {
        guard let board = current else { return try await body() }
        board.state.withLock { state in
            if state.depth == 0 { state.uncountedSince = .now }
            state.depth += 1
        }
        defer {
            board.state.withLock { state in
                state.depth -= 1
                if state.depth == 0, let since = state.uncountedSince {
                    state.uncounted += .now - since
                    state.uncountedSince = nil
                }
            }
        }
        return try await body()
    }

    /// The time since `start` that counts against the limit.
    func countedTime(since start: ContinuousClock.Instant) -> Duration {
        state.withLock { state in
            let now = ContinuousClock.now
            return now - start - state.uncounted - (state.uncountedSince.map { now - $0 } ?? .zero)
        }
    }

    /// Says how to describe one part of the current test's work (a socket's state, messages read
    /// so far): called only if the limit fires. A later description under the same name replaces
    /// the earlier one. Does nothing outside a test with a ``HangLimit``.
    public static func describe(_ name: String, _ state: @escaping @Sendable () -> String) {
        current?.state.withLock { board in
            board.entries.removeAll { $0.name == name }
            board.entries.append((name, state))
        }
    }

    /// Every description, one line each.
    func report() -> String {
        let entries = state.withLock { $0.entries }
        guard !entries.isEmpty else { return "  (the test described none)" }
        return entries.map { "  \($0.name): \($0.state())" }.joined(separator: "\n")
    }
}
