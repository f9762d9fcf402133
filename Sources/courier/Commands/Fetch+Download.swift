import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// `-o FILE` (and `-C`): streams the body to disk with progress on standard error.
    func download(to output: String, session: Session) async -> ExitCode {
        if let problem = FileChecks.writableDestinationProblem(output) { return fileFailure(problem) }
        let destination = URL(fileURLWithPath: output)
        let store = session.downloadStore
        let onDisk = options.resumable ? keptBytes(store: store) ?? 0 : 0
        if options.verbose, options.resumable {
            console.message("* download store \(store.directory.path): "
                + (onDisk > 0 ? "\(onDisk) bytes of this URL on disk; the request adds Range and If-Range to continue"
                              : "nothing on disk for this URL yet"))
        }
        let request = session.download(options.url, method: method, headers: requestHeaders(),
                                       to: .file(destination, options: [.removePreviousFile]),
                                       resumable: options.resumable, failsOnErrorStatus: options.failOnHTTPError)
        let reporter = ProgressReporter(style: ProgressReporter.styleForStandardError, console: console)
        request.onDownloadProgress(queue: DispatchQueue(label: "courier.progress")) { reporter.update($0) }
        cancelOnInterrupt(request)
        let response = await request.serializingDownloadedFileURL().response
        interrupts.clearHandler()

        guard case .success(let fileURL) = response.result else {
            reporter.stop()
            reportMetrics(response.metrics)
            let error = response.error ?? CourierError(.fileSystem, "The download produced no file.")
            if error.isCancelled, interrupts.wasInterrupted {
                console.message("courier: interrupted; \(keptBytesMessage(store: store))")
                return .interrupted
            }
            let status = fail(with: error)
            // After a lock conflict the partial belongs to the other process; say nothing about it.
            if options.resumable, error.kind != .resumeFailed, let kept = keptBytes(store: store), kept > 0 {
                console.message("courier: \(kept) bytes kept for resume; run the same command again to continue")
            }
            return status
        }
        let size = FileChecks.size(of: fileURL) ?? 0
        let resumed = options.resumable ? ResumeFigures.resumedBytes(response: response.response, metrics: response.metrics, size: size) : 0
        reporter.finish(size: size, resumed: resumed)
        reportMetrics(response.metrics)
        if let code = response.response?.statusCode, code >= 400 {
            console.message("courier: warning: the server answered \(HTTPStatusText.line(code)); its body was saved to \(output) (use --fail to treat this as an error)")
        } else if options.resumable {
            console.message(ResumeFigures.summary(resumed: resumed, size: size, partialBefore: onDisk))
        }
        return .success
    }

    /// The bytes of this URL's partial download in the store, if there is one.
    func keptBytes(store: DownloadStore) -> Int64? {
        store.partialDownloads().first { $0.url.absoluteString == options.url.absoluteString }?.bytesOnDisk
    }

    /// What an interruption left behind: `N bytes kept for resume ...` or `nothing kept`.
    private func keptBytesMessage(store: DownloadStore) -> String {
        guard options.resumable else { return "the partial download was discarded (use -C to keep it)" }
        let kept = keptBytes(store: store) ?? 0
        return "\(kept) bytes kept for resume; run the same command again to continue"
    }
}
