import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// How the test process runs, for the tests whose figures mean something only in some runs.
public enum TestEnvironment {
    /// Whether this process was built with ThreadSanitizer (its runtime defines `__tsan_init`):
    /// its shadow memory inflates every RSS figure and it slows everything down many times.
    public static let underThreadSanitizer: Bool = dlsym(nil, "__tsan_init") != nil

    /// Whether the process runs only the tests `.ci/run` starts alone, one step each
    /// (`COURIER_RESOURCE_TESTS=1`), outside ThreadSanitizer: there a process-wide figure (peak
    /// RSS, open descriptors, threads) or a measured rate is the test's own, because nothing else
    /// runs beside it. In the parallel runs the same figures also count whatever the other suites
    /// do meanwhile, and under a sanitizer its own memory and slowness.
    public static let runsAlone: Bool =
        ProcessInfo.processInfo.environment["COURIER_RESOURCE_TESTS"] == "1" && !underThreadSanitizer

    /// Whether a test checks its process-wide figure or measured rate here (``runsAlone``); when
    /// not, the group of such checks is named once as skipped, with the reason and the command.
    public static func measuresAlone() -> Bool {
        if !runsAlone {
            SkipNotice.skipped(
                "the checks of process-wide figures and measured rates (peak RSS, descriptors, threads, a throttle's rate)",
                because: underThreadSanitizer
                    ? "under ThreadSanitizer they would measure its shadow memory and slowness"
                    : "beside other tests they would also count what the others do",
                run: "COURIER_RESOURCE_TESTS=1 swift test --filter TEST, one test at a time, as the steps of .ci/run do")
        }
        return runsAlone
    }

    /// The reason a test that measures only alone gives in `.enabled(if:)` (shown with `--verbose`).
    public static let aloneReason =
        "process-wide figures are checked with the test alone: COURIER_RESOURCE_TESTS=1 swift test --filter TEST (as .ci/run does), never under ThreadSanitizer"

    /// Whether a test prints what it measured and other detail (`COURIER_TEST_VERBOSE=1`).
    public static let verbose: Bool = ProcessInfo.processInfo.environment["COURIER_TEST_VERBOSE"] == "1"

    /// Prints `line` when ``verbose``: measurements and progress a person reads only when looking
    /// into a run, never a failure (issues say what failed).
    public static func note(_ line: @autoclosure () -> String) {
        if verbose { print(line()) }
    }
}
