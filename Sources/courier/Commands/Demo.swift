import Courier
import CourierTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `courier demo`: Courier's features against an embedded ``TestServer``, offline, with figures.
///
/// Each step prints what it did and what it measured, and returns whether Courier behaved as the
/// step says; the demo exits 0 only if every step did. Its temporary directory (download store,
/// downloaded file) is removed at the end, also when it is interrupted.
struct Demo {
    /// `courier demo` takes no options but `--help`.
    static let options = [OptionSpec("help", short: "h", long: "help", help: "show this help")]

    let console: Console
    let interrupts: Interrupts

    /// Runs the four steps and returns the exit status.
    func run() async -> ExitCode {
        let started = ContinuousClock.now
        let server: TestServer
        do {
            server = try TestServer()
        } catch {
            console.message("courier: demo: could not start the test server: \(error)")
            return .failure
        }
        let workspace = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: workspace, withIntermediateDirectories: true)
        } catch {
            _ = server.shutdown()  // nothing was asked of it yet
            console.message("courier: demo: could not create \(workspace.path): \(error.localizedDescription)")
            return .writeError
        }
        let console = console
        interrupts.onInterrupt {
            console.clearProgress()
            _ = server.shutdown()  // interrupted: what the steps left over does not matter
            try? FileManager.default.removeItem(at: workspace)
            console.message("courier: demo interrupted; temporary files removed")
            exit(ExitCode.interrupted.rawValue)
        }
        defer {
            interrupts.clearHandler()
            _ = server.shutdown()  // idempotent: run() shuts it down and checks the report before returning
            try? FileManager.default.removeItem(at: workspace)
        }

        say("Courier demo: an embedded test server on \(server.baseURL.absoluteString), no network access needed.")
        let context = DemoContext(server: server, workspace: workspace, console: console)
        var passed = 0
        let steps: [(String, @Sendable (DemoContext) async -> Bool)] = [
            ("A JSON GET, decoded into a Swift type", Demo.jsonStep),
            ("Validation failing readably", Demo.validationStep),
            ("A download interrupted, then resumed from disk", Demo.resumeStep),
            ("Ten identical requests, one transfer", Demo.deduplicationStep),
        ]
        for (number, step) in steps.enumerated() {
            say("")
            say("\(number + 1). \(step.0)")
            if await step.1(context) {
                passed += 1
            } else {
                say("   !! this step did not behave as described")
            }
        }
        // The steps only route, so any request the server did not expect is a step gone wrong.
        let report = server.shutdown()
        if !report.isClean {
            say("")
            say("!! the embedded server was left with: \(report.problems.joined(separator: "; "))")
        }
        let elapsed = (ContinuousClock.now - started).seconds
        say("")
        try? FileManager.default.removeItem(at: workspace)
        let removed = !FileManager.default.fileExists(atPath: workspace.path)
        say(
            "\(passed) of \(steps.count) steps behaved as described, in \(Units.elapsed(elapsed)); "
                + (removed ? "temporary files removed." : "could not remove \(workspace.path)."))
        return passed == steps.count && removed && report.isClean ? .success : .failure
    }

    private func say(_ line: String) {
        console.out(line + "\n")
    }

    /// A session for one step: a private callback queue and no shared cookies.
    static func makeSession(deduplication: DeduplicationPolicy = .disabled, store: DownloadStore? = nil) -> Session {
        var configuration = SessionConfiguration.default
        configuration.cookies = .none
        let queue = DispatchQueue(label: "courier.demo.callbacks")
        if let store {
            return Session(configuration: configuration, deduplication: deduplication, downloadStore: store, callbackQueue: queue)
        }
        return Session(configuration: configuration, deduplication: deduplication, callbackQueue: queue)
    }
}

/// What every demo step gets: the server, a private directory, and where to print.
struct DemoContext: Sendable {
    let server: TestServer
    let workspace: URL
    let console: Console

    /// Prints one indented line of the step's report to standard output.
    func say(_ line: String) {
        console.out("   " + line + "\n")
    }

    /// Prints several lines (e.g. formatted JSON), each indented.
    func sayBlock(_ text: String) {
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where !line.isEmpty {
            say(String(line))
        }
    }

    /// `2.3 ms`: the transfer's total time, from metrics.
    static func time(_ metrics: TransferMetrics?) -> String {
        metrics.map { Units.elapsed($0.total.seconds) } ?? "-"
    }
}

/// Waits for an observable condition, checking it every few milliseconds, up to `timeout`.
/// Returns whether it became true.
func waitUntil(timeout: Duration, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
