import Dispatch

/// Which of a request's two progress channels.
enum ProgressDirection: Sendable {
    case download, upload
}

/// One progress channel's state: the latest value, its hooks and its stream subscribers.
struct ProgressState {
    fileprivate struct Hook {
        let queue: DispatchQueue
        let handler: @Sendable (TransferProgress) -> Void
        var isDeliveryPending = false
    }

    fileprivate var latest: TransferProgress = .initial
    fileprivate var hasUpdates = false
    fileprivate var isFinished = false
    fileprivate var hooks: [Hook] = []
    fileprivate var streams: [Int: AsyncStream<TransferProgress>.Continuation] = [:]
    fileprivate var nextStreamID = 0
}

/// Fans one progress value out to hooks (each on its queue) and `AsyncStream` subscribers.
///
/// Latest value wins: a hook never has more than one delivery pending, so a fast transfer cannot
/// flood a slow queue, and every hook still sees the final value. Values never go backwards, and a
/// stream that subscribes late first receives the current value.
///
/// A view on one direction of the request's ``RequestSharedState``, whose lock guards both
/// directions and the hooks: one lock for what every request would otherwise allocate three of.
struct ProgressChannel: Sendable {
    let owner: RequestSharedState
    let direction: ProgressDirection

    private func withState<T>(_ body: (inout ProgressState) -> T) -> T {
        owner.withProgress(direction, body)
    }

    /// The most recent value.
    var latest: TransferProgress { withState { $0.latest } }

    /// Calls `handler` on `queue` with new values from now on.
    func addHook(queue: DispatchQueue, _ handler: @escaping @Sendable (TransferProgress) -> Void) {
        withState { $0.hooks.append(ProgressState.Hook(queue: queue, handler: handler)) }
    }

    /// A stream of values: the current one first (if any progress was made), then every later one,
    /// ending when the transfer ends.
    func makeStream() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        let finished = withState { state -> Bool in
            if state.hasUpdates || state.isFinished { continuation.yield(state.latest) }
            guard !state.isFinished else { return true }
            let id = state.nextStreamID
            state.nextStreamID += 1
            state.streams[id] = continuation
            let direction = direction
            continuation.onTermination = { [weak owner] _ in
                _ = owner?.withProgress(direction) { $0.streams.removeValue(forKey: id) }
            }
            return false
        }
        if finished { continuation.finish() }
        return stream
    }

    /// Publishes a new value; ignored if it would move progress backwards or after the end.
    func update(_ progress: TransferProgress) {
        let deliveries = withState { state -> [Int] in
            guard !state.isFinished, progress.completedUnitCount >= state.latest.completedUnitCount else { return [] }
            state.latest = progress
            state.hasUpdates = true
            for continuation in state.streams.values { continuation.yield(progress) }
            return scheduleDeliveries(&state)
        }
        deliver(deliveries)
    }

    /// Ends the channel. On success the final value is `finished(bytes)`: fraction exactly 1.0.
    func finish(successfulBytes: Int64?) {
        let (streams, deliveries) = withState { state -> ([AsyncStream<TransferProgress>.Continuation], [Int]) in
            guard !state.isFinished else { return ([], []) }
            var deliveries: [Int] = []
            if let bytes = successfulBytes {
                state.latest = .finished(max(bytes, state.latest.completedUnitCount))
                state.hasUpdates = true
                for continuation in state.streams.values { continuation.yield(state.latest) }
                deliveries = scheduleDeliveries(&state)
            }
            state.isFinished = true
            let streams = Array(state.streams.values)
            state.streams.removeAll()
            return (streams, deliveries)
        }
        deliver(deliveries)
        streams.forEach { $0.finish() }
    }

    private func scheduleDeliveries(_ state: inout ProgressState) -> [Int] {
        var indices: [Int] = []
        for index in state.hooks.indices where !state.hooks[index].isDeliveryPending {
            state.hooks[index].isDeliveryPending = true
            indices.append(index)
        }
        return indices
    }

    private func deliver(_ indices: [Int]) {
        guard !indices.isEmpty else { return }
        let hooks = withState { state in indices.map { (state.hooks[$0].queue, $0) } }
        for (queue, index) in hooks {
            queue.async { [self] in
                let (handler, value) = withState { state in
                    state.hooks[index].isDeliveryPending = false
                    return (state.hooks[index].handler, state.latest)
                }
                handler(value)
            }
        }
    }
}
