import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// `-o FILE`/`-O` (and `-C -`): streams the body to disk, with a progress bar when standard
    /// error is a terminal (nothing otherwise, and nothing with `-s`).
    ///
    /// With `-C -`, the bytes are kept in the download store as they arrive and a later run
    /// continues from them with `Range` and `If-Range`. A server that answers that with the whole
    /// file and no `Accept-Ranges: bytes` ignores ranges: the command stops with curl's 33 ("Cannot
    /// resume") and keeps the partial. When the store has nothing for the URL but `FILE` exists, the
    /// file itself is continued (see ``continueFile(_:size:)``).
    func download(to output: String) async -> ExitCode {
        if let problem = prepareDestination(output) { return fileFailure(problem) }
        let destination = URL(fileURLWithPath: output)
        let store = session.downloadStore
        let partial = options.resumable ? keptPartial(store: store) : nil
        let onDisk = partial?.bytesOnDisk ?? 0
        if options.verbose, options.resumable {
            console.message(
                "* download store \(store.directory.path): "
                    + (onDisk > 0
                        ? "\(onDisk) bytes of this URL on disk; the request adds Range and If-Range to continue"
                        : "nothing on disk for this URL yet"))
        }
        if options.resumable, onDisk == 0, let size = FileChecks.size(of: destination), size > 0 {
            if let outcome = await continueFile(output, size: size) { return outcome }
        }
        let resuming = onDisk > 0 && partial?.validator != nil
        let destinationChoice: DownloadDestination =
            options.remoteHeaderName
            ? .directory(destination.deletingLastPathComponent(), options: [])
            : .file(destination, options: [.removePreviousFile])
        let request = session.download(
            options.url, method: method, headers: requestHeaders(), to: destinationChoice,
            resumable: options.resumable, failsOnErrorStatus: false)
        let ignoredRange = Locked(false)
        if resuming {
            // Before the store drops its partial for a whole new body: a server that ignores ranges says so.
            request.decideHTTPResponse { response in
                guard (200..<300).contains(response.statusCode), response.statusCode != 206, !Self.acceptsRanges(response) else { return .allow }
                ignoredRange.withLock { $0 = true }
                return .cancel
            }
        }
        prepare(request)
        let reporter = ProgressReporter(style: progressStyle, console: console)
        request.onDownloadProgress(queue: DispatchQueue(label: "courier.progress")) { reporter.update($0) }
        let response = await request.serializingDownloadedFileURL().response
        interrupts.clearHandler(slot: index)

        guard case .success(let fileURL) = response.result else {
            reporter.stop()
            reportMetrics(response.metrics)
            let error = response.error ?? CourierError(.fileSystem, "The download produced no file.")
            if ignoredRange.withLock({ $0 }) {
                return finish(cannotResume(kept: onDisk), response: response.response, metrics: response.metrics, bodyBytes: 0)
            }
            if error.isCancelled, interrupts.wasInterrupted {
                message("courier: interrupted; \(keptBytesMessage(store: store))")
                return finish(.interrupted, response: response.response, metrics: response.metrics, bodyBytes: 0)
            }
            if options.remoteHeaderName, error.kind == .fileSystem, error.message.contains("already exists") {
                // As curl: -J never replaces a file (the library's hint names its API, not the option).
                let sentence = error.message.replacingOccurrences(of: " (use .removePreviousFile).", with: "")
                message("courier: (23) \(sentence): -J does not replace a file")
                return finish(.writeError, response: response.response, metrics: response.metrics, bodyBytes: 0, error: error)
            }
            let status = fail(with: error)
            // After a lock conflict the partial belongs to the other process; say nothing about it.
            if options.resumable, error.kind != .resumeFailed, let kept = keptPartial(store: store)?.bytesOnDisk, kept > 0 {
                message("courier: \(kept) bytes kept for resume; run the same command again to continue")
            }
            return finish(status, response: response.response, metrics: response.metrics, bodyBytes: 0, error: error)
        }
        FileMode.applyDefault(to: fileURL)
        let size = FileChecks.size(of: fileURL) ?? 0
        let resumed = options.resumable ? ResumeFigures.resumedBytes(response: response.response, metrics: response.metrics, size: size) : 0
        reporter.finish(size: size, resumed: resumed)
        reportMetrics(response.metrics)
        if options.resumable, let response = response.response {
            // So that a later -C - can prove, with If-Range, that the file is the server's current version.
            FileMode.applyLastModified(of: response, to: fileURL.path)
            if let validator = DownloadRecord.validator(of: response) { DownloadRecord.write(validator: validator, to: fileURL.path) }
        }
        if let code = response.response?.statusCode, code >= 400 {
            if let failed = failedStatus(response.response) {
                return finish(failed, response: response.response, metrics: response.metrics, bodyBytes: size - resumed)
            }
            message(
                "courier: warning: the server answered \(HTTPStatusText.line(code)); its body was saved to \(fileURL.path) (use --fail to treat this as an error)"
            )
        } else if options.resumable, !options.silent {
            console.message(ResumeFigures.summary(resumed: resumed, size: size, partialBefore: onDisk))
        }
        var finished = options
        finished.output = fileURL.path
        return FetchCommand(options: finished, session: session, context: context, interrupts: interrupts, console: console, index: index)
            .finish(.success, response: response.response, metrics: response.metrics, bodyBytes: size - resumed)
    }

    /// The progress style: a bar on a terminal, nothing with `-s` or `--no-progress-meter`, nor
    /// for transfers running side by side (`-Z`), whose bars would share one line.
    var progressStyle: ProgressReporter.Style {
        options.silent || options.noProgress || (options.parallel && options.targets.count > 1) ? .silent : ProgressReporter.styleForStandardError
    }

    /// Whether the response says the server serves byte ranges (`Accept-Ranges: bytes`).
    static func acceptsRanges(_ response: HTTPURLResponse) -> Bool {
        response.value(forHTTPHeaderField: "Accept-Ranges")?.lowercased().split(separator: ",")
            .contains { $0.trimmingCharacters(in: .whitespaces) == "bytes" } ?? false
    }

    /// curl's 33: the server sent the whole file to a request for the rest of it.
    func cannotResume(kept: Int64) -> ExitCode {
        message(
            "courier: (33) HTTP server doesn't seem to support byte ranges. Cannot resume."
                + (kept > 0 ? " (\(kept) bytes kept; nothing was overwritten)" : ""))
        return .cannotResume
    }

    /// With `--create-dirs`, makes the directories `output` needs; then why `output` cannot be
    /// written, or nil.
    func prepareDestination(_ output: String) -> String? {
        let parent = URL(fileURLWithPath: output).deletingLastPathComponent()
        if options.createDirectories, !FileManager.default.fileExists(atPath: parent.path) {
            do {
                try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
            } catch {
                return "cannot create the directory \(parent.path): \(error.localizedDescription)"
            }
        }
        return FileChecks.writableDestinationProblem(output)
    }

    /// This URL's partial download in the store, if there is one.
    func keptPartial(store: DownloadStore) -> PartialDownload? {
        store.partialDownloads().first { $0.url.absoluteString == options.url.absoluteString }
    }

    /// What an interruption left behind: `N bytes kept for resume ...` or `nothing kept`.
    private func keptBytesMessage(store: DownloadStore) -> String {
        guard options.resumable else { return "the partial download was discarded (use -C - to keep it)" }
        let kept = keptPartial(store: store)?.bytesOnDisk ?? 0
        return "\(kept) bytes kept for resume; run the same command again to continue"
    }
}
