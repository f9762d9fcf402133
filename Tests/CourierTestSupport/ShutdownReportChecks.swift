import CourierTestServer
import Testing
#if canImport(XCTest)
import XCTest
#endif

/// Records a Swift Testing issue for each problem in `report`: a test server's shutdown that left
/// responses unserved, answered requests nothing was scripted for, or saw a WebSocket client break
/// RFC 6455.
///
/// Clean means what ``ShutdownReport/isClean`` means: every enqueued response was served and no
/// request got the fail-fast 599. When a leftover is the point of a test, pass the exact counts
/// it expects (`expectClean(server.shutdown(), unconsumedResponses: 1)`); a different count is
/// still an issue.
///
/// ```swift
/// let server = try TestServer()
/// defer { expectClean(server.shutdown()) }
/// ```
public func expectClean(
    _ report: ShutdownReport, unconsumedResponses: Int = 0, unexpectedRequests: Int = 0,
    webSocketViolations: Int = 0, _ comment: Comment? = nil, sourceLocation: SourceLocation = #_sourceLocation
) {
    for problem in report.problems(
        unconsumedResponses: unconsumedResponses, unexpectedRequests: unexpectedRequests,
        webSocketViolations: webSocketViolations)
    {
        let context = comment.map { " (\($0.rawValue))" } ?? ""
        Issue.record(Comment(rawValue: "test server shutdown: \(problem)\(context)"), sourceLocation: sourceLocation)
    }
}

#if canImport(XCTest)
/// The XCTest form of ``expectClean(_:unconsumedResponses:unexpectedRequests:webSocketViolations:_:sourceLocation:)``:
/// fails the current XCTest test once for each problem in `report`, with the same meaning of
/// clean and the same exact leftover counts.
public func XCTAssertClean(
    _ report: ShutdownReport, unconsumedResponses: Int = 0, unexpectedRequests: Int = 0,
    _ message: @autoclosure () -> String = "", file: StaticString = #filePath, line: UInt = #line
) {
    for problem in report.problems(unconsumedResponses: unconsumedResponses, unexpectedRequests: unexpectedRequests) {
        let context = message()
        XCTFail("test server shutdown: \(problem)\(context.isEmpty ? "" : " (\(context))")", file: file, line: line)
    }
}
#endif
