import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import CourierLocking

/// A ``Transport`` on Foundation's URLSession: one session and one session-level delegate per
/// Courier session, events routed to transfers by task identifier.
///
/// Courier does what URLSession cannot be trusted with on Linux (see
/// `research/linux-urlsession.md`): redirects are handed back rather than followed, cookies and
/// caching are off, idle and resource timeouts run on Courier's own timers, and `suspend()` is
/// Courier's own pause (see ``URLSessionTransfer``).
@_spi(Transport) public final class URLSessionTransport: Transport {
    public let capabilities = TransportCapabilities(name: "urlSession", pausesInPlace: false, appliesBackpressure: false)
    let session: URLSession
    let router: URLSessionDelegateRouter
    let delegateQueue: URLSessionDelegateQueue
    /// Where Courier calls the FoundationNetworking methods that wait for its work queue (task
    /// creation, `resume()`, `cancel()`, invalidation): never on the delegate queue, which that
    /// work queue may be waiting for (see ``URLSessionDelegateQueue``).
    let foundationQueue = DispatchQueue(label: "courier.urlsession.foundation")
    /// Set by ``shutdown()`` before it queues the invalidation; read on the Foundation queue before
    /// a task is made there. Never held across a FoundationNetworking call.
    let isShutDown = Locked(false)
    /// The time the transfers' timeouts run on.
    let clock: TransportClock

    /// Creates the transport with its own URLSession, configured for Courier's needs.
    public init(configuration: TransportConfiguration, sessionConfiguration: URLSessionConfiguration) {
        let settings = (sessionConfiguration.copy() as? URLSessionConfiguration) ?? .ephemeral
        settings.httpShouldSetCookies = false
        settings.httpCookieAcceptPolicy = .never
        settings.httpCookieStorage = nil
        settings.urlCache = nil
        settings.requestCachePolicy = .reloadIgnoringLocalCacheData
        settings.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        // Courier enforces both timeouts itself; URLSession fails sub-second values at once on Linux.
        settings.timeoutIntervalForRequest = 7 * 24 * 3600
        settings.timeoutIntervalForResource = 7 * 24 * 3600
        clock = configuration.clock
        let queue = URLSessionDelegateQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "courier.urlsession.delegate"
        let router = URLSessionDelegateRouter()
        self.router = router
        self.delegateQueue = queue
        self.session = URLSession(configuration: settings, delegate: router, delegateQueue: queue)
    }

    /// Starts the exchange on a URLSession task.
    public func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        let transfer = URLSessionTransfer(request: request, sink: sink, transport: self)
        transfer.start()
        return transfer
    }

    /// Invalidates the URLSession and cancels its tasks, without waiting; transfers that had not
    /// created their task yet end as cancelled.
    public func shutdown() {
        // Invalidating waits for FoundationNetworking's work queue, which every URLSession of the
        // process shares and which may be waiting for the delegate queue or in a streamed body's
        // read for as long as the body's source takes. The caller may be a thread of Swift's pool
        // (a session's deinit) that the source itself needs: never wait there. The flag's lock is
        // never held across a FoundationNetworking call, so taking it here does not wait; the
        // first call alone invalidates (a session's deinit calls this again after a shutdown).
        let first = isShutDown.withLock { isShutDown in
            defer { isShutDown = true }
            return !isShutDown
        }
        guard first else { return }
        foundationQueue.async { [session] in session.invalidateAndCancel() }
    }

    /// Creates and starts a task for `urlRequest`, registered with the router before it runs, on
    /// the Foundation queue; `started` gets it (`nil` once the transport is shut down) on the
    /// delegate queue, before any callback of the task.
    ///
    /// FoundationNetworking traps on a task made from an invalidated session. ``shutdown()`` sets
    /// the flag before it queues the invalidation on the Foundation queue, where this check, the
    /// creation and the start run: a task made after the check found the flag unset is made
    /// before the invalidation (which then cancels it), and none is made once it is set.
    func startTask(
        _ urlRequest: URLRequest, body: TransportBody, for transfer: URLSessionTransfer,
        started: @escaping @Sendable (URLSessionTask?) -> Void
    ) {
        foundationQueue.async { [self] in
            // Not under the lock: making and starting a task waits for FoundationNetworking's
            // queue, and `shutdown()` must never wait for that.
            guard !isShutDown.withLock({ $0 }) else {
                delegateQueue.schedule { started(nil) }
                return
            }
            let task: URLSessionTask
            if case .file(let url, _) = body {
                task = session.uploadTask(with: urlRequest, fromFile: url)
            } else {
                task = session.dataTask(with: urlRequest)
            }
            router.register(transfer, for: task.taskIdentifier)
            // Queued before `resume()`, so ahead of the task's first callback.
            delegateQueue.schedule { started(task) }
            task.resume()
        }
    }

    /// Cancels `task` on the Foundation queue, and only while it still runs; `then` runs on the
    /// delegate queue once the cancel is done.
    ///
    /// FoundationNetworking's `cancel()` waits for its work queue, which may be waiting for the
    /// delegate queue (see ``URLSessionDelegateQueue``), hence the Foundation queue. A transfer
    /// reports its end in `then`: FoundationNetworking crashes ("Transfer completed, but there's
    /// no response") when a connection whose response head never ended closes before the cancel
    /// reaches it (a server that holds a head open until the request times out, then closes), so
    /// the cancel must be ahead of whatever the caller and the server do next. Checking the state
    /// first keeps it away from tasks that completed (a cancel racing completion can crash too).
    func cancelTask(_ task: URLSessionTask, then next: @escaping @Sendable () -> Void = {}) {
        foundationQueue.async { [delegateQueue] in
            if task.state == .running || task.state == .suspended { task.cancel() }
            delegateQueue.schedule(next)
        }
    }
}

/// The one delegate of a transport's URLSession: routes each callback to its transfer.
final class URLSessionDelegateRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let transfers = Locked([Int: URLSessionTransfer]())
    /// The WebSocket tasks' observers, held weakly (see `URLSessionTransport+WebSocket.swift`).
    let webSocketObservers = Locked([Int: WeakWebSocketTaskObserver]())

    func register(_ transfer: URLSessionTransfer, for taskIdentifier: Int) {
        transfers.withLock { $0[taskIdentifier] = transfer }
    }

    private func transfer(for task: URLSessionTask) -> URLSessionTransfer? {
        transfers.withLock { $0[task.taskIdentifier] }
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // Courier follows redirects itself (with its own rules for bodies and credentials).
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        transfer(for: dataTask)?.taskDidReceive(response, task: dataTask)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        transfer(for: dataTask)?.taskDidReceive(data, task: dataTask)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64, totalBytesExpectedToSend: Int64
    ) {
        transfer(for: task)?.taskDidSend(totalBytesSent, of: totalBytesExpectedToSend, task: task)
    }

    /// A 401 with a Basic challenge: FoundationNetworking (Linux) asks for a credential only after
    /// the whole response was delivered, and with none to give waits forever. Courier answers
    /// challenges itself (see `ChallengeResponder`), so the transfer ends here with the 401 as
    /// received, and the task, which is no longer anyone's, is cancelled.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(FoundationNetworking)
        if challenge.failureResponse != nil {
            let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
            transfer?.taskDidComplete(task, error: nil)
            completionHandler(.cancelAuthenticationChallenge, nil)
            return
        }
        #endif
        completionHandler(.performDefaultHandling, nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let webSocketTask = task as? URLSessionWebSocketTask {
            webSocketTaskDidComplete(webSocketTask, error: error)
            return
        }
        let transfer = transfers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        transfer?.taskDidComplete(task, error: error)
    }
}
