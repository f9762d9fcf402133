import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What a finished `courier` process left behind.
struct CLIResult: Sendable, CustomStringConvertible {
    /// The exit status, or the signal number when ``signalled`` is true.
    let status: Int32
    /// Whether a signal ended the process.
    let signalled: Bool
    let stdout: Data
    let stderr: Data

    var stdoutText: String { String(decoding: stdout, as: UTF8.self) }
    var stderrText: String { String(decoding: stderr, as: UTF8.self) }

    var description: String {
        "status \(status)\(signalled ? " (signal)" : "")\n--- stdout ---\n\(stdoutText.prefix(4000))\n--- stderr ---\n\(stderrText.prefix(4000))"
    }
}

/// Errors of the test harness itself.
struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A running `courier` process whose standard output and error go to files (so nothing blocks on
/// a full pipe), with an exit that can be awaited with a timeout.
final class CLIProcess: Sendable {
    private let child: ChildProcess
    private let directory: URL

    /// The process id.
    var pid: Int32 { child.pid }

    /// Starts `courier arguments...`; `environment` is added to this process's environment.
    convenience init(
        _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        stdin: ChildProcess.Stream = .null
    ) throws {
        guard let executable = CourierExecutable.url else { throw HarnessError(CourierExecutable.missingMessage) }
        try self.init(executable: executable, arguments, environment: environment, currentDirectory: currentDirectory, stdin: stdin)
    }

    /// Starts any executable the same way (used for `script`, which runs courier in a pseudo-terminal).
    init(
        executable: URL, _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
        stdin: ChildProcess.Stream = .null
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var merged = ProcessInfo.processInfo.environment
        merged["COURIER_DOWNLOAD_STORE"] = nil
        merged["XDG_CACHE_HOME"] = directory.appendingPathComponent("cache").path
        for (key, value) in environment { merged[key] = value }
        child = try ChildProcess(
            executable: executable.path, arguments: arguments, environment: merged,
            currentDirectory: currentDirectory?.path, stdin: stdin,
            stdout: .file(directory.appendingPathComponent("stdout").path),
            stderr: .file(directory.appendingPathComponent("stderr").path))
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        child.send(signal)
    }

    /// Whether the process has not exited yet.
    var isRunning: Bool { child.isRunning }

    /// Whether it is still running, and what it has written so far (for failure messages).
    func snapshot() -> String {
        "running: \(child.isRunning)\n" + result(status: -1, signalled: false).description
    }

    /// What it has written so far (status -1 while it runs).
    var output: CLIResult { result(status: -1, signalled: false) }

    /// Waits for the process to end; on timeout it is killed and an error says so.
    func finish(timeout: Duration = .seconds(60)) async throws -> CLIResult {
        guard let outcome = await child.wait(timeout: timeout) else {
            send(SIGKILL)
            _ = await child.wait(timeout: .seconds(60))
            let partial = result(status: -1, signalled: true)
            throw HarnessError("\(child.commandLine) did not finish within \(timeout)\n\(partial)")
        }
        return result(status: outcome.status, signalled: outcome.signalled)
    }

    private func result(status: Int32, signalled: Bool) -> CLIResult {
        let stdout = (try? Data(contentsOf: directory.appendingPathComponent("stdout"))) ?? Data()
        let stderr = (try? Data(contentsOf: directory.appendingPathComponent("stderr"))) ?? Data()
        return CLIResult(status: status, signalled: signalled, stdout: stdout, stderr: stderr)
    }

    deinit {
        child.send(SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `courier arguments...` to completion.
func runCLI(
    _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
    timeout: Duration = .seconds(60)
) async throws -> CLIResult {
    try await CLIProcess(arguments, environment: environment, currentDirectory: currentDirectory).finish(timeout: timeout)
}
