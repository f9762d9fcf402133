import Foundation
import Synchronization
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
    private let process: Process
    private let directory: URL
    private let exit = ExitSignal()

    /// The process id.
    var pid: Int32 { process.processIdentifier }

    /// Starts `courier arguments...`; `environment` is added to this process's environment.
    convenience init(_ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil) throws {
        guard let executable = CourierExecutable.url else { throw HarnessError(CourierExecutable.missingMessage) }
        try self.init(executable: executable, arguments, environment: environment, currentDirectory: currentDirectory)
    }

    /// Starts any executable the same way (used for `script`, which runs courier in a pseudo-terminal).
    init(executable: URL, _ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stdout").path, contents: nil)
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stderr").path, contents: nil)
        process = Process()
        process.executableURL = executable
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment
        merged["COURIER_DOWNLOAD_STORE"] = nil
        merged["XDG_CACHE_HOME"] = directory.appendingPathComponent("cache").path
        for (key, value) in environment { merged[key] = value }
        process.environment = merged
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
        let exit = exit
        process.terminationHandler = { finished in
            exit.fire(status: finished.terminationStatus, signalled: finished.terminationReason == .uncaughtSignal)
        }
        try process.run()
    }

    /// Sends `signal` to the process.
    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    /// Whether the process has not exited yet.
    var isRunning: Bool { process.isRunning }

    /// Whether it is still running, and what it has written so far (for failure messages).
    func snapshot() -> String {
        "running: \(process.isRunning)\n" + result(status: -1, signalled: false).description
    }

    /// Waits for the process to end; on timeout it is killed and an error says so.
    func finish(timeout: Duration = .seconds(60)) async throws -> CLIResult {
        guard let outcome = await exit.wait(timeout: timeout) else {
            send(SIGKILL)
            _ = await exit.wait(timeout: .seconds(10))
            let partial = result(status: -1, signalled: true)
            throw HarnessError("courier \(process.arguments?.joined(separator: " ") ?? "") did not finish within \(timeout)\n\(partial)")
        }
        return result(status: outcome.status, signalled: outcome.signalled)
    }

    private func result(status: Int32, signalled: Bool) -> CLIResult {
        let stdout = (try? Data(contentsOf: directory.appendingPathComponent("stdout"))) ?? Data()
        let stderr = (try? Data(contentsOf: directory.appendingPathComponent("stderr"))) ?? Data()
        return CLIResult(status: status, signalled: signalled, stdout: stdout, stderr: stderr)
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `courier arguments...` to completion.
func runCLI(_ arguments: [String], environment: [String: String] = [:], currentDirectory: URL? = nil,
            timeout: Duration = .seconds(60)) async throws -> CLIResult {
    try await CLIProcess(arguments, environment: environment, currentDirectory: currentDirectory).finish(timeout: timeout)
}

/// A one-shot "the process exited" event that any number of tasks can await with a timeout.
final class ExitSignal: Sendable {
    /// How the process ended.
    struct Outcome: Sendable {
        let status: Int32
        let signalled: Bool
    }

    private struct State {
        var outcome: Outcome?
        var waiters: [UUID: CheckedContinuation<Outcome?, Never>] = [:]
        var expired: Set<UUID> = []
    }

    private let state = Mutex(State())

    func fire(status: Int32, signalled: Bool) {
        let outcome = Outcome(status: status, signalled: signalled)
        let waiters = state.withLock { state -> [CheckedContinuation<Outcome?, Never>] in
            state.outcome = outcome
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        waiters.forEach { $0.resume(returning: outcome) }
    }

    /// How the process ended, or nil if `timeout` passed first.
    func wait(timeout: Duration) async -> Outcome? {
        let id = UUID()
        let timer = Task { [self] in
            try? await Task.sleep(for: timeout)
            expire(id)
        }
        defer { timer.cancel() }
        return await withCheckedContinuation { continuation in
            enum Ready { case outcome(Outcome), expired, waiting }
            let ready = state.withLock { state -> Ready in
                if let outcome = state.outcome { return .outcome(outcome) }
                if state.expired.remove(id) != nil { return .expired }
                state.waiters[id] = continuation
                return .waiting
            }
            switch ready {
            case .outcome(let outcome): continuation.resume(returning: outcome)
            case .expired: continuation.resume(returning: nil)
            case .waiting: break
            }
        }
    }

    private func expire(_ id: UUID) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome?, Never>? in
            guard let waiter = state.waiters.removeValue(forKey: id) else {
                if state.outcome == nil { state.expired.insert(id) }
                return nil
            }
            return waiter
        }
        waiter?.resume(returning: nil)
    }
}
