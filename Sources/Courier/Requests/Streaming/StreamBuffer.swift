import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// The chunks of a streamed response between the transport and the one consumer: a lock around
/// a ``StreamDelivery`` machine, performing its actions outside the lock.
///
/// A chunk is acknowledged to its transfer only when the consumer takes it, so the transport stops
/// reading once the consumer is a flow-control window behind: memory stays bounded however slow
/// the consumer is.
final class StreamBuffer: Sendable {
    typealias Chunk = (data: Data, transfer: any TransportTransfer)
    typealias Waiter = CheckedContinuation<Result<Data?, CourierError>, Never>
    typealias Delivery = StreamDelivery<Chunk, Waiter, RequestCompletion>

    private struct State {
        var delivery = Delivery()
        /// Called once the consumer reached the provisional end.
        var whenTaken: (@Sendable () -> Void)?
    }

    private let state = Locked(State())

    /// Whether any byte reached the consumer (a retry would then repeat bytes).
    var hasDelivered: Bool { state.withLock { $0.delivery.delivered > 0 } }

    /// How the request ended, once it has.
    var completion: RequestCompletion? { state.withLock { $0.delivery.finalCompletion } }

    /// Claims the stream for a consumer; `false` if it already has one.
    func attachConsumer() -> Bool {
        state.withLock { $0.delivery.attachConsumer() }
    }

    /// A new response starts: chunks nobody took yet belong to the previous one.
    func reset() {
        perform(state.withLock { $0.delivery.reset() })
    }

    func push(_ data: Data, from transfer: any TransportTransfer) {
        perform(state.withLock { $0.delivery.push((data, transfer)) })
    }

    /// The transfer ended with `completion`; `delivered` runs once the consumer took the end.
    func transferEnded(_ completion: RequestCompletion, then delivered: @escaping @Sendable () -> Void) {
        perform(
            state.withLock { state in
                state.whenTaken = delivered
                return state.delivery.transferEnded(completion)
            })
    }

    /// `cancel()` was called: no more chunks go out.
    func requestCancel() {
        perform(state.withLock { $0.delivery.requestCancel() })
    }

    /// The request's final outcome.
    func finish(_ completion: RequestCompletion) {
        perform(state.withLock { $0.delivery.finish(completion, cancelled: completion.error?.isCancelled == true) })
    }

    /// The next chunk, `nil` at the end, or the request's error.
    func next() async -> Result<Data?, CourierError> {
        await withCheckedContinuation { continuation in
            perform(state.withLock { $0.delivery.next(continuation) })
        }
    }

    private func perform(_ actions: [Delivery.Action]) {
        for action in actions {
            switch action {
            case .hand(let chunk, let waiter):
                chunk.transfer.acknowledge(chunk.data.count)
                waiter.resume(returning: .success(chunk.data))
            case .release(let chunks):
                for chunk in chunks { chunk.transfer.acknowledge(chunk.data.count) }
            case .end(let waiter, let completion):
                waiter.resume(returning: completion.error.map { .failure($0) } ?? .success(nil))
            case .reachedEnd:
                let delivered = state.withLock { state in
                    defer { state.whenTaken = nil }
                    return state.whenTaken
                }
                delivered?()
            }
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

    func awaitDelivery(of completion: RequestCompletion, then delivered: @escaping @Sendable () -> Void) {
        buffer.transferEnded(completion, then: delivered)
    }

    var body: RequestCompletion.Body { .memory(nil) }
    var cancelledBody: RequestCompletion.Body { .memory(nil) }
    func finalize(response: LazyHTTPResponse?) -> RequestCompletion.Body { .memory(nil) }
    func discard() {}
    var kind: BodyKind { .stream }
    var hasHandedOutBytes: Bool { buffer.hasDelivered }
}
