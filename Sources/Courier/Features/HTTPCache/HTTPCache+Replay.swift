import Foundation

extension HTTPCache {
    /// Fields a `416` built from a stored response keeps: what describes the representation as a
    /// whole (its validators and freshness), none of what describes a body.
    static let unsatisfiableKeptFields = ["Date", "ETag", "Last-Modified", "Cache-Control", "Expires", "Vary"]

    /// A replay of `entry` as ``HTTPCacheRules/rangeAnswer(method:requestHeaders:entry:storedLength:)``
    /// answered: the stored response as it is; a `206` with the bytes asked for and their
    /// `Content-Range` (RFC 9110 §14.4), built from the stored body; or a `416` with
    /// `Content-Range: bytes */length` (§15.5.17). `.network` never reaches here.
    static func replay(
        _ entry: StoredEntry, answer: RangeAnswer, url: URL, sink: any TransportEventSink, flowControlWindow: Int,
        source: ResponseSource, includingBody: Bool, age: Int, networkMetrics: TransferMetrics? = nil
    ) -> CacheReplayTransfer {
        var served = entry
        var bodyRange: Range<Int64>?
        switch answer {
        case .whole, .network:
            break
        case .partial(let bytes, let completeLength, let storedFrom):
            served.head.statusCode = 206
            served.head.headers.update(
                name: "Content-Range", value: ContentRange(first: bytes.lowerBound, last: bytes.upperBound, completeLength: completeLength).fieldValue
            )
            bodyRange = (bytes.lowerBound - storedFrom)..<(bytes.upperBound - storedFrom + 1)
        case .unsatisfiable(let completeLength):
            var headers = HTTPHeaders()
            for name in unsatisfiableKeptFields { if let value = entry.head.headers[name] { headers.add(name: name, value: value) } }
            headers.add(name: "Content-Range", value: "bytes */\(completeLength)")
            served.head.statusCode = 416
            served.head.headers = headers
            served.body = .data(Data())
        }
        return CacheReplayTransfer(
            served, url: url, sink: sink, flowControlWindow: flowControlWindow, source: source, includingBody: includingBody,
            age: age, networkMetrics: networkMetrics, bodyRange: bodyRange)
    }
}
