import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The body sink of a resumable download: bytes go to the store's `.part` file as they arrive,
/// a journal records how many are durable, and the next download of the same URL continues
/// from there with `Range` + `If-Range`.
///
/// - 206 continues only if `Content-Range` starts where we asked and agrees with the recorded total;
///   otherwise the partial is dropped and the request starts over.
/// - 200 (no range, or the validator changed) starts over.
/// - 416 means "complete" only if the journal says the partial already has every byte.
/// - Any other status leaves the partial untouched; its body goes to a scratch file.
final class StoreBodySink: ResponseBodySink {
    private enum Target {
        case none
        case partial(FileWriter)
        case complete
        case scratch(FileBodySink)
    }

    let store: DownloadStore
    let destination: DownloadDestination
    let temporaryDirectory: URL
    let integrity: DownloadIntegrity?
    /// The request using this sink, for `activeDownload(for:)`.
    weak var request: DownloadRequest?

    private var entry: DownloadStore.Entry?
    private var target = Target.none
    /// Where the current exchange's `Range` starts (0 when none was sent).
    private var requestedOffset: Int64 = 0
    private var lastCheckpoint = (length: Int64(0), at: ContinuousClock.now)
    /// The length the partial may reach in this exchange: the end of a 206's `Content-Range`
    /// (plus one), or the announced total; `nil` when nothing was announced.
    private var partialLimit: Int64?
    private var finalURL: URL?

    init(store: DownloadStore, destination: DownloadDestination, temporaryDirectory: URL, integrity: DownloadIntegrity?) {
        self.store = store
        self.destination = destination
        self.temporaryDirectory = temporaryDirectory
        self.integrity = integrity
    }

    deinit {
        releaseEntry()
    }

    var kind: BodyKind { .resumableStore }

    // MARK: - Exchanges

    func prepareExchange(_ request: URLRequest, headers: inout HTTPHeaders) throws {
        if entry == nil, let url = request.url {
            entry = try store.open(url: url, method: request.method)
            store.markActive(self.request, url: url)
        }
        headers.update(name: "Accept-Encoding", value: "identity")
        requestedOffset = 0
        guard let entry, let journal = entry.journal, let validator = journal.validator else { return }
        let offset = currentLength(of: entry)
        guard offset > 0 else { return }
        headers.update(name: "Range", value: "bytes=\(offset)-")
        headers.update(name: "If-Range", value: validator)
        requestedOffset = offset
    }

    func begin(_ head: ResponseHead, method: HTTPMethod) throws -> BodyDisposition {
        closeTarget()
        guard let entry else { return try beginScratch(head, method: method) }
        switch head.statusCode {
        case 206 where requestedOffset > 0:
            let recordedTotal = entry.journal?.expectedLength
            guard let range = head.contentRange, range.start == requestedOffset,
                recordedTotal == nil || range.total == nil || range.total == recordedTotal,
                range.total.map({ range.end < $0 }) ?? true, recordedTotal.map({ range.end < $0 }) ?? true,
                !head.contradicts(entry.journal),
                // The partial still holds the bytes the request asked to continue (it is a kept
                // file, and no one cut it since).
                entry.partSize >= requestedOffset
            else {
                try entry.reset()
                return .restart
            }
            let writer = try FileWriter(url: entry.partURL, truncatingTo: requestedOffset, what: "the download's partial file")
            if entry.journal?.expectedLength == nil, let total = range.total { entry.journal?.expectedLength = total }
            target = .partial(writer)
            partialLimit = range.end + 1
            lastCheckpoint = (writer.length, .now)
            return .store(offset: requestedOffset, total: entry.journal?.expectedLength ?? -1)
        case 416 where requestedOffset > 0:
            let total = head.unsatisfiedRangeTotal
            if let recorded = entry.journal?.expectedLength, recorded == requestedOffset, total == nil || total == recorded {
                target = .complete
                return .alreadyComplete(total: recorded)
            }
            try entry.reset()
            return .restart
        case 200..<300:
            try entry.reset()
            let expected = head.hasNoBody(for: method) ? 0 : head.expectedContentLength
            entry.journal = DownloadJournal(
                url: entry.url.absoluteString, method: entry.method.rawValue,
                etag: head.strongETag, lastModified: head.headers["Last-Modified"],
                expectedLength: expected >= 0 ? expected : nil, durableLength: 0,
                bootID: BootIdentity.current, createdAt: Date(), updatedAt: Date())
            try entry.saveJournal()
            let writer = try FileWriter(url: entry.partURL, truncatingTo: 0, what: "the download's partial file")
            target = .partial(writer)
            partialLimit = expected >= 0 ? expected : nil
            lastCheckpoint = (0, .now)
            return .store(offset: 0, total: expected)
        default:
            return try beginScratch(head, method: method)
        }
    }

    private func beginScratch(_ head: ResponseHead, method: HTTPMethod) throws -> BodyDisposition {
        let scratch = FileBodySink(destination: destination, temporaryDirectory: temporaryDirectory)
        target = .scratch(scratch)
        return try scratch.begin(head, method: method)
    }

    func append(_ data: Data, from transfer: any TransportTransfer) throws {
        switch target {
        case .partial(let writer):
            try checkWithinAnnouncedRange(writer.length + Int64(data.count))
            try writer.write(data)
            transfer.acknowledge(data.count)
            if writer.length - lastCheckpoint.length >= store.checkpointBytes || ContinuousClock.now - lastCheckpoint.at >= .seconds(1) {
                checkpoint(writer)
            }
        case .scratch(let scratch):
            try scratch.append(data, from: transfer)
        case .none, .complete:
            transfer.acknowledge(data.count)
        }
    }

    /// Fails (leaving the partial as it was before this chunk) when the body runs past what the
    /// response announced: a 206 longer than its `Content-Range`, or a body longer than the total.
    private func checkWithinAnnouncedRange(_ length: Int64) throws {
        guard let limit = partialLimit, length > limit else { return }
        throw CourierError(
            .invalidResponse, "The response body runs past the announced range: \(length) bytes where the download has \(limit).",
            url: entry?.url)
    }

    /// Makes the written bytes durable, then records them: the journal never counts more than the disk holds.
    private func checkpoint(_ writer: FileWriter) {
        writer.synchronize()
        lastCheckpoint = (writer.length, .now)
        guard let entry, entry.journal != nil else { return }
        entry.journal?.durableLength = writer.length
        entry.journal?.bootID = BootIdentity.current
        entry.journal?.updatedAt = Date()
        try? entry.saveJournal()
    }

    // MARK: - Outcome

    var body: RequestCompletion.Body {
        if case .scratch(let scratch) = target { return scratch.body }
        return .file(finalURL ?? entry?.partURL)
    }

    var cancelledBody: RequestCompletion.Body { .file(nil) }

    func finalize(response: LazyHTTPResponse?) throws -> RequestCompletion.Body {
        if case .scratch(let scratch) = target {
            defer { releaseEntry() }
            return try scratch.finalize(response: response)
        }
        guard let entry else { return .file(nil) }
        if case .partial(let writer) = target {
            writer.synchronize()
            writer.close()
            // A resumed file is delivered only when it is exactly the announced total; a short one
            // stays in the store for the next attempt.
            if let total = entry.journal?.expectedLength, writer.length != total {
                if writer.length > total { try? entry.reset() } else { checkpoint(writer) }
                target = .none
                releaseEntry()
                throw CourierError(.invalidResponse, "The download has \(writer.length) bytes where the resource has \(total).", url: entry.url)
            }
        }
        do {
            try integrity?.verify(entry.partURL)
        } catch {
            // A file that fails its check is never delivered, and never resumed from either.
            try? entry.reset()
            releaseEntry()
            throw error
        }
        let (destinationURL, options) = try destination.resolve(temporaryURL: entry.partURL, response: response?.httpResponse, requestURL: entry.url)
        try moveDownload(entry.partURL, to: destinationURL, options: options)
        entry.removeJournal()
        finalURL = destinationURL
        target = .none
        releaseEntry()
        return .file(destinationURL)
    }

    /// Keeps the partial for the next attempt (a cancel or a failure is exactly when resuming matters).
    func discard() {
        switch target {
        case .partial(let writer):
            checkpoint(writer)
            writer.close()
        case .scratch(let scratch):
            scratch.discard()
        case .none, .complete:
            break
        }
        target = .none
        releaseEntry()
    }

    private func closeTarget() {
        if case .partial(let writer) = target { checkpoint(writer); writer.close() }
        if case .scratch(let scratch) = target { scratch.discard() }
        target = .none
        partialLimit = nil
    }

    private func releaseEntry() {
        guard let entry else { return }
        store.markInactive(url: entry.url)
        // The lock file goes too: a finished download leaves nothing in the store, and a kept
        // partial is found by its journal (the next run makes a new lock file).
        entry.lock.releaseRemovingFile()
        self.entry = nil
    }

    /// The bytes of the partial that can be trusted: within the boot that wrote them, everything
    /// `write()` accepted; after a reboot, only what the journal recorded as durable.
    private func currentLength(of entry: DownloadStore.Entry) -> Int64 {
        if case .partial(let writer) = target { return writer.length }
        guard let journal = entry.journal else { return 0 }
        let size = entry.partSize
        return journal.bootID == BootIdentity.current ? size : min(size, journal.durableLength)
    }
}

extension ResponseHead {
    /// A strong ETag (weak ones cannot be used in `If-Range`).
    var strongETag: String? {
        guard let etag = headers["ETag"], !etag.hasPrefix("W/") else { return nil }
        return etag
    }

    /// The total in a 416's `Content-Range: bytes */total`.
    var unsatisfiedRangeTotal: Int64? {
        guard let value = headers["Content-Range"], let slash = value.lastIndex(of: "/") else { return nil }
        return Int64(value[value.index(after: slash)...].trimmingCharacters(in: .whitespaces))
    }

    /// Whether this response's validators say the resource is not the one the journal recorded.
    func contradicts(_ journal: DownloadJournal?) -> Bool {
        guard let journal else { return false }
        if let recorded = journal.etag, let etag = strongETag, etag != recorded { return true }
        if journal.etag == nil, let recorded = journal.lastModified, let modified = headers["Last-Modified"], modified != recorded { return true }
        return false
    }
}
