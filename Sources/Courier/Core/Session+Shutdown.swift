import Foundation

extension Session {
    /// Shuts the session down gracefully: new requests fail at once, those already sending get
    /// until `gracePeriod` has passed to finish, then are cancelled; returns once every request
    /// has ended and the transport's connections and threads are released.
    ///
    /// From the call on, a request that has not started sending (including one made earlier and
    /// resumed later, and a retry's new request) fails with ``CourierError/Kind-swift.struct/sessionInvalidated``,
    /// and so does a new ``WebSocket``. Requests already on their way (data, uploads, downloads,
    /// streams, retries and redirects of theirs) run on; at the deadline they end as
    /// ``CourierError/Kind-swift.struct/cancelled`` (a resumable download keeps its partial bytes).
    /// WebSockets already open are not waited for: they close when the transport is released.
    ///
    /// Calling it again, concurrently or later, waits for the same end (an earlier deadline of a
    /// later call cancels sooner); cancelling the calling task cancels what still runs at once.
    ///
    /// ```swift
    /// // On SIGTERM: let what is in flight finish for up to 10 s, then stop.
    /// await session.shutdown(gracePeriod: .seconds(10))
    /// ```
    ///
    /// - Parameters:
    ///   - gracePeriod: How long requests in flight may take to finish before they are cancelled.
    ///   - clock: The clock the grace period runs on.
    public func shutdown(gracePeriod: Duration, clock: some Clock<Duration> = ContinuousClock()) async {
        let deadline = clock.now.advanced(by: gracePeriod)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { [self] in
                // Thrown at once when the caller's task is cancelled: the deadline has come.
                try? await clock.sleep(until: deadline, tolerance: nil)
                guard !lifecycle.withLock({ $0.isClosed }) else { return }
                cancelAllRequests()
                endAbandonedRequests()
            }
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                switch lifecycle.withLock({ $0.shutdown(waiter) }) {
                case .wait: break
                case .release: releaseTransport()
                case .resume(let waiter): waiter.resume()
                }
            }
            group.cancelAll()
        }
    }

    /// Whether the session takes new requests: `false` from the first ``shutdown(gracePeriod:clock:)`` call on.
    public var isShutDown: Bool { !lifecycle.withLock { $0.isOpen } }

    /// Admits a request about to send its first exchange: false once shutdown began.
    func startRunning(_ id: UUID) -> Bool {
        lifecycle.withLock { $0.start(id) }
    }

    /// A request ended (or never started); called by ``unregister(_:)``.
    func endRunning(_ id: UUID) {
        if case .release = lifecycle.withLock({ $0.end(id) }) { releaseTransport() }
    }

    /// The error a request or WebSocket gets when it would start after shutdown began.
    static func shutDownError(url: URL?) -> CourierError {
        CourierError(.sessionInvalidated, "The session is shutting down: it takes no new requests.", url: url)
    }

    /// Joins the transport's threads off the caller's thread (which may be a request's executor
    /// or a transport callback), then resumes every `shutdown` caller.
    private func releaseTransport() {
        DispatchQueue.global().async { [self] in
            transport.shutdown()
            for waiter in lifecycle.withLock({ $0.released() }) { waiter.resume() }
        }
    }
}
