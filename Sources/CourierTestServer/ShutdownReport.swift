/// What ``TestServer/shutdown()`` found left over: evidence that a test scripted more, or
/// received more, than it expected.
///
/// A report is *clean* when every response put on the queue with `enqueue` was served,
/// no request found nothing scripted (which the server answered with the fail-fast
/// 599), and no WebSocket client broke RFC 6455. Routes, resources and the dispatcher answer
/// any number of requests, so they cannot be left over.
///
/// Check every report: `shutdown()` is not `@discardableResult`. Tests use ``isClean`` and
/// ``problems`` directly (`#expect(report.problems == [])`, `XCTAssertEqual(report.problems, [])`),
/// or ``problems(unconsumedResponses:unexpectedRequests:webSocketViolations:)`` when leaving something over is the
/// point of the test.
public struct ShutdownReport: Sendable, CustomStringConvertible {
    /// Responses that were enqueued but never served, in queue order.
    public let unconsumedResponses: [MockResponse]
    /// Requests that found nothing scripted and were answered with the fail-fast 599.
    public let unexpectedRequests: [RecordedRequest]
    /// Every WebSocket protocol violation a client committed (see
    /// ``WebSocketRecording/violations``), and every invalid WebSocket handshake request, each
    /// prefixed with its path.
    public internal(set) var webSocketViolations: [String] = []

    /// True when every scripted response was used, no request was unexpected, and no WebSocket
    /// client broke the protocol.
    public var isClean: Bool {
        unconsumedResponses.isEmpty && unexpectedRequests.isEmpty && webSocketViolations.isEmpty
    }

    /// One line for each kind of leftover, naming what was left over; empty exactly when
    /// ``isClean``.
    public var problems: [String] {
        problems(unconsumedResponses: 0, unexpectedRequests: 0)
    }

    /// One line for each way this report differs from a shutdown that left exactly
    /// `unconsumedResponses` scripted responses unserved and answered exactly `unexpectedRequests`
    /// requests with the fail-fast 599; empty when it matches.
    ///
    /// For tests whose point is a leftover, e.g. a client that gives up before its second request:
    /// `#expect(server.shutdown().problems(unconsumedResponses: 1) == [])`. Counts are exact, so a
    /// test that leaves over more (or less) than it says still fails.
    ///
    /// `webSocketViolations` is the exact number of WebSocket protocol violations expected (for a
    /// test whose client misbehaves on purpose).
    public func problems(
        unconsumedResponses expectedUnconsumed: Int = 0,
        unexpectedRequests expectedUnexpected: Int = 0,
        webSocketViolations expectedViolations: Int = 0
    ) -> [String] {
        var problems: [String] = []
        if unconsumedResponses.count != expectedUnconsumed {
            problems.append(
                "\(unconsumedResponses.count) unconsumed responses (expected \(expectedUnconsumed)): "
                    + unconsumedResponses.map(\.description).joined(separator: "; "))
        }
        if unexpectedRequests.count != expectedUnexpected {
            problems.append(
                "\(unexpectedRequests.count) unexpected requests (expected \(expectedUnexpected)): "
                    + unexpectedRequests.map(\.requestLine).joined(separator: "; "))
        }
        if webSocketViolations.count != expectedViolations {
            problems.append(
                "\(webSocketViolations.count) WebSocket protocol violations (expected \(expectedViolations)): "
                    + webSocketViolations.joined(separator: "; "))
        }
        return problems
    }

    /// A summary of what was left over.
    public var description: String {
        if isClean { return "ShutdownReport(clean)" }
        let unexpected = unexpectedRequests.map(\.requestLine).joined(separator: "; ")
        return "ShutdownReport(\(unconsumedResponses.count) unconsumed responses: \(unconsumedResponses); "
            + "\(unexpectedRequests.count) unexpected requests: \(unexpected); "
            + "\(webSocketViolations.count) WebSocket violations: \(webSocketViolations))"
    }
}
