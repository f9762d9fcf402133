/// The state machine between a stream's transfer and its one consumer: pure, no I/O. Every
/// happening is an event that returns the actions to perform outside the lock; tests drive it as
/// event → action tables.
///
/// How the stream ended travels in the event that ends it: the transfer's outcome arrives as a
/// provisional end (``transferEnded(_:)``), which the consumer reaching it reports
/// (``Action/reachedEnd``) so the request can finish; only ``finish(_:cancelled:)`` makes an end
/// final. An explicit cancel (``requestCancel()``) stops chunks at once, and the consumer then
/// waits for the final end, which the request makes a cancellation.
struct StreamDelivery<Chunk, Waiter, Completion> {
    /// Where the stream's end is.
    enum End {
        /// The transfer is still running.
        case none
        /// The transfer ended with this outcome; the request may still be cancelled.
        case provisional(Completion)
        /// The request's final outcome.
        case final(Completion)
    }

    /// What the caller must do, in order, after an event.
    enum Action {
        /// Give `chunk` to the consumer waiting as `waiter` (and acknowledge it to its transfer).
        case hand(Chunk, to: Waiter)
        /// Drop these chunks (acknowledge them, so the transfer is not held back by them).
        case release([Chunk])
        /// End the consumer waiting as `waiter` with this outcome.
        case end(Waiter, Completion)
        /// The consumer has taken every chunk and waits for the end: tell the request.
        case reachedEnd
    }

    private(set) var chunks: [Chunk] = []
    private(set) var waiter: Waiter?
    private(set) var end = End.none
    private(set) var hasConsumer = false
    private(set) var cancelRequested = false
    /// Chunks handed to the consumer so far.
    private(set) var delivered = 0
    private var reportedEnd = false

    /// The final outcome, once there is one.
    var finalCompletion: Completion? {
        if case .final(let completion) = end { return completion }
        return nil
    }

    /// Claims the stream for a consumer; `false` if it already has one.
    mutating func attachConsumer() -> Bool {
        guard !hasConsumer else { return false }
        hasConsumer = true
        return true
    }

    /// A new response starts: chunks nobody took belong to the previous one.
    mutating func reset() -> [Action] {
        defer { chunks = [] }
        return chunks.isEmpty ? [] : [.release(chunks)]
    }

    /// The transfer delivered a chunk.
    mutating func push(_ chunk: Chunk) -> [Action] {
        if cancelRequested || finalCompletion != nil { return [.release([chunk])] }
        if let waiter {
            self.waiter = nil
            delivered += 1
            return [.hand(chunk, to: waiter)]
        }
        chunks.append(chunk)
        return []
    }

    /// The transfer ended with `completion`; the consumer still has to take the chunks before it.
    mutating func transferEnded(_ completion: Completion) -> [Action] {
        guard case .none = end else { return [] }
        end = .provisional(completion)
        // A waiting consumer has taken everything already.
        return waiter != nil ? reportEnd() : []
    }

    /// The consumer asks for the next chunk, waiting as `waiter`.
    mutating func next(_ waiter: Waiter) -> [Action] {
        if !chunks.isEmpty, !cancelRequested {
            delivered += 1
            return [.hand(chunks.removeFirst(), to: waiter)]
        }
        if let completion = finalCompletion { return [.end(waiter, completion)] }
        self.waiter = waiter
        if case .provisional = end, !cancelRequested { return reportEnd() }
        return []
    }

    /// The caller cancelled the request: no chunk is handed out any more; the consumer waits for
    /// the final end (a cancellation, unless the request had already finished).
    mutating func requestCancel() -> [Action] {
        guard finalCompletion == nil, !cancelRequested else { return [] }
        cancelRequested = true
        defer { chunks = [] }
        return chunks.isEmpty ? [] : [.release(chunks)]
    }

    /// The request's final outcome; `cancelled` drops the chunks nobody took.
    mutating func finish(_ completion: Completion, cancelled: Bool) -> [Action] {
        guard finalCompletion == nil else { return [] }
        end = .final(completion)
        var actions: [Action] = []
        if cancelled || cancelRequested, !chunks.isEmpty {
            actions.append(.release(chunks))
            chunks = []
        }
        if let waiter, chunks.isEmpty {
            self.waiter = nil
            actions.append(.end(waiter, completion))
        }
        return actions
    }

    private mutating func reportEnd() -> [Action] {
        guard !reportedEnd else { return [] }
        reportedEnd = true
        return [.reachedEnd]
    }
}

extension StreamDelivery: Sendable where Chunk: Sendable, Waiter: Sendable, Completion: Sendable {}
extension StreamDelivery.End: Sendable where Completion: Sendable {}
