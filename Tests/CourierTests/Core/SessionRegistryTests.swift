import Foundation
import Testing

@testable import Courier

/// The session keeps its requests weakly (so `cancelAllRequests()` and `shutdown` can reach them);
/// a request made and released without ever ending must not stay in that table for the session's life.
@Suite struct SessionRegistryTests {
    static let url = URL(string: "http://127.0.0.1:9/never-sent")!

    @Test func requestsReleasedWithoutStartingAreNotKeptForever() {
        let session = Session()
        for _ in 0..<2_000 { _ = session.request(Self.url) }
        // Swept as the table grows: at most the sweep's threshold, not one entry per request.
        #expect(session.registeredRequestCount < 128)
    }

    @Test func requestsStillHeldAreKeptAndCancelledWithTheSession() async {
        let session = Session()
        let held = (0..<100).map { _ in session.request(Self.url) }
        for _ in 0..<1_000 { _ = session.request(Self.url) }
        #expect(session.registeredRequestCount >= held.count)
        #expect(session.registeredRequestCount < held.count + 256)
        session.cancelAllRequests()
        for request in held { #expect(await request.state == .cancelled) }
    }
}
