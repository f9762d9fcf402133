import Foundation
import CourierLocking

/// A "transfer" that answers from the response cache: it replays a stored head and body into the
/// request's sink, so validators, serializers, progress and monitors see exactly what they would
/// see from the network.
///
/// It keeps the transport contract (see ``Transport``): a body in memory no larger than the
/// flow-control window is delivered at once, as the transfer starts; any other body (a body file,
/// however large) is read and delivered in pieces on a queue of the transfer's own, pausing while
/// the bytes delivered and not yet acknowledged reach the window and resuming on `acknowledge`,
/// `suspend`/`resume` and `cancel` included. A body file stays readable even if the entry is
/// replaced or evicted meanwhile (``StoredBodyFile`` holds it open), and each of its blocks is
/// checked before it is delivered: a damaged one ends the replay with `.fileSystem` (after the
/// intact bytes before it), and the store removes the entry.
///
/// A replay may deliver only part of the stored body (a `206` answered from the store): its head
/// then says so (`206`, `Content-Range`), and `bodyRange` says which bytes.
final class CacheReplayTransfer: TransportTransfer {
    /// The most bytes read from a body file for one `body` event.
    static let chunkSize = CacheBodyChecksums.blockSize

    private struct State {
        var offset: Int64
        var unacknowledged = 0
        var suspended = false
        var cancelled = false
        var finished = false
    }

    private let body: StoredBody
    /// The end of the bytes replayed (the body's length unless a range was asked for).
    private let end: Int64
    /// Where the bytes replayed start.
    private let start: Int64
    private let url: URL
    private let sink: any TransportEventSink
    private let window: Int
    private let source: ResponseSource
    /// The network exchange's metrics when one preceded the replay (a revalidation's `304`).
    private let networkMetrics: TransferMetrics?
    private let state: Locked<State>
    /// Where pieces are read and delivered; `nil` for a body delivered whole as the replay starts
    /// (the common hit), which then costs no queue.
    private let queue: DispatchQueue?

    /// Replays `entry` (its head as stored, then its body unless `includingBody` is false, for a
    /// HEAD request) with `metrics.source` set to `source`.
    ///
    /// With an `age` (the HTTP cache's answers, RFC 9111 §4), the head gets that `Age` and the
    /// stored body's `Content-Length` (of `bodyRange`, when given). `networkMetrics` are those of
    /// the exchange that led to the replay, if any (a revalidation answered `304`): its timings
    /// and bytes on the wire are kept. `bodyRange` limits the body to those bytes (clamped to it).
    init(
        _ entry: StoredEntry, url: URL, sink: any TransportEventSink, flowControlWindow: Int = 4 << 20,
        source: ResponseSource = .cache, includingBody: Bool = true, age: Int? = nil, networkMetrics: TransferMetrics? = nil,
        bodyRange: Range<Int64>? = nil
    ) {
        self.body = includingBody ? entry.body : .data(Data())
        // The bytes the head announces (a HEAD's too), and the ones replayed.
        let stored = entry.body.length
        let announced = bodyRange.map { min(max(0, $0.lowerBound), stored)..<min(max(0, $0.upperBound), stored) } ?? 0..<stored
        let start = includingBody ? announced.lowerBound : 0
        let end = includingBody ? max(start, announced.upperBound) : 0
        self.start = start
        self.end = end
        self.state = Locked(State(offset: start))
        self.url = url
        self.sink = sink
        self.window = max(1, flowControlWindow)
        self.source = source
        self.networkMetrics = networkMetrics
        var fields = entry.head.headers.map { (name: $0.name, value: $0.value) }
        if let age {
            fields.removeAll { $0.name.caseInsensitiveEquals("Age") || $0.name.caseInsensitiveEquals("Content-Length") }
            fields.append((name: "Age", value: String(max(0, age))))
            fields.append((name: "Content-Length", value: String(max(0, announced.upperBound - announced.lowerBound))))
        }
        var head = ResponseHead(statusCode: entry.head.statusCode, fields: fields, url: url, httpVersion: "HTTP/1.1")
        head.responseMemo = entry.responseMemo
        var atOnce: Data?
        if case .data(let data) = body, end - start <= Int64(window) {
            atOnce = start == 0 && end == Int64(data.count) ? data : data.subdata(in: (data.startIndex + Int(start))..<(data.startIndex + Int(end)))
        }
        queue = atOnce == nil ? DispatchQueue(label: "courier.cache-replay") : nil
        sink.receive(.response(head))
        if let data = atOnce {
            state.withLock { state in
                state.finished = true
                state.offset = end
            }
            if !data.isEmpty { sink.receive(.body(data)) }
            sink.receive(.completed(error: nil, metrics: metrics()))
        } else {
            queue?.async { self.pump() }
        }
    }

    func suspend() {
        state.withLock { $0.suspended = true }
    }

    func resume() {
        state.withLock { $0.suspended = false }
        queue?.async { self.pump() }
    }

    func cancel() {
        state.withLock { $0.cancelled = true }
        queue?.async { self.pump() }
    }

    func acknowledge(_ bytes: Int) {
        let finished = state.withLock { state -> Bool in
            state.unacknowledged = max(0, state.unacknowledged - bytes)
            return state.finished
        }
        // A finished replay (every body delivered at once from memory) has nothing left to pump.
        if !finished { queue?.async { self.pump() } }
    }

    /// Returns once every pump scheduled so far has run (tests use it to observe a paused replay).
    func waitUntilIdle() {
        queue?.sync {}
    }

    private enum Step {
        case read(offset: Int64, count: Int)
        case wait
        case complete(CourierError?)
    }

    /// Delivers pieces until the window is full, the transfer is paused or the body ends; only
    /// ever runs on `queue`, so events stay serial and in order.
    private func pump() {
        while true {
            let step = state.withLock { state -> Step in
                if state.finished { return .wait }
                if state.cancelled {
                    state.finished = true
                    return .complete(CourierError(.cancelled, "The request was cancelled.", url: url))
                }
                if state.suspended || state.unacknowledged >= window { return .wait }
                if state.offset >= end {
                    state.finished = true
                    return .complete(nil)
                }
                // Pieces on the body's block boundaries (a range may start anywhere): each read
                // then checks only the blocks it delivers.
                let toBoundary = Int64(Self.chunkSize) - state.offset % Int64(Self.chunkSize)
                return .read(offset: state.offset, count: Int(min(toBoundary, end - state.offset)))
            }
            switch step {
            case .wait:
                return
            case .complete(let error):
                sink.receive(.completed(error: error, metrics: metrics()))
                return
            case .read(let offset, let count):
                guard let piece = body.read(at: offset, count: count), piece.count == count else {
                    let stop = state.withLock { state -> Bool in
                        defer { state.finished = true }
                        return !state.finished
                    }
                    if stop {
                        let message =
                            if case .file(let file) = body, file.isDamaged {
                                "The stored response body is damaged (a block does not match its checksum); the entry was removed, "
                                    + "so the next request goes to the network."
                            } else {
                                "The stored response body could not be read."
                            }
                        sink.receive(.completed(error: CourierError(.fileSystem, message, url: url), metrics: metrics()))
                    }
                    return
                }
                state.withLock { state in
                    state.offset += Int64(count)
                    state.unacknowledged += count
                }
                sink.receive(.body(piece))
            }
        }
    }

    private func metrics() -> TransferMetrics {
        var metrics = networkMetrics ?? TransferMetrics(bytesReceived: state.withLock { $0.offset } - start, transport: "cache")
        metrics.source = source
        return metrics
    }
}
