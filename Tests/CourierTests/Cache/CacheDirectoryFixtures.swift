import Foundation
import Testing
import CourierTestSupport
import CourierLocking
@testable import Courier

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the hostile-directory tests plant in a cache directory, and the watchdog that turns a
/// hang (a store that opens a FIFO and blocks) into a failure with a message.
enum CacheDirectoryFixtures {
    /// A file outside the cache directory that links in the directory point to: its bytes must
    /// never change (nor be served).
    struct Victim {
        let url: URL
        let contents: Data

        /// A new file in a directory of its own, `count` bytes long.
        static func make(_ label: String, count: Int = 50_000) throws -> Victim {
            let directory = makeTemporaryDirectory("victim-\(label)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let url = directory.appendingPathComponent("precious.txt")
            let contents = Data(String(repeating: "precious, not the cache's. ", count: count / 27 + 1).utf8.prefix(count))
            try contents.write(to: url)
            return Victim(url: url, contents: contents)
        }

        /// Whether the file still holds exactly what it was made with.
        var isIntact: Bool { (try? Data(contentsOf: url)) == contents }

        func remove() {
            try? FileManager.default.removeItem(at: url.deletingLastPathComponent())
        }
    }

    /// Replaces whatever is at `url` with a symbolic link to `target`.
    static func replaceWithLink(_ url: URL, to target: URL) throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
    }

    /// Replaces whatever is at `url` with a FIFO (a named pipe: opening it to read blocks until
    /// someone opens it to write).
    static func replaceWithFIFO(_ url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        guard mkfifo(url.path, 0o600) == 0 else { throw CocoaError(.fileWriteUnknown) }
    }

    /// Replaces whatever is at `url` with an empty directory.
    static func replaceWithDirectory(_ url: URL) throws {
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
    }

    /// Whether the test process may give files away (`chown`), which only root may.
    static var canChown: Bool { geteuid() == 0 }

    /// ``canChown``, after naming the tests that need it as skipped when it is false.
    static var canChownOrSaySo: Bool {
        SkipNotice.runs(
            canChown, "the cache directory's checks of other users' files", because: "giving a file to another user needs root",
            run: "swift test as root (as CI does)")
    }

    /// The user files are given to: `nobody`.
    static let otherUser: uid_t = 65534

    /// Gives the file or directory at `url` (not a link's target) to ``otherUser``.
    static func giveAway(_ url: URL) throws {
        guard lchown(url.path, otherUser, gid_t(otherUser)) == 0 else { throw CocoaError(.fileWriteNoPermission) }
    }

    /// Whether the name at `url` is a FIFO, a link, a directory (`lstat`).
    static func kind(_ url: URL) -> mode_t? {
        var info = stat()
        guard lstat(url.path, &info) == 0 else { return nil }
        return info.st_mode & S_IFMT
    }

    /// Opens every FIFO in `directory` for writing and closes it again, so a reader blocked in
    /// `open` on one goes on (and reads an end of file), and opens a reader for it, so a blocked
    /// writer goes on too: what frees a thread the watchdog gave up on.
    static func releaseFIFOReaders(in directory: URL) {
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
            let path = directory.appendingPathComponent(name).path
            guard kind(URL(fileURLWithPath: path)) == S_IFIFO else { continue }
            let descriptor = open(path, O_WRONLY | O_NONBLOCK)
            if descriptor >= 0 { close(descriptor) }
            // A writer blocked in `open` waits for a reader: one is opened, once per FIFO, and
            // kept open (only ever in a test that already failed), so its writes cannot fail with
            // EPIPE; what they write stays in the pipe.
            fifoReaders.withLock { readers in
                guard readers[path] == nil else { return }
                let reader = open(path, O_RDONLY | O_NONBLOCK)
                if reader >= 0 { readers[path] = reader }
            }
        }
    }

    /// The readers ``releaseFIFOReaders(in:)`` opened, by path.
    private static let fifoReaders = Locked<[String: Int32]>([:])

    /// Runs `work` on a thread of its own and waits for it at most `limit` (a margin only a real
    /// hang exceeds). Past it, records an issue naming `what`, then keeps calling `release` until
    /// the thread returns, so a hung store call fails the test instead of hanging the suite.
    /// Returns what `work` returned (`nil` only if it never stored it, which cannot happen).
    static func withWatchdog<T: Sendable>(
        _ what: String, limit: Duration = .seconds(120), release: @escaping @Sendable () -> Void,
        sourceLocation: SourceLocation = #_sourceLocation, _ work: @escaping @Sendable () -> T
    ) async -> T? {
        let outcome = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let value = work()
            outcome.withLock { $0 = value }
            done.signal()
        }.start()
        let finished = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            Thread { continuation.resume(returning: done.wait(timeout: .now() + limit.timeInterval) == .success) }.start()
        }
        if !finished {
            Issue.record("\(what) did not return within \(limit): it blocked (on a FIFO?)", sourceLocation: sourceLocation)
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread {
                    while done.wait(timeout: .now() + 0.05) != .success { release() }
                    continuation.resume()
                }.start()
            }
        }
        // The thread stored its value before signalling.
        return outcome.withLock { $0 }
    }

    /// Awaits `work` for at most `limit` (a margin only a hang exceeds); past it, calls `release`
    /// until the work ends and records an issue, so a request blocked on a FIFO fails the test
    /// instead of hanging the run. The clock runs on a thread of its own: requests blocked in
    /// `open` can hold every thread of the concurrency pool (two on two cores).
    static func awaitWithWatchdog<T: Sendable>(
        _ what: String, limit: Duration = .seconds(120), release: @escaping @Sendable () -> Void,
        sourceLocation: SourceLocation = #_sourceLocation, _ work: @escaping @Sendable () async -> T
    ) async -> T? {
        let finished = DispatchSemaphore(value: 0)
        let timedOut = Locked(false)
        Thread {
            guard finished.wait(timeout: .now() + limit.timeInterval) == .timedOut else { return }
            timedOut.withLock { $0 = true }
            while finished.wait(timeout: .now() + 0.02) == .timedOut { release() }
        }.start()
        let value = await work()
        finished.signal()
        if timedOut.withLock({ $0 }) {
            Issue.record("\(what) did not end within \(limit): it blocked (on a FIFO?)", sourceLocation: sourceLocation)
        }
        return value
    }
}
