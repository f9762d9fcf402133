import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// The chunks of a streamed response between the transport and the one consumer.
///
/// A chunk is acknowledged to its transfer only when the consumer takes it, so the transport stops
/// reading once the consumer is a flow-control window behind: memory stays bounded however slow
/// the consumer is.
final class StreamBuffer: Sendable {
    private struct State {
        var chunks: [(data: Data, transfer: any TransportTransfer)] = []
        var waiter: CheckedContinuation<Result<Data?, CourierError>, Never>?
        var completion: RequestCompletion?
        var hasConsumer = false
        var deliveredBytes: Int64 = 0
    }

    private let state = Locked(State())

    /// Whether any byte reached the consumer (a retry would then repeat bytes).
    var hasDelivered: Bool { state.withLock { $0.deliveredBytes > 0 } }

    /// How the request ended, once it has.
    var completion: RequestCompletion? { state.withLock { $0.completion } }

    /// Claims the stream for a consumer; `false` if it already has one.
    func attachConsumer() -> Bool {
        state.withLock { state in
            guard !state.hasConsumer else { return false }
            state.hasConsumer = true
            return true
        }
    }

    /// A new response starts: chunks nobody took yet belong to the previous one.
    func reset() {
        let dropped = state.withLock { state -> [(data: Data, transfer: any TransportTransfer)] in
            defer { state.chunks.removeAll() }
            return state.chunks
        }
        for chunk in dropped { chunk.transfer.acknowledge(chunk.data.count) }
    }

    func push(_ data: Data, from transfer: any TransportTransfer) {
        let waiter = state.withLock { state -> CheckedContinuation<Result<Data?, CourierError>, Never>? in
            guard let waiter = state.waiter else {
                state.chunks.append((data, transfer))
                return nil
            }
            state.waiter = nil
            state.deliveredBytes += Int64(data.count)
            return waiter
        }
        guard let waiter else { return }
        transfer.acknowledge(data.count)
        waiter.resume(returning: .success(data))
    }

    func finish(_ completion: RequestCompletion) {
        let (waiter, dropped) = state.withLock { state -> (CheckedContinuation<Result<Data?, CourierError>, Never>?, [(data: Data, transfer: any TransportTransfer)]) in
            state.completion = completion
            // A cancelled stream stops at once: chunks still waiting are not handed out.
            let dropped = completion.error?.isCancelled == true ? state.chunks : []
            if !dropped.isEmpty { state.chunks.removeAll() }
            defer { state.waiter = nil }
            return (state.waiter, dropped)
        }
        for chunk in dropped { chunk.transfer.acknowledge(chunk.data.count) }
        waiter?.resume(returning: completion.error.map { .failure($0) } ?? .success(nil))
    }

    /// The next chunk, `nil` at the end, or the request's error.
    func next() async -> Result<Data?, CourierError> {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> (Result<Data?, CourierError>, (any TransportTransfer)?)? in
                if !state.chunks.isEmpty {
                    let chunk = state.chunks.removeFirst()
                    state.deliveredBytes += Int64(chunk.data.count)
                    return (.success(chunk.data), chunk.transfer)
                }
                if let completion = state.completion {
                    return (completion.error.map { .failure($0) } ?? .success(nil), nil)
                }
                state.waiter = continuation
                return nil
            }
            guard let (result, transfer) = ready else { return }
            if case .success(let data?) = result { transfer?.acknowledge(data.count) }
            continuation.resume(returning: result)
        }
    }
}

/// The body sink of a ``DataStreamRequest``: hands chunks to the ``StreamBuffer``.
final class StreamBodySink: ResponseBodySink {
    let buffer: StreamBuffer

    init(buffer: StreamBuffer) {
        self.buffer = buffer
    }

    func begin(_ head: ResponseHead, method: HTTPMethod) -> BodyDisposition {
        buffer.reset()
        return .store(offset: 0, total: head.hasNoBody(for: method) ? 0 : head.expectedContentLength)
    }

    func append(_ data: Data, from transfer: any TransportTransfer) {
        buffer.push(data, from: transfer)
    }

    var body: RequestCompletion.Body { .memory(nil) }
    var cancelledBody: RequestCompletion.Body { .memory(nil) }
    func finalize(response: LazyHTTPResponse?) -> RequestCompletion.Body { .memory(nil) }
    func discard() {}
    var flowControlWindow: Int { 1 << 20 }
    /// A stream has no size limit: its consumer bounds memory by taking chunks.
    var sizeLimitClass: BodySizeLimitClass { .unlimited }
    var validatesAtHead: Bool { true }
    var allowsRetry: Bool { !buffer.hasDelivered }
    /// A stream's consumer sets the pace of its transfer; a shared transfer could not follow it.
    var allowsSharing: Bool { false }
    /// The consumer takes chunks when it wants them: the transfer waits for it.
    var consumerSetsPace: Bool { true }
}
