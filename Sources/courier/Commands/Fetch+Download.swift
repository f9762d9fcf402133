import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// `-o FILE`/`-O` (and `-C`): streams the body to disk, with a progress bar when standard
    /// error is a terminal (nothing otherwise, and nothing with `-s`).
    func download(to output: String, session: Session) async -> ExitCode {
        if let problem = FileChecks.writableDestinationProblem(output) { return fileFailure(problem) }
        let destination = URL(fileURLWithPath: output)
        let store = session.downloadStore
        let onDisk = options.resumable ? keptBytes(store: store) ?? 0 : 0
        if options.verbose, options.resumable {
            console.message(
                "* download store \(store.directory.path): "
                    + (onDisk > 0
                        ? "\(onDisk) bytes of this URL on disk; the request adds Range and If-Range to continue"
                        : "nothing on disk for this URL yet"))
        }
        if options.resumable, onDisk == 0, let size = FileChecks.size(of: destination), size > 0,
            let probe = await completeFileProbe(size: size, session: session)
        {
            if options.verbose { console.message("* \(output) already holds all \(size) bytes (the server answered 416 to bytes=\(size)-)") }
            message("courier: \(output) is already complete (\(size) bytes); nothing downloaded")
            return finish(.success, response: probe.response, metrics: probe.metrics, bodyBytes: 0)
        }
        let request = session.download(
            options.url, method: method, headers: requestHeaders(),
            to: .file(destination, options: [.removePreviousFile]),
            resumable: options.resumable, failsOnErrorStatus: false)
        if let acceptable = acceptableStatusCodes { request.validate(statusCode: acceptable) }
        let reporter = ProgressReporter(style: options.silent ? .silent : ProgressReporter.styleForStandardError, console: console)
        request.onDownloadProgress(queue: DispatchQueue(label: "courier.progress")) { reporter.update($0) }
        cancelOnInterrupt(request)
        let response = await request.serializingDownloadedFileURL().response
        interrupts.clearHandler()

        guard case .success(let fileURL) = response.result else {
            reporter.stop()
            reportMetrics(response.metrics)
            let error = response.error ?? CourierError(.fileSystem, "The download produced no file.")
            if error.isCancelled, interrupts.wasInterrupted {
                message("courier: interrupted; \(keptBytesMessage(store: store))")
                return finish(.interrupted, response: response.response, metrics: response.metrics, bodyBytes: 0)
            }
            let status = fail(with: error)
            // After a lock conflict the partial belongs to the other process; say nothing about it.
            if options.resumable, error.kind != .resumeFailed, let kept = keptBytes(store: store), kept > 0 {
                message("courier: \(kept) bytes kept for resume; run the same command again to continue")
            }
            return finish(status, response: response.response, metrics: response.metrics, bodyBytes: 0, error: error)
        }
        FileMode.applyDefault(to: fileURL)
        let size = FileChecks.size(of: fileURL) ?? 0
        let resumed = options.resumable ? ResumeFigures.resumedBytes(response: response.response, metrics: response.metrics, size: size) : 0
        reporter.finish(size: size, resumed: resumed)
        reportMetrics(response.metrics)
        if let code = response.response?.statusCode, code >= 400 {
            message(
                "courier: warning: the server answered \(HTTPStatusText.line(code)); its body was saved to \(output) (use --fail to treat this as an error)"
            )
        } else if options.resumable, !options.silent {
            console.message(ResumeFigures.summary(resumed: resumed, size: size, partialBefore: onDisk))
        }
        return finish(.success, response: response.response, metrics: response.metrics, bodyBytes: size - resumed)
    }

    /// With `-C` and an output file of `size` bytes that the store knows nothing about: asks for
    /// the bytes after `size`, as `curl -C -` does. A 416 whose `Content-Range` says the resource
    /// has exactly `size` bytes means the file is complete (returned); anything else is cancelled
    /// at once and nil returned, and the download goes ahead.
    private func completeFileProbe(size: Int64, session: Session) async -> (response: HTTPURLResponse?, metrics: TransferMetrics?)? {
        let headers = requestHeaders(defaults: [HTTPHeader(name: "Range", value: "bytes=\(size)-")])
        // A session of its own, without -v and -i: the probe's heads are not the download's.
        let probeSession = Session(configuration: session.configuration, headers: session.headers)
        let probe = probeSession.streamRequest(options.url, method: method, headers: headers)
        var iterator = probe.streamingData().makeAsyncIterator()
        do throws(CourierError) {
            _ = try await iterator.next()
        } catch {
            // Whatever went wrong, the download itself will meet it and report it.
        }
        let response = await probe.response
        probe.cancel()
        guard response?.statusCode == 416, let range = response?.value(forHTTPHeaderField: "Content-Range"),
            range.trimmingCharacters(in: .whitespaces) == "bytes */\(size)"
        else { return nil }
        return (response, await probe.metrics)
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
