import Foundation

extension Request {
    /// For a session that only ever runs this one request at a time (the `courier` tool): its
    /// stream may share an HTTP/2 connection like any other body, since no sibling can wait
    /// behind its pauses. Otherwise the curl transport gives such a stream a connection of its own
    /// where libcurl's paused HTTP/2 streams hold up their siblings (before 8.1.0).
    @discardableResult
    package nonisolated func sharesConnectionsAsAnyRequest() -> Self {
        engineAccess.perform { $0.pacedStreamMayShare = true }
        return self
    }

    /// Speaks `version` for this request instead of the session's ``SessionConfiguration/httpVersion``.
    @discardableResult
    public nonisolated func httpVersion(_ version: HTTPVersion) -> Self {
        engineAccess.perform { $0.httpVersion = version }
        return self
    }
}
