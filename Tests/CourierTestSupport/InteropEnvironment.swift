import Foundation

/// The real servers `.ci/start-servers.sh` starts for the interop tests, as its environment
/// variables name them; a test group whose server is missing is skipped, and named once.
public enum InteropEnvironment {
    /// The command that runs the interop tests.
    public static let command = #"eval "$(.ci/start-servers.sh)" && swift test (.ci/run installs what the servers need)"#

    /// The URL in `variable`, or nil after naming `group` as skipped (``SkipNotice``).
    public static func url(_ variable: String, group: String) -> URL? {
        value(variable, group: group).flatMap(URL.init(string:))
    }

    /// The value of `variable`, or nil after naming `group` as skipped (``SkipNotice``).
    public static func value(_ variable: String, group: String) -> String? {
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else {
            SkipNotice.skipped(group, because: "\(variable) is not set", run: command)
            return nil
        }
        return value
    }
}
