import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The test harness's process launcher: CLI, nginx and shell tests depend on it behaving like a
/// clean fork/exec even while hundreds of parallel tests hold descriptors open.
@Suite struct ChildProcessTests {
    @Test func exitStatusAndSignalsAreReported() async throws {
        let exited = try ChildProcess(shell: "exit 3")
        #expect(await exited.wait(timeout: .seconds(60)) == ChildProcess.Exit(status: 3, signalled: false))

        // The test runner blocks some signals; the child must still die of SIGTERM.
        let sleeper = try ChildProcess(executable: "/bin/sleep", arguments: ["60"])
        #expect(sleeper.isRunning)
        sleeper.send(SIGTERM)
        #expect(await sleeper.wait(timeout: .seconds(60)) == ChildProcess.Exit(status: SIGTERM, signalled: true))
        #expect(!sleeper.isRunning)
    }

    @Test func theChildInheritsOnlyItsStandardStreamsWhileManyDescriptorsAreOpen() async throws {
        // 1,500 inheritable descriptors: Foundation's Process over-read its /proc/self/fd buffer here.
        var opened: [Int32] = []
        defer { opened.forEach { close($0) } }
        for _ in 0..<1_500 {
            let descriptor = open("/dev/null", O_RDONLY)
            try #require(descriptor >= 0)
            opened.append(descriptor)
        }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("child-fds-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let child = try ChildProcess(
            executable: "/bin/ls", arguments: ["/proc/self/fd"], currentDirectory: "/",
            stdout: .file(output.path))
        #expect(await child.wait(timeout: .seconds(60)) == ChildProcess.Exit(status: 0, signalled: false))
        let listed = try String(contentsOf: output, encoding: .utf8).split(separator: "\n").compactMap { Int($0) }
        // 0, 1, 2 and the descriptor ls opened to read the directory.
        #expect(listed.count == 4, "\(listed)")
        #expect(listed.filter { $0 > 2 }.allSatisfy { !opened.contains(Int32($0)) || $0 == 3 }, "\(listed)")
    }

    @Test func aMissingExecutableIsAnError() {
        #expect(throws: SpawnError.self) {
            _ = try ChildProcess(executable: "/nonexistent/courier-child", arguments: [])
        }
    }
}
