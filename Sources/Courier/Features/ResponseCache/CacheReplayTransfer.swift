import Foundation

/// A "transfer" that answers from the response cache: it replays a stored head and body into the
/// request's sink, so validators, serializers, progress and monitors see exactly what they would
/// see from the network.
final class CacheReplayTransfer: TransportTransfer {
    init(_ stored: CachedResponse, url: URL, sink: any TransportEventSink) {
        let head = ResponseHead(statusCode: stored.statusCode, fields: stored.headers.map { (name: $0.name, value: $0.value) },
                                url: url, httpVersion: "HTTP/1.1")
        sink.receive(.response(head))
        if !stored.data.isEmpty { sink.receive(.body(stored.data)) }
        var metrics = TransferMetrics(bytesReceived: Int64(stored.data.count), transport: "cache")
        metrics.source = .cache
        sink.receive(.completed(error: nil, metrics: metrics))
    }

    func suspend() {}
    func resume() {}
    func cancel() {}
    func acknowledge(_ bytes: Int) {}
}
