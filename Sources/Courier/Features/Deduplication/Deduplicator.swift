import Foundation
import CourierLocking

/// Collapses identical requests in flight into one transfer (see ``DeduplicationPolicy``).
///
/// Each caller keeps its own request, hooks, validators and serializers; they all receive the
/// same head and bytes. A caller that joins late first gets everything received so far. Cancelling
/// detaches only that caller; the transfer stops when its last caller leaves. A request that
/// arrives after the shared transfer completed starts a new one: this is not a cache.
public final class Deduplicator: Sendable {
    /// How much deduplication has happened.
    public struct Statistics: Sendable, Hashable, CustomStringConvertible {
        /// Transfers started on behalf of deduplicated requests.
        public var transfers: Int
        /// Requests that joined a transfer already in flight instead of starting one.
        public var joined: Int

        /// `transfers=N joined=M`.
        public var description: String { "transfers=\(transfers) joined=\(joined)" }
    }

    /// The session's policy.
    public let policy: DeduplicationPolicy
    /// A shared transfer stops accepting joiners once it has delivered this many body bytes,
    /// so that memory stays bounded (joiners need every byte replayed).
    let maximumReplayBytes: Int
    private let state = Locked(State())

    private struct State {
        var inFlight: [DeduplicationKey: SharedTransfer] = [:]
        var statistics = Statistics(transfers: 0, joined: 0)
    }

    init(policy: DeduplicationPolicy, maximumReplayBytes: Int = 16 << 20) {
        self.policy = policy
        self.maximumReplayBytes = maximumReplayBytes
    }

    /// Transfers started and callers joined so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Starts `request` on `transport`, or joins an identical transfer in flight.
    func startTransfer(_ request: TransportRequest, sink: any TransportEventSink, transport: any Transport) -> any TransportTransfer {
        let key = DeduplicationKey(request)
        // Joining happens under this lock: between finding a transfer and subscribing to it, its
        // last caller could leave (cancelling it) or an identical request could replace it.
        let (subscription, created) = state.withLock { state -> (Subscription, SharedTransfer?) in
            if let existing = state.inFlight[key], let joined = existing.join(sink) {
                state.statistics.joined += 1
                return (joined, nil)
            }
            let created = SharedTransfer(key: key, firstSubscriber: sink, maximumReplayBytes: maximumReplayBytes) {
                [weak self] in self?.remove(key: key, $0)
            }
            state.inFlight[key] = created
            state.statistics.transfers += 1
            return (created.firstSubscription, created)
        }
        // A shared transfer serves callers with different size limits: each caller's request
        // enforces its own, so the transport must not stop at the first caller's.
        var shared = request
        shared.maximumBodySize = nil
        created?.start(shared, on: transport)
        return subscription
    }

    /// In-flight shared transfers (finished ones are removed as they complete).
    var transfersInFlight: Int { state.withLock { $0.inFlight.count } }

    private func remove(key: DeduplicationKey, _ transfer: SharedTransfer) {
        state.withLock { state in
            if state.inFlight[key] === transfer { state.inFlight[key] = nil }
        }
    }
}

/// A request's own deduplication policy, set with `deduplication(_:)`; the session's applies when `nil`.
enum DeduplicationSetting: RequestFeatureSetting {
    static var defaultValue: DeduplicationPolicy? { nil }
}

extension Deduplicator: RequestFeature {
    /// Starts a shared transfer, or joins one in flight, for an exchange the policy covers.
    ///
    /// Streams and resumable downloads never share (``ExchangeContext/bodyMayBeShared``): a
    /// shared transfer runs at the pace of the network, not of the slowest caller, so it could not
    /// honour a stream consumer's backpressure, and a resumable partial belongs to one request.
    func route(_ exchange: ExchangeContext, sink: any TransportEventSink, onward: ExchangeOnward) -> RoutedTransfer? {
        let policy = exchange.settings[DeduplicationSetting.self] ?? policy
        guard exchange.bodyMayBeShared, policy.applies(to: exchange.request.method) else { return nil }
        return RoutedTransfer(transfer: startTransfer(exchange.request, sink: sink, transport: onward.transport), origin: .shared)
    }
}

extension Request {
    /// Overrides the session's deduplication for this request: `.disabled` always makes a transfer
    /// of its own, `.safeMethods` lets an identical GET or HEAD share one.
    @discardableResult
    public nonisolated func deduplication(_ policy: DeduplicationPolicy) -> Self {
        updateFeatureSetting(DeduplicationSetting.self) { $0 = policy }
        return self
    }
}
