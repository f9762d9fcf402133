import Courier
import CourierTestServer
import Foundation

extension Demo {
    /// Step 3: a resumable download that the server pauses at 3 MiB, is cancelled there, and is
    /// then resumed from the bytes on disk; the server's byte counter proves nothing was fetched twice.
    @Sendable static func resumeStep(_ context: DemoContext) async -> Bool {
        let size: Int64 = 8 << 20
        let pauseAt: Int64 = 3 << 20
        let seed: UInt64 = 2024
        let path = "/files/demo.bin"
        let gate = Gate()
        context.server.route(
            path,
            Resource(pattern: size, seed: seed, etag: "\"demo-v1\"")
                .throttle(bytes: 128 << 10, every: .milliseconds(25))
                .pausing(afterBytes: pauseAt, until: gate))
        let store = DownloadStore(directory: context.workspace.appendingPathComponent("store", isDirectory: true))
        let session = makeSession(store: store)
        let url = context.server.url(path)
        let destination = context.workspace.appendingPathComponent("demo.bin")
        let started = ContinuousClock.now

        // First attempt: runs until the server holds the body at 3 MiB, then is cancelled there.
        let firstReporter = ProgressReporter(style: ProgressReporter.styleForStandardError, console: context.console)
        let first = session.download(url, to: .file(destination, options: [.removePreviousFile]), resumable: true)
        let reachedPause = await watch(first.downloadProgress, until: pauseAt, reporter: firstReporter, timeout: .seconds(10))
        first.cancel()
        let firstResponse = await first.serializingDownloadedFileURL().response
        firstReporter.stop()
        _ = try? await context.server.waitForClientDisconnect(path: path, timeout: .seconds(5))
        let kept = store.partialDownloads().first { $0.url == url }?.bytesOnDisk ?? 0
        let sentBeforeResume = context.server.bytesSent(path: path)
        context.say(
            "GET \(path) (\(Units.bytes(size))): cancelled at \(Units.bytes(kept)) "
                + "(\(firstResponse.error.map { ".\($0.kind)" } ?? "no error")); the store keeps \(kept) bytes on disk")
        gate.open()

        // Second attempt: the same download continues from the partial with Range + If-Range.
        let secondReporter = ProgressReporter(style: ProgressReporter.styleForStandardError, console: context.console)
        let second = session.download(url, to: .file(destination, options: [.removePreviousFile]), resumable: true)
            .onDownloadProgress(queue: DispatchQueue(label: "courier.demo.progress")) { secondReporter.update($0) }
        let response = await second.serializingDownloadedFileURL().response
        guard case .success(let fileURL) = response.result else {
            secondReporter.stop()
            context.say("the resumed download failed: \(response.error?.description ?? "no file")")
            return false
        }
        let fileSize = FileChecks.size(of: fileURL) ?? 0
        let resumed = ResumeFigures.resumedBytes(response: response.response, metrics: response.metrics, size: fileSize)
        secondReporter.finish(size: fileSize, resumed: resumed)
        let sentTotal = context.server.bytesSent(path: path)
        let exact = PatternCheck.fileMatches(fileURL, count: size, seed: seed)
        let elapsed = (ContinuousClock.now - started).seconds
        context.say(
            "resumed: \(HTTPStatusText.line(response.response?.statusCode ?? 0)) with "
                + "Content-Range \(response.response?.value(forHTTPHeaderField: "Content-Range") ?? "-")")
        context.say(
            "re-used \(resumed) bytes from disk, fetched \(fileSize - resumed) bytes "
                + "(the server sent \(sentBeforeResume) before the interruption and \(sentTotal - sentBeforeResume) after)")
        context.say("the server sent \(sentTotal) bytes in all for a file of \(fileSize) bytes, in \(Units.elapsed(elapsed))")
        context.say(exact ? "the file matches the source byte for byte" : "the file does NOT match the source")
        return reachedPause && exact && fileSize == size && resumed == kept && resumed > 0 && sentTotal == size
    }

    /// Shows progress from `stream` until it reaches `target` bytes; false if it does not within `timeout`.
    static func watch(
        _ stream: AsyncStream<TransferProgress>, until target: Int64, reporter: ProgressReporter,
        timeout: Duration
    ) async -> Bool {
        await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await progress in stream {
                    reporter.update(progress)
                    if progress.completedUnitCount >= target { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let reached = await group.next() ?? false
            group.cancelAll()
            return reached
        }
    }
}
