import Foundation

extension RequestEngine {
    /// The size limit on this request's body, or `nil` when there is none.
    var bodySizeLimit: BodySizeLimit? {
        // Fields read through `session.configuration`, not a local copy of it: a copy of the whole
        // configuration costs a retain and a release of each of its references, on every request.
        switch sink.kind.sizeLimitClass {
        case .memory:
            let bytes = limitOverrides.maximumResponseSize ?? session.configuration.maximumResponseSize
            return bytes.map { BodySizeLimit(bytes: Int64($0), setting: "maximumResponseSize") }
        case .download:
            let bytes = limitOverrides.maximumDownloadSize ?? session.configuration.maximumDownloadSize
            return bytes.map { BodySizeLimit(bytes: $0, setting: "maximumDownloadSize") }
        case .unlimited:
            return nil
        }
    }

    /// The minimum transfer rate in force for this request.
    var minimumTransferRate: MinimumTransferRate? {
        limitOverrides.minimumTransferRate ?? session.configuration.minimumTransferRate
    }

    /// The decompression ratio in force for this request.
    var maximumDecompressionRatio: Int? {
        limitOverrides.maximumDecompressionRatio ?? session.configuration.maximumDecompressionRatio
    }

    /// The failure for a head whose announced body (`total`, from offset 0; -1 when unknown) is over the limit.
    func sizeLimitFailure(announcedTotal total: Int64, head: ResponseHead) -> CourierError? {
        guard let limit = bodySizeLimit, total > limit.bytes else { return nil }
        return limit.failure(announced: total, head: head)
    }

    /// The failure when `seen` body bytes (from offset 0, counting the chunk that just arrived) are over the limit.
    func sizeLimitFailure(seen: Int64, head: ResponseHead?) -> CourierError? {
        guard let limit = bodySizeLimit, seen > limit.bytes else { return nil }
        return limit.failure(seen: seen, head: head)
    }
}

extension Request {
    /// Limits this request's in-memory response body to `bytes` decoded bytes, instead of the
    /// session's ``SessionConfiguration/maximumResponseSize``; `nil` lifts the limit.
    ///
    /// A body that grows past it stops the transfer at once and fails with `.responseTooLarge`;
    /// a `Content-Length` above it fails at the head, before any body byte is read. Streams
    /// (`streamRequest`) have no size limit; downloads have ``DownloadRequest/maximumDownloadSize(_:)``.
    @discardableResult
    public nonisolated func maximumResponseSize(_ bytes: Int?) -> Self {
        engineAccess.perform { $0.limitOverrides.maximumResponseSize = .some(bytes.map { max(0, $0) }) }
        return self
    }

    /// Fails this request with `.responseTooLarge` when its compressed body decodes to more than
    /// `ratio` bytes per byte received (checked once 1 MiB has been decoded), instead of the
    /// session's ``SessionConfiguration/maximumDecompressionRatio``; `nil` turns the check off for
    /// this request. Applies to every kind of request: in-memory, downloads and streams.
    @discardableResult
    public nonisolated func maximumDecompressionRatio(_ ratio: Int?) -> Self {
        engineAccess.perform { $0.limitOverrides.maximumDecompressionRatio = .some(ratio.map { max(1, $0) }) }
        return self
    }

    /// Fails this request with `.timedOut` when it moves fewer than `rate.bytesPerSecond` over
    /// `rate.window`, instead of the session's ``SessionConfiguration/minimumTransferRate``;
    /// `nil` turns the check off for this request.
    @discardableResult
    public nonisolated func minimumTransferRate(_ rate: MinimumTransferRate?) -> Self {
        engineAccess.perform { $0.limitOverrides.minimumTransferRate = .some(rate) }
        return self
    }
}

extension RequestEngine {
    /// The failure for a head with more fields or more bytes than the session allows.
    func headLimitFailure(_ head: ResponseHead) -> CourierError? {
        if let maximum = session.configuration.maximumResponseHeaderCount {
            // Every line counts: `fields` keeps each one, repeated names included.
            let count = head.fields.count
            if count > maximum {
                return CourierError(
                    .responseTooLarge,
                    "The response head has \(count) header fields, more than "
                        + "maximumResponseHeaderCount (\(maximum)) allows.", responseCode: head.statusCode, url: head.url)
            }
        }
        if let maximum = session.configuration.maximumResponseHeadSize {
            let size = head.fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
            if size > maximum {
                return CourierError(
                    .responseTooLarge,
                    "The response head has \(size) bytes of header fields, more than "
                        + "maximumResponseHeadSize (\(BodySizeLimit.format(Int64(maximum)))) allows.",
                    responseCode: head.statusCode, url: head.url)
            }
        }
        return nil
    }
}

extension RequestEngine {
    /// The failure for a trailer section with more fields or more bytes than the session allows
    /// a head (``SessionConfiguration/maximumResponseHeaderCount``, ``SessionConfiguration/maximumResponseHeadSize``).
    func trailerLimitFailure(_ trailers: HTTPHeaders, head: ResponseHead?) -> CourierError? {
        if let maximum = session.configuration.maximumResponseHeaderCount, trailers.count > maximum {
            return CourierError(
                .responseTooLarge,
                "The response's trailer section has \(trailers.count) fields, more than maximumResponseHeaderCount (\(maximum)) allows.",
                responseCode: head?.statusCode, url: head?.url)
        }
        let size = trailers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 }
        if let maximum = session.configuration.maximumResponseHeadSize, size > maximum {
            return CourierError(
                .responseTooLarge,
                "The response's trailer section has \(size) bytes of fields, more than "
                    + "maximumResponseHeadSize (\(BodySizeLimit.format(Int64(maximum)))) allows.",
                responseCode: head?.statusCode, url: head?.url)
        }
        return nil
    }
}
