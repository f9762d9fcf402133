import CourierTestOutput
import Foundation

/// Names each group of tests that did not run, once, with the command that runs it.
///
/// `swift test` runs quietly by default (see `Tests/CourierTestOutput`): Swift Testing then prints
/// failures and the summary, and no skipped test. So that a skipped group is not silently missing,
/// the condition that skips it prints one line here, the first time it is evaluated:
///
/// ```
/// Skipped: interop tests with nginx (COURIER_NGINX_URL is not set). Run them: eval "$(.ci/start-servers.sh)"; swift test
/// ```
///
/// With `COURIER_TEST_VERBOSE=1` (or `--verbose`) Swift Testing names every skipped test and
/// suite itself, with the same reason, and nothing is printed here.
public enum SkipNotice {
    /// Whether Swift Testing runs quietly in this process.
    public static let quiet: Bool =
        courier_test_output_is_quiet() != 0 || CommandLine.arguments.contains("--quiet") || CommandLine.arguments.contains("-q")

    private static let named = TestLock(Set<String>())

    /// Prints `Skipped: <group> (<reason>). Run them: <command>` once per group in this process
    /// (only in the quiet output).
    public static func skipped(_ group: String, because reason: String, run command: String) {
        guard quiet, named.withLock({ $0.insert(group).inserted }) else { return }
        print("Skipped: \(group) (\(reason)). Run them: \(command)")
    }

    /// `condition`, after naming the group as skipped when it is false: for `.enabled(if:)`.
    ///
    /// ```swift
    /// @Suite(.enabled(if: SkipNotice.runs(InteropServer.nginx != nil, "interop tests with nginx",
    ///                                     because: "COURIER_NGINX_URL is not set", run: InteropServer.command)))
    /// ```
    public static func runs(_ condition: Bool, _ group: String, because reason: String, run command: String) -> Bool {
        if !condition { skipped(group, because: reason, run: command) }
        return condition
    }
}
