/// What ``TestServer/shutdown()`` found left over: evidence that a test scripted more, or
/// received more, than it expected.
public struct ShutdownReport: Sendable, CustomStringConvertible {
    /// Responses that were enqueued but never served, in queue order.
    public let unconsumedResponses: [MockResponse]
    /// Requests that found nothing scripted and were answered with the fail-fast 599.
    public let unexpectedRequests: [RecordedRequest]

    /// True when every scripted response was used and no request was unexpected.
    public var isClean: Bool {
        unconsumedResponses.isEmpty && unexpectedRequests.isEmpty
    }

    /// A summary of what was left over.
    public var description: String {
        if isClean { return "ShutdownReport(clean)" }
        let unexpected = unexpectedRequests.map(\.requestLine).joined(separator: "; ")
        return "ShutdownReport(\(unconsumedResponses.count) unconsumed responses: \(unconsumedResponses); "
            + "\(unexpectedRequests.count) unexpected requests: \(unexpected))"
    }
}
