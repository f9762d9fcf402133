import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `-o`, progress output, and interruption with Ctrl-C / SIGTERM.
@Suite struct DownloadTests {
    @Test func outputFileIsByteExactWithNoProgressWhenNotATerminal() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("download")
        defer { directory.remove() }
        let size: Int64 = 20_000_000
        server.route("/files/twenty.bin", Resource(pattern: size, seed: 21, etag: "\"t1\""))
        let output = directory.path("twenty.bin")
        let result = try await runCLI(["-o", output.path, server.url("/files/twenty.bin").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(PatternFile.size(output) == size)
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 21) == nil)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.isEmpty, "no progress when stderr is a pipe: \(result.stderrText)")
        #expect(server.bytesSent(path: "/files/twenty.bin") == size)
    }

    @Test func aSlowTransferPrintsNoProgressToAPipe() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("plain")
        defer { directory.remove() }
        let size: Int64 = 6 << 20
        // 4 MiB/s: about 1.5 s, long enough for progress to be due several times.
        server.route("/slow.bin", Resource(pattern: size, seed: 22).throttle(bytes: 64 << 10, every: .milliseconds(16)))
        let result = try await runCLI(["-o", directory.path("slow.bin").path, server.url("/slow.bin").absoluteString])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "nothing on a pipe: \(result.stderrText)")
        #expect(try PatternFile.firstMismatch(directory.path("slow.bin"), count: size, seed: 22) == nil)
    }

    @Test func progressBarInAPseudoTerminalEndsWithASaneLine() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("pty")
        defer { directory.remove() }
        let size: Int64 = 8 << 20
        // About 0.7 s at 12 MiB/s: several redraws, ten a second at most.
        server.route("/bar.bin", Resource(pattern: size, seed: 23).throttle(bytes: 96 << 10, every: .milliseconds(8)))
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let output = directory.path("bar.bin")
        let command = [executable.path, "-o", output.path, server.url("/bar.bin").absoluteString].map(shellQuoted).joined(separator: " ")
        let script = try CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["TERM": "xterm"])
        let result = try await script.finish(timeout: .seconds(60))
        #expect(result.status == 0, "\(result)")
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 23) == nil)

        let screen = result.stdoutText.replacingOccurrences(of: "\r\n", with: "\n")
        let lastLine = try #require(screen.split(separator: "\n").last.map(String.init))
        let afterLastReturn = String(lastLine.split(separator: "\r", omittingEmptySubsequences: false).last ?? "")
        #expect(afterLastReturn.hasPrefix("100% 8.0 MiB (8388608 bytes) in "), "final line: \(afterLastReturn.debugDescription)")
        #expect(afterLastReturn.contains("average"))
        #expect(
            afterLastReturn.allSatisfy { $0.isASCII && ($0 == " " || !$0.isWhitespace) && $0 != "\u{1B}" },
            "nothing but the text after the last carriage return: \(afterLastReturn.debugDescription)")
        #expect(afterLastReturn.last != " ")
        let redraws = lastLine.split(separator: "\r").map(String.init).filter { $0.contains("%") && $0.contains("ETA") }
        #expect(redraws.count >= 2, "the bar was redrawn in place: \(lastLine.debugDescription)")
        #expect(redraws.allSatisfy { $0.count < 80 }, "each redraw fits the terminal")
    }

    @Test func jsonIsPrettyPrintedAndColouredOnATerminal() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/user") { _ in .json(#"{"nick":"ada","level":7}"#) }
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let command = [executable.path, server.url("/user").absoluteString].map(shellQuoted).joined(separator: " ")
        let script = try CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["TERM": "xterm", "NO_COLOR": ""])
        let coloured = try await script.finish(timeout: .seconds(60))
        #expect(coloured.status == 0, "\(coloured)")
        let screen = coloured.stdoutText.replacingOccurrences(of: "\r\n", with: "\n")
        #expect(screen.contains("\u{1B}[1;34m\"nick\"\u{1B}[0m: \u{1B}[32m\"ada\"\u{1B}[0m"), "\(screen.debugDescription)")
        #expect(screen.contains("\n  \u{1B}[1;34m\"level\"\u{1B}[0m: \u{1B}[36m7\u{1B}[0m\n}"))
    }

    @Test func ctrlCKeepsThePartialAndTheNextRunResumesIt() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let directory = try TemporaryDirectory("sigint")
        defer { directory.remove() }
        let size: Int64 = 3 << 20
        let pauseAt: Int64 = 1 << 20
        let gate = Gate()
        server.route("/pausing.bin", Resource(pattern: size, seed: 24, etag: "\"p1\"").pausing(afterBytes: pauseAt, until: gate))
        let store = directory.path("store")
        let output = directory.path("pausing.bin")
        let arguments = ["-C", "-o", output.path, "--store", store.path, server.url("/pausing.bin").absoluteString]

        // A paused body: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let first = try CLIProcess(["--timeout", "600"] + arguments)
        let paused = await eventually(timeout: .seconds(60)) { StoreFiles.partSize(in: store) >= pauseAt }
        #expect(paused, "the partial file reached \(StoreFiles.partSize(in: store)) bytes, expected \(pauseAt)")
        first.send(SIGINT)
        let interrupted = try await first.finish(timeout: .seconds(60))
        #expect(interrupted.status == 130 && !interrupted.signalled, "\(interrupted)")
        #expect(interrupted.stderrText.contains("interrupted; \(pauseAt) bytes kept for resume"), "\(interrupted)")
        #expect(!FileManager.default.fileExists(atPath: output.path))
        #expect(StoreFiles.partSize(in: store) == pauseAt)

        try await server.waitForClientDisconnect(path: "/pausing.bin")
        gate.open()
        let resumed = try await runCLI(arguments)
        #expect(resumed.status == 0, "\(resumed)")
        #expect(CLIOutput.resumedBytes(resumed.stderrText) == pauseAt, "\(resumed.stderrText)")
        #expect(try PatternFile.firstMismatch(output, count: size, seed: 24) == nil)
        #expect(server.bytesSent(path: "/pausing.bin") == size, "nothing was fetched twice")
        #expect(StoreFiles.partSize(in: store) == 0, "the partial is gone once the download completed")
        let ranges = server.recordedRequests.map { $0.headers["Range"] }
        #expect(ranges == [nil, "bytes=\(pauseAt)-"])
    }

    @Test func sigtermInterruptsAHeldRequest() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.route("/held") { _ in .ok("late").waiting(for: gate) }
        // A held response: an idle timeout only a hang reaches, not the default minute a loaded machine can pass.
        let process = try CLIProcess(["--timeout", "600", server.url("/held").absoluteString])
        #expect(await gate.waitUntilWaiting(count: 1, timeout: .seconds(120)))
        process.send(SIGTERM)
        let result = try await process.finish(timeout: .seconds(60))
        #expect(result.status == 130 && !result.signalled, "\(result)")
        #expect(result.stderrText.contains("interrupted"))
        #expect(result.stdout.isEmpty)
        gate.open()
    }
}

extension DownloadTests {
    @Test func noColorTurnsColoursOff() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/user") { _ in .json(#"{"nick":"ada"}"#) }
        let executable = try #require(CourierExecutable.url, Comment(rawValue: CourierExecutable.missingMessage))
        let command = [executable.path, server.url("/user").absoluteString].map(shellQuoted).joined(separator: " ")
        let script = try CLIProcess(
            executable: URL(fileURLWithPath: "/usr/bin/script"), ["-qec", command, "/dev/null"],
            environment: ["TERM": "xterm", "NO_COLOR": "1"])
        let plain = try await script.finish(timeout: .seconds(60))
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdoutText.replacingOccurrences(of: "\r\n", with: "\n") == "{\n  \"nick\": \"ada\"\n}\n")
    }
}
