import Foundation

extension EventStreamRequest {
    /// Calls `handler` on `queue` (the session's callback queue by default) with each event, in
    /// order; the stream reads on only once `handler` returned. Registering the first callback
    /// starts the stream.
    ///
    /// ```swift
    /// session.eventStream("v1/events")
    ///     .onEvent { event in print(event.data) }
    ///     .onCompletion { error in print("ended", error?.kind.description ?? "cleanly") }
    /// ```
    @discardableResult
    public func onEvent(queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (ServerSentEvent) -> Void) -> Self {
        register { $0.eventHandlers.append((queue, handler)) }
    }

    /// Calls `handler` on `queue` with every update: connections accepted, events, reconnections.
    @discardableResult
    public func onUpdate(queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (EventStreamUpdate) -> Void) -> Self {
        register { $0.updateHandlers.append((queue, handler)) }
    }

    /// Calls `handler` on `queue` once, when the stream ends: `nil` for a clean end (a 204, the
    /// last connection ending without reconnection), the error otherwise.
    @discardableResult
    public func onCompletion(queue: DispatchQueue? = nil, _ handler: @escaping @Sendable (CourierError?) -> Void) -> Self {
        register { $0.completionHandlers.append((queue, handler)) }
    }

    private func register(_ add: (inout Shared) -> Void) -> Self {
        let start = shared.withLock { shared -> Bool in
            add(&shared)
            defer { shared.callbacksScheduled = true }
            return !shared.callbacksScheduled
        }
        // Started from a task, so that the callbacks chained in the same statement are all in place first.
        if start { Task { await self.runCallbacks() } }
        return self
    }

    private func runCallbacks() async {
        let fallback = session.callbackQueue
        var failure: CourierError?
        var iterator = updates().makeAsyncIterator()
        do throws(CourierError) {
            while let update = try await iterator.next() {
                let (events, updates) = shared.withLock { ($0.eventHandlers, $0.updateHandlers) }
                for (queue, handler) in updates { await deliver(on: queue ?? fallback) { handler(update) } }
                if case .event(let event) = update {
                    for (queue, handler) in events { await deliver(on: queue ?? fallback) { handler(event) } }
                }
            }
        } catch {
            failure = error
        }
        let completions = shared.withLock { $0.completionHandlers }
        for (queue, handler) in completions { await deliver(on: queue ?? fallback) { [failure] in handler(failure) } }
    }

    private func deliver(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                work()
                continuation.resume()
            }
        }
    }
}
