import CourierTestServer
import CourierLocking
import CourierTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `-o /dev/null`, `-D /dev/null`, `-c /dev/null` and `-o FIFO` write through what is there, as
/// curl does. A download put a new regular file in place of `/dev/null` (run as root, as CI is,
/// that broke every later process on the machine: a test harness opening `/dev/null` for a child's
/// input got ENOENT, or a stale body); a device is never removed, recreated or given another mode.
@Suite(.serialized) struct SpecialOutputTests {
    /// The type bits and permissions of what is at `path` (not following a link).
    static func modeOf(_ path: String) -> mode_t? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        return info.st_mode
    }

    @Test func devNullStaysADeviceForEveryOutputOption() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.route("/body", Resource(pattern: 256 << 10, seed: 31))
        server.route("/cookie") { _ in MockResponse.text("set").header("Set-Cookie", "a=1; Path=/") }
        let before = try #require(Self.modeOf("/dev/null"))
        #expect(before & S_IFMT == S_IFCHR)
        let runs: [[String]] = [
            ["-o", "/dev/null", server.url("/body").absoluteString],
            ["-s", "-o", "/dev/null", "-w", "%{http_code}", server.url("/body").absoluteString],
            ["-D", "/dev/null", "-o", "/dev/null", server.url("/body").absoluteString],
            ["-i", "-o", "/dev/null", server.url("/body").absoluteString],
            ["-c", "/dev/null", "-o", "/dev/null", server.url("/cookie").absoluteString],
        ]
        for arguments in runs {
            let result = try await runCLI(arguments)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(Self.modeOf("/dev/null") == before, "courier \(arguments.joined(separator: " ")) changed /dev/null")
        }
    }

    @Test func aFIFOGetsTheBodyAndStaysAFIFO() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let size: Int64 = 3 << 20
        server.route("/body", Resource(pattern: size, seed: 32))
        let directory = try TemporaryDirectory("fifo-output")
        defer { directory.remove() }
        let fifo = directory.path("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        // The read end is open before courier starts (non-blocking, so neither side waits for the
        // other), and drained on a thread of its own until courier has ended and no writer is
        // left: a courier that replaced the FIFO instead of writing into it fails here, never hangs.
        let readEnd = open(fifo, O_RDONLY | O_NONBLOCK)
        #expect(readEnd >= 0)
        defer { close(readEnd) }
        let courierEnded = Locked(false)
        async let reading = onOwnThread { () -> Data in
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 64 << 10)
            while true {
                let count = read(readEnd, &buffer, buffer.count)
                if count > 0 {
                    data.append(contentsOf: buffer[0..<count])
                } else if count == 0 && courierEnded.withLock({ $0 }) {
                    return data
                } else {
                    usleep(1_000)
                }
            }
        }
        let result = try await runCLI(["-o", fifo, server.url("/body").absoluteString])
        courierEnded.withLock { $0 = true }
        #expect(result.status == 0, "\(result)")
        let received = await reading
        #expect(received.count == Int(size))
        #expect(received == PatternBody.data(offset: 0, count: Int(size), seed: 32))
        #expect(Self.modeOf(fifo).map { $0 & S_IFMT } == S_IFIFO, "the FIFO was replaced")
    }
}
