import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer
import CourierLocking

/// The namespace for the app-layer features (response cache, server pool, URL filters, request
/// groups, envelopes), so `swift test --filter AppLayer` runs exactly these.
@Suite("AppLayer") enum AppLayer {}

/// A wall clock that stands still until the test moves it, to expire cache entries without
/// sleeping (the cache stamps what it stores with the same clock).
final class TestTime: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_750_000_000))

    var now: Date { current.withLock { $0 } }

    func advance(by duration: Duration) {
        current.withLock { $0 = $0.addingTimeInterval(duration.timeInterval) }
    }
}

/// A monotonic instant that only moves when the test says so, for server-pool cool-downs.
final class TestInstant: Sendable {
    private let instant = Locked(ContinuousClock.now)

    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    func advance(by duration: Duration) {
        instant.withLock { $0 += duration }
    }
}

/// Records the session notices a monitor receives.
final class NoticeRecorder: EventMonitor {
    private let notices = Locked([SessionNotice]())

    var all: [SessionNotice] { notices.withLock { $0 } }
    var switches: [SessionNotice] { all.filter { $0.kind == .serverSwitched } }

    func session(_ session: Session, didNotice notice: SessionNotice) {
        notices.withLock { $0.append(notice) }
    }
}

/// A fresh, empty directory under the temporary directory.
func makeTemporaryDirectory(_ label: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(label)-\(UUID().uuidString)", isDirectory: true)
}

/// The configuration every app-layer session uses: the transport under test and private cookies.
func appConfiguration(_ transport: TransportUnderTest) -> SessionConfiguration {
    var configuration = SessionConfiguration.testing
    configuration.transport = transport.choice
    configuration.cookies = .storage(HTTPCookieStorage.makeIsolated())
    configuration.temporaryDirectory = makeTemporaryDirectory("tests")
    return configuration
}

/// A session on `transport` talking to `server` with its own response cache.
func makeCachingSession(
    _ transport: TransportUnderTest, server: TestServer, cache: ResponseCache,
    headers: HTTPHeaders = [:]
) -> Session {
    Session(
        configuration: appConfiguration(transport), baseURL: server.baseURL, headers: headers,
        responseCache: cache, callbackQueue: testCallbackQueue)
}

/// A session whose relative paths resolve against `servers`.
func makePoolSession(
    _ transport: TransportUnderTest, servers: ServerPool, monitors: [any EventMonitor] = [],
    interceptor: (any RequestInterceptor)? = nil
) -> Session {
    Session(
        servers: servers, configuration: appConfiguration(transport), interceptor: interceptor,
        eventMonitors: monitors, callbackQueue: testCallbackQueue)
}

/// Answers `path` with a body that counts the requests it served: `"<prefix>1"`, `"<prefix>2"`, ...
func routeCounting(_ server: TestServer, _ path: String, prefix: String = "v") {
    let served = Locked(0)
    server.route(path) { _ in
        let count = served.withLock { count -> Int in
            count += 1
            return count
        }
        return MockResponse.text("\(prefix)\(count)")
    }
}

extension DataResponse {
    /// The body as UTF-8 text.
    var text: String? { data.map { String(decoding: $0, as: UTF8.self) } }
}
