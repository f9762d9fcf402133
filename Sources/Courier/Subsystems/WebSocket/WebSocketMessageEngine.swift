import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The seam between ``WebSocket`` and an engine that speaks RFC 6455 itself and hands over whole
/// messages: URLSession's `URLSessionWebSocketTask`, used on a URLSession transport
/// (``WebSocketTaskTransport``). On the curl transport the socket frames bytes itself
/// (``WebSocketClientConnection`` over a ``RawConnection``) and no engine is involved.
///
/// Calls return at once, and never wait; completions run later on the engine's queue. How the engine opens,
/// receives the server's close frame and ends reaches the socket as a ``WebSocketTaskObserver``.
protocol WebSocketMessageEngine: AnyObject, Sendable {
    /// Starts the opening handshake.
    func start()
    /// Sends `message`; `completion` runs once it was written, or with why it was not.
    func send(_ message: WebSocketMessage, completion: @escaping @Sendable ((any Error)?) -> Void)
    /// Asks for the next message; one request at a time.
    func receive(_ completion: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void)
    /// Sends a ping; `pongReceived` runs when its pong arrives, or with why it will not.
    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void)
    /// Sends a close frame with `code` and `reason`, then ends.
    func close(code: WebSocketCloseCode, reason: String)
    /// Ends at once, without a close frame.
    func abort()
    /// The status and headers of the answer to the opening handshake, once there is one.
    var handshakeAnswer: (statusCode: Int, headers: HTTPHeaders)? { get }
    /// The server's close frame, once one arrived.
    var serverClose: WebSocketCloseFrame? { get }
}

/// ``WebSocketMessageEngine`` on a `URLSessionWebSocketTask`.
final class URLSessionWebSocketEngine: WebSocketMessageEngine {
    let task: URLSessionWebSocketTask
    /// Cancels the task the way its transport can afford (see ``WebSocketTaskTransport``).
    let transport: any WebSocketTaskTransport

    /// Wraps `task`, created by `transport` and not resumed, taking messages up to `maximumMessageSize` bytes.
    init(task: URLSessionWebSocketTask, transport: any WebSocketTaskTransport, maximumMessageSize: Int) {
        self.task = task
        self.transport = transport
        task.maximumMessageSize = maximumMessageSize
    }

    func start() {
        transport.performFoundationCall { [task] in task.resume() }
    }

    func send(_ message: WebSocketMessage, completion: @escaping @Sendable ((any Error)?) -> Void) {
        let taskMessage = WebSocketTaskTranslation.taskMessage(message)
        transport.performFoundationCall { [task] in task.send(taskMessage, completionHandler: completion) }
    }

    func receive(_ completion: @escaping @Sendable (Result<WebSocketMessage, any Error>) -> Void) {
        transport.performFoundationCall { [task] in
            task.receive { result in completion(result.map(WebSocketTaskTranslation.message)) }
        }
    }

    func sendPing(_ pongReceived: @escaping @Sendable ((any Error)?) -> Void) {
        transport.performFoundationCall { [task] in task.sendPing(pongReceiveHandler: pongReceived) }
    }

    func close(code: WebSocketCloseCode, reason: String) {
        transport.cancelWebSocketTask(task, with: (WebSocketTaskTranslation.taskCloseCode(code), WebSocketTaskTranslation.taskReason(reason)))
    }

    func abort() {
        transport.cancelWebSocketTask(task, with: nil)
    }

    var handshakeAnswer: (statusCode: Int, headers: HTTPHeaders)? {
        guard let response = task.response as? HTTPURLResponse else { return nil }
        let fields = response.allHeaderFields.compactMap { key, value -> HTTPHeader? in
            guard let name = key as? String else { return nil }
            return HTTPHeader(name: name, value: "\(value)")
        }
        return (response.statusCode, HTTPHeaders(fields))
    }

    var serverClose: WebSocketCloseFrame? {
        WebSocketTaskTranslation.closeFrame(code: task.closeCode.rawValue, reason: task.closeReason)
    }
}
