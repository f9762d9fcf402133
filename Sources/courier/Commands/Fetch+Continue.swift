import Courier
import CourierLocking
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension FetchCommand {
    /// `-o FILE` written as the body arrives, as curl writes it: with `-i` (the head goes into the
    /// file first), and with `-C OFFSET` (the body is appended to the file, for `Range:
    /// bytes=OFFSET-`; a server that sends the whole file instead ends the command with curl's 33,
    /// the file untouched).
    func writeStream(to output: String) async -> ExitCode {
        if let problem = prepareDestination(output) { return fileFailure(problem) }
        let appending = options.resumeOffset != nil
        guard let file = OutputFile(path: output, appending: appending) else {
            return fileFailure("cannot write \(output): \(FileChecks.writableDestinationProblem(output) ?? "it cannot be opened")")
        }
        defer { file.close() }
        let request = session.streamRequest(options.url, method: method, headers: requestHeaders())
        let ignoredRange = Locked(false)
        if let offset = options.resumeOffset, offset > 0 {
            request.decideHTTPResponse { response in
                guard (200..<300).contains(response.statusCode), response.statusCode != 206 else { return .allow }
                ignoredRange.withLock { $0 = true }
                return .cancel
            }
        }
        if options.includeHead { context.headRoutes.send(request.id) { file.write(Data($0.utf8)) } }
        defer { context.headRoutes.remove(request.id) }
        return await stream(request, into: file) { failure, response, metrics in
            if ignoredRange.withLock({ $0 }) { return cannotResume(kept: 0) }
            if let failure { return fail(with: failure) }
            _ = response
            _ = metrics
            return nil
        }
    }

    /// `-C -` with nothing in the store for the URL and a partial `FILE` of `size` bytes (written by
    /// curl, or by an earlier run): asks for the rest with `Range: bytes=SIZE-` and `If-Range`
    /// carrying the validator a `-C -` download noted on the file (``DownloadRecord``), else the
    /// file's modification time, which matches the server's `Last-Modified` only when the file was
    /// saved with it (`-R`, and every `-C -` download): either proves the bytes on disk are the
    /// current version's. Then:
    /// - `206` from SIZE: the rest is appended to the file;
    /// - `416` for exactly SIZE bytes: the file is complete, nothing is downloaded;
    /// - the whole file with `Accept-Ranges: bytes` (the version is not proven): nil, and the
    ///   caller downloads it whole through the store, replacing the file;
    /// - the whole file without `Accept-Ranges` (ranges ignored): curl's 33, the file untouched.
    ///
    /// Returns the outcome, or nil when the caller should download the whole file.
    func continueFile(_ output: String, size: Int64) async -> ExitCode? {
        let modified = (try? FileManager.default.attributesOfItem(atPath: output)[.modificationDate]) as? Date
        var headers = requestHeaders(defaults: [HTTPHeader(name: "Range", value: "bytes=\(size)-")])
        if let validator = DownloadRecord.validator(for: output) ?? modified.map(TimeCondition.httpDate) {
            headers.update(name: "If-Range", value: validator)
        }
        headers.update(name: "Accept-Encoding", value: "identity")
        if options.verbose {
            console.message(
                "* continuing \(output) (\(size) bytes) with Range: bytes=\(size)- and If-Range: \(headers.value(for: "If-Range") ?? "-")")
        }
        let request = session.streamRequest(options.url, method: method, headers: headers)
        enum Answer { case rest, complete, whole(acceptsRanges: Bool), other }
        let answer = Locked(Answer.other)
        request.decideHTTPResponse { response in
            let range = response.value(forHTTPHeaderField: "Content-Range")?.trimmingCharacters(in: .whitespaces)
            switch response.statusCode {
            case 206 where ResumeFigures.contentRangeStart(range ?? "") == size:
                answer.withLock { $0 = .rest }
                return .allow
            case 416 where range == "bytes */\(size)":
                answer.withLock { $0 = .complete }
                return .allow
            case 200..<300:
                answer.withLock { $0 = .whole(acceptsRanges: Self.acceptsRanges(response)) }
                return .cancel
            default:
                return .allow
            }
        }
        guard let file = OutputFile(path: output, appending: true) else {
            return fileFailure("cannot write \(output): \(FileChecks.writableDestinationProblem(output) ?? "it cannot be opened")")
        }
        defer { file.close() }
        var wholeFile = false
        let status = await stream(request, into: file, writesBody: { answer.withLock { if case .rest = $0 { true } else { false } } }) {
            failure, response, metrics in
            switch answer.withLock({ $0 }) {
            case .whole(let acceptsRanges):
                guard acceptsRanges else { return cannotResume(kept: size) }
                wholeFile = true
                if options.verbose { console.message("* \(output) is not provably the current version: downloading it whole") }
                return .success
            case .complete:
                message("courier: \(output) is already complete (\(size) bytes); nothing downloaded")
                return .success
            case .rest:
                if let failure { return fail(with: failure) }
                if let response {
                    FileMode.applyLastModified(of: response, to: output)
                    if let validator = DownloadRecord.validator(of: response) { DownloadRecord.write(validator: validator, to: output) }
                }
                if !options.silent { console.message(ResumeFigures.summary(resumed: size, size: size + (metrics?.bytesReceived ?? 0))) }
                return nil
            case .other:
                if let failure { return fail(with: failure) }
                if let code = response?.statusCode, code >= 400, failedStatus(response) == nil {
                    message("courier: warning: the server answered \(HTTPStatusText.line(code)); \(output) was left as it was")
                }
                return nil
            }
        }
        return wholeFile ? nil : status
    }

    /// Reads `request` to its end, writing the body into `file` (while `writesBody` says so);
    /// `outcome` turns the end into a status (nil: success, or `--fail`'s verdict on the status).
    func stream(
        _ request: DataStreamRequest, into file: OutputFile, writesBody: () -> Bool = { true },
        outcome: (CourierError?, HTTPURLResponse?, TransferMetrics?) -> ExitCode?
    ) async -> ExitCode {
        prepare(request)
        var iterator = request.streamingData().makeAsyncIterator()
        var failure: CourierError?
        var written: Int64 = 0
        do throws(CourierError) {
            while let chunk = try await iterator.next() {
                guard writesBody() else { continue }
                guard file.write(chunk) else {
                    request.cancel()
                    failure = CourierError(.fileSystem, "Failure writing output to destination")
                    break
                }
                written += Int64(chunk.count)
            }
        } catch {
            failure = error
        }
        interrupts.clearHandler(slot: index)
        let metrics = await request.metrics
        let response = await request.response
        let lastURL = await request.lastRequest?.url
        reportMetrics(metrics)
        if failure?.kind == .fileSystem, !(failure?.isCancelled ?? false) {
            return finish(fileFailure("cannot write \(options.output ?? "the file")"), response: response, metrics: metrics, bodyBytes: written)
        }
        let status = outcome(failure, response, metrics) ?? failedStatus(response) ?? .success
        return finish(status, response: response, metrics: metrics, bodyBytes: written, lastURL: lastURL, error: failure)
    }
}

/// A file `courier` writes as the body arrives (`-i -o`, `-C OFFSET`, a continued `-C -` file):
/// created with mode 0644 minus the umask, truncated, or opened to append.
final class OutputFile: Sendable {
    // Guards the handle: the head printer (on the request's executor) and the body loop both write.
    private let handle: Locked<FileHandle?>

    /// Opens `path` (``OutputPath/openForWriting(_:appending:)``); nil when it cannot be.
    init?(path: String, appending: Bool) {
        guard let handle = OutputPath.openForWriting(path, appending: appending) else { return nil }
        self.handle = Locked(handle)
    }

    /// Appends `data`; false when it could not be written.
    @discardableResult
    func write(_ data: Data) -> Bool {
        handle.withLock { handle in
            guard let handle else { return false }
            do {
                try handle.write(contentsOf: data)
                return true
            } catch {
                return false
            }
        }
    }

    /// Closes the file.
    func close() {
        handle.withLock { handle in
            try? handle?.close()
            handle = nil
        }
    }
}
