import Foundation

/// An in-process HTTP/1.1 server on 127.0.0.1 for tests: script responses (a FIFO queue,
/// routes, or a dispatcher closure), inject faults, and inspect the recorded requests.
///
/// ```swift
/// let server = try TestServer()
/// defer { #expect(server.shutdown().problems == []) }
/// server.enqueue(.ok("hello"))
/// // … make a request to server.url("/greeting") …
/// let request = try await server.takeRequest()
/// ```
/// Each connection is served by its own thread with blocking I/O, so nothing runs on Swift's
/// cooperative pool. Call ``shutdown()`` when done and check the ``ShutdownReport`` it returns;
/// deinitialising an unstopped server shuts it down too, but nobody sees that report.
public final class TestServer: Sendable {
    /// Options for starting a server.
    public struct Configuration: Sendable {
        /// The port to bind on 127.0.0.1; 0 (the default) picks a free one. Tests should keep 0.
        public var port: Int = 0
        /// The listen backlog (the system may cap it).
        public var backlog: Int = 1024
        /// The largest request head (request line and header fields) accepted; larger heads
        /// get 431.
        public var maxRequestHeadBytes: Int = 64 * 1024
        /// How many body bytes of each request are kept in ``RecordedRequest/body``; the rest
        /// is read and counted in ``RecordedRequest/bodySize`` but not kept.
        public var maxRecordedBodyBytes: Int = 64 * 1024 * 1024
        /// Whether to add a `Date` header to responses that do not set one.
        public var sendsDateHeader: Bool = false
        /// The prefix of the server's thread names (visible in debuggers and `/proc`).
        public var threadName: String = "TestServer"

        /// The default configuration.
        public init() {}
    }

    let core: ServerCore

    /// The port the server listens on.
    public let port: Int

    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL

    /// Starts a server on 127.0.0.1 with a free port; it accepts connections at once.
    public convenience init() throws {
        try self.init(configuration: Configuration())
    }

    /// Starts a server with `configuration`; it accepts connections at once.
    public init(configuration: Configuration) throws {
        core = try ServerCore(configuration: configuration)
        port = core.port
        baseURL = URL(string: "http://127.0.0.1:\(core.port)") ?? URL(fileURLWithPath: "/")
    }

    deinit {
        _ = core.shutdown()
    }

    /// The URL of `pathAndQuery` (e.g. `/search?q=1`) on this server.
    public func url(_ pathAndQuery: String) -> URL {
        let suffix = pathAndQuery.hasPrefix("/") ? pathAndQuery : "/" + pathAndQuery
        return URL(string: baseURL.absoluteString + suffix) ?? baseURL
    }

    // MARK: Scripting

    /// Appends a response to the queue that answers requests no route or dispatcher takes.
    public func enqueue(_ response: MockResponse) {
        core.state.withLock { $0.queue.append(response) }
    }

    /// Appends several responses to the queue, in order.
    public func enqueue(_ responses: [MockResponse]) {
        core.state.withLock { $0.queue.append(contentsOf: responses) }
    }

    /// How many queued responses have not been served yet.
    public var queuedResponseCount: Int {
        core.state.withLock { $0.queue.count }
    }

    /// Answers requests for exactly `path` (no query) with `handler`, which runs on a server
    /// thread; routes are checked before the dispatcher and the queue, the latest first.
    public func route(
        _ path: String, method: RouteMethod = .any,
        _ handler: @escaping @Sendable (RecordedRequest) -> MockResponse
    ) {
        core.state.withLock { $0.addRoute(path: path, method: method, handler: .closure(handler)) }
    }

    /// Answers requests for exactly `path` in full duplex: the response head (`200`, chunked) goes
    /// out as soon as the request head arrived, each piece of the request body is echoed as one
    /// response chunk as soon as it is read, and the request's trailer fields come back as the
    /// response's. The connection closes after the exchange. Checked before every other route.
    public func routeDuplexEcho(_ path: String) {
        core.state.withLock { _ = $0.duplexEchoPaths.insert(path) }
    }

    /// Serves `resource` at exactly `path`, with ranges and conditional requests.
    public func route(_ path: String, method: RouteMethod = .any, _ resource: Resource) {
        core.state.withLock { $0.addRoute(path: path, method: method, handler: .resource(resource)) }
    }

    /// Replaces the resource served at `path` (adding a route if there is none), as if the
    /// file changed on the server; its per-request counters start again.
    public func replace(_ resource: Resource, at path: String) {
        core.state.withLock { state in
            let method =
                state.routes.last { route in
                    guard route.path == path, case .resource = route.handler else { return false }
                    return true
                }?.method ?? .any
            state.routes.removeAll { route in
                guard route.path == path, case .resource = route.handler else { return false }
                return true
            }
            state.addRoute(path: path, method: method, handler: .resource(resource))
        }
    }

    /// Removes every route for `path`.
    public func removeRoutes(_ path: String) {
        core.state.withLock { $0.routes.removeAll { $0.path == path } }
    }

    /// A catch-all used when no route matches, before the queue; nil (the default) uses the
    /// queue. It runs on a server thread.
    public var dispatcher: (@Sendable (RecordedRequest) -> MockResponse)? {
        get { core.state.withLock { $0.dispatcher } }
        set { core.state.withLock { $0.dispatcher = newValue } }
    }

    // MARK: Lifecycle

    /// Stops the server: closes the listener and every connection, opens every gate a response
    /// is held on, wakes waiting `takeRequest` calls (they throw ``TestServerError/shutdown``),
    /// and joins all threads. Idempotent; later calls return the first report.
    ///
    /// The report is not discardable: a test that scripted a response it never used, or sent a
    /// request nothing was scripted for, should fail. Check it with ``ShutdownReport/problems``
    /// (or ``ShutdownReport/problems(unconsumedResponses:unexpectedRequests:webSocketViolations:)`` when a leftover is
    /// intended), or write `_ = server.shutdown()` where it truly does not matter.
    public func shutdown() -> ShutdownReport {
        core.shutdown()
    }

    /// Whether ``shutdown()`` has been called.
    public var isShutDown: Bool {
        core.isStopping
    }
}
