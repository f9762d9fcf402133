import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// What `-C -` leaves behind, and what it does not do twice; and progress on a terminal.
@Suite struct ResumeHygieneTests {
    @Test func aFinishedDownloadLeavesNothingInTheStoreAndIsNotDownloadedAgain() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("finished")
        defer { directory.remove() }
        let size: Int64 = 3 << 20
        server.route("/whole.bin", Resource(pattern: size, seed: 41, etag: "\"w\""))
        let store = directory.path("store")
        let output = directory.path("whole.bin")
        let arguments = ["-C", "-", "-o", output.path, "--store", store.path, server.url("/whole.bin").absoluteString]

        let first = try await runCLI(arguments)
        #expect(first.status == 0, "\(first)")
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 41) == nil)
        #expect(StoreFiles.names(in: store).isEmpty, "no .part, .journal or .lock after a finished download: \(StoreFiles.names(in: store))")

        let again = try await runCLI(arguments)
        #expect(again.status == 0, "\(again)")
        #expect(again.stderrText.contains("already complete (\(size) bytes); nothing downloaded"), "\(again)")
        #expect(server.bytesSent(path: "/whole.bin") == size, "the finished file is not downloaded again")
        #expect(server.recordedRequests.last?.headers["Range"] == "bytes=\(size)-", "asked only for what would come after it")
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 41) == nil)
        #expect(StoreFiles.names(in: store).isEmpty)

        // A shorter file of the same name is not complete: the download runs.
        try Data(count: 100).write(to: output)
        let replaced = try await runCLI(arguments)
        #expect(replaced.status == 0, "\(replaced)")
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 41) == nil)
    }

    @Test func ctrlCKeepsThePartialButNoLockFile() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("nolock")
        defer { directory.remove() }
        let gate = Gate()
        server.route("/held.bin", Resource(pattern: 2 << 20, seed: 42, etag: "\"h\"").pausing(afterBytes: 512 << 10, until: gate))
        let store = directory.path("store")
        let arguments = ["-C", "-o", directory.path("held.bin").path, "--store", store.path, server.url("/held.bin").absoluteString]
        // A paused body: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let process = try CLIProcess(["--timeout", "600"] + arguments)
        #expect(await eventually(timeout: .seconds(60)) { StoreFiles.partSize(in: store) >= 512 << 10 })
        process.send(SIGINT)
        let interrupted = try await process.finish(timeout: .seconds(60))
        #expect(interrupted.status == 130, "\(interrupted)")
        let names = StoreFiles.names(in: store)
        #expect(names.filter { $0.hasSuffix(".lock") }.isEmpty, "\(names)")
        #expect(names.filter { $0.hasSuffix(".part") || $0.hasSuffix(".journal") }.count == 2, "\(names)")
        try await server.waitForClientDisconnect(path: "/held.bin")
        gate.open()
        let resumed = try await runCLI(arguments)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(StoreFiles.names(in: store).isEmpty, "\(StoreFiles.names(in: store))")
    }

    /// On a terminal: one bar per transfer, ending as the final line; after an interrupted
    /// transfer the bar is erased, so no stale progress line stays on screen.
    @Test func oneBarPerTransferAndNoStaleLineInThePseudoTerminal() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("bars")
        defer { directory.remove() }
        server.route("/bar.bin", Resource(pattern: 4 << 20, seed: 43).throttle(bytes: 64 << 10, every: .milliseconds(8)))
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let command = [executable.path, "-o", directory.path("bar.bin").path, server.url("/bar.bin").absoluteString]
            .map(shellQuoted).joined(separator: " ")
        let download = try await CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["TERM": "xterm"]
        ).finish(timeout: .seconds(60))
        #expect(download.status == 0, "\(download)")
        let visible = Self.visibleLines(download.stdoutText)
        #expect(visible.filter { $0.contains("%") }.count == 1, "one bar: \(visible)")
        #expect(visible.last?.hasPrefix("100% 4.0 MiB") == true, "\(visible)")

        let silentCommand = [executable.path, "-s", "-o", directory.path("quiet.bin").path, server.url("/bar.bin").absoluteString]
            .map(shellQuoted).joined(separator: " ")
        let silent = try await CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", silentCommand, "/dev/null"],
            environment: ["TERM": "xterm"]
        ).finish(timeout: .seconds(60))
        #expect(silent.status == 0, "\(silent)")
        #expect(!silent.stdoutText.contains("%"), "-s: no progress on a terminal either: \(silent.stdoutText.debugDescription)")

        let demo = try await CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"),
            ["-qec", shellQuoted(executable.path) + " demo", "/dev/null"],
            environment: ["TERM": "xterm"]
        ).finish(timeout: .seconds(120))
        #expect(demo.status == 0, "\(demo)")
        let demoScreen = Self.visibleLines(demo.stdoutText)
        #expect(demoScreen.filter { $0.contains("ETA") }.isEmpty, "no stale bar: \(demoScreen)")
        #expect(demoScreen.filter { $0.hasPrefix("100% ") }.count == 1, "the resumed transfer's final line: \(demoScreen)")
    }

    /// What a terminal shows of `output`: each line as left after its last carriage return
    /// (progress redraws and blanking overwrite the start of the line), trailing spaces removed.
    static func visibleLines(_ output: String) -> [String] {
        output.replacingOccurrences(of: "\r\n", with: "\n").split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var screen: [Character] = []
            var column = 0
            for character in line {
                if character == "\r" { column = 0; continue }
                if column < screen.count { screen[column] = character } else { screen.append(character) }
                column += 1
            }
            return String(String(screen).reversed().drop { $0 == " " }.reversed())
        }.filter { !$0.isEmpty }
    }
}
