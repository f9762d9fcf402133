import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport: WebSocketTaskTransport {
    func makeWebSocketTask(
        _ request: URLRequest, observer: any WebSocketTaskObserver,
        then created: @escaping @Sendable (Result<URLSessionWebSocketTask, CourierError>) -> Void
    ) {
        foundationQueue.async { [self] in
            // As in `startTask`: checked here, on the queue where `shutdown()` queues the
            // invalidation after setting the flag, and not under the lock while the task is made.
            guard !isShutDown.withLock({ $0 }) else {
                created(.failure(CourierError(.sessionInvalidated, "The session's transport shut down.", url: request.url)))
                return
            }
            let task = session.webSocketTask(with: request)
            router.webSocketObservers.withLock { $0[task.taskIdentifier] = WeakWebSocketTaskObserver(observer) }
            created(.success(task))
        }
    }

    func performFoundationCall(_ call: @escaping @Sendable () -> Void) {
        foundationQueue.async(execute: call)
    }

    func cancelWebSocketTask(_ task: URLSessionWebSocketTask, with close: (code: URLSessionWebSocketTask.CloseCode, reason: Data?)?) {
        // Only while it runs, as `cancelTask` does: a cancel racing the task's completion can crash.
        foundationQueue.async {
            guard task.state == .running || task.state == .suspended else { return }
            if let close { task.cancel(with: close.code, reason: close.reason) } else { task.cancel() }
        }
    }
}

/// A WebSocket task's observer, held weakly: the socket it belongs to ends the task when it goes.
struct WeakWebSocketTaskObserver: Sendable {
    weak var observer: (any WebSocketTaskObserver)?

    init(_ observer: any WebSocketTaskObserver) {
        self.observer = observer
    }
}

extension URLSessionDelegateRouter: URLSessionWebSocketDelegate {
    private func observer(of task: URLSessionTask) -> (any WebSocketTaskObserver)? {
        webSocketObservers.withLock { $0[task.taskIdentifier]?.observer }
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        observer(of: webSocketTask)?.webSocketTaskDidOpen(subprotocol: `protocol`)
    }

    func urlSession(
        _ session: URLSession, webSocketTask: URLSessionWebSocketTask, didCloseWith closeCode: URLSessionWebSocketTask.CloseCode,
        reason: Data?
    ) {
        observer(of: webSocketTask)?.webSocketTaskDidReceiveClose(code: closeCode.rawValue, reason: reason)
    }

    /// The end of a WebSocket task, from `urlSession(_:task:didCompleteWithError:)`.
    func webSocketTaskDidComplete(_ task: URLSessionWebSocketTask, error: (any Error)?) {
        let entry = webSocketObservers.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        entry?.observer?.webSocketTaskDidComplete(error: error)
    }
}
