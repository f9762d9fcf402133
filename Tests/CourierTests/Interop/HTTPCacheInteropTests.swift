import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier

/// The HTTP cache against servers no one here wrote, nginx's static files and httpbin, on every
/// transport: the second request is a 304 revalidation or no request at all, as the headers say,
/// counted in the servers' own access logs (`.ci/start-servers.sh` writes them).
@Suite("HTTP cache: interop")
struct HTTPCacheInteropTests {
    static let nginxLog = ProcessInfo.processInfo.environment["COURIER_NGINX_CACHE_LOG"].map { URL(fileURLWithPath: $0) }
    static let httpbinLog = ProcessInfo.processInfo.environment["COURIER_HTTPBIN_ACCESS_LOG"].map { URL(fileURLWithPath: $0) }

    /// A session with the HTTP cache on, storing in a directory of its own.
    static func cachingSession(_ transport: TransportUnderTest, baseURL: URL?) -> (Session, URL) {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.httpCache = .enabled
        let directory = makeTemporaryDirectory("http-cache-interop")
        return (
            Session(
                configuration: configuration, baseURL: baseURL, responseCache: ResponseCache(diskDirectory: directory),
                callbackQueue: testCallbackQueue), directory
        )
    }

    /// The lines of `log` that mention `marker` (a unique query each test adds to its URLs), once
    /// there are at least `count` of them, or what there is if they never come. A server writes a
    /// request's access-log line after it has sent the response (gunicorn once logged the last 304
    /// after the client had read it, so the test counted 3 lines of 4), so the lines are awaited.
    static func logLines(_ log: URL, containing marker: String, atLeast count: Int) async -> [String] {
        func read() -> [String] {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            return text.split(separator: "\n").map(String.init).filter { $0.contains(marker) }
        }
        _ = await eventually { read().count >= count }
        return read()
    }

    static func marker() -> String { "run=\(UUID().uuidString)" }

    // MARK: nginx

    @Test(
        .enabled(if: InteropServer.nginx != nil && nginxLog != nil, "nginx is not running (COURIER_NGINX_URL unset)"),
        arguments: TransportUnderTest.available)
    func nginxExpiresServesTheSecondRequestFromTheStore(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.nginx)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        let first = try await session.request("cache/fresh/page.txt?\(marker)").validate().serializingData().value
        let second = await session.request("cache/fresh/page.txt?\(marker)").validate().serializingData().response
        #expect(first.count == 10240)
        #expect(second.value == first)
        #expect(second.source == .cache)
        let lines = try await Self.logLines(#require(Self.nginxLog), containing: marker, atLeast: 1)
        #expect(lines.count == 1, "\(lines)")
    }

    @Test(
        .enabled(if: InteropServer.nginx != nil && nginxLog != nil, "nginx is not running (COURIER_NGINX_URL unset)"),
        arguments: TransportUnderTest.available)
    func nginxNoCacheRevalidatesWithTheETagAndGetsA304(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.nginx)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        for name in ["page.txt", "blob.bin"] {
            let first = try await session.request("cache/revalidate/\(name)?\(marker)").validate().serializingData().value
            let second = await session.request("cache/revalidate/\(name)?\(marker)").validate().serializingData().response
            #expect(second.value == first)
            #expect(second.source == .revalidated)
            #expect(second.response?.statusCode == 200)
        }
        let lines = try await Self.logLines(#require(Self.nginxLog), containing: marker, atLeast: 4)
        #expect(lines.count == 4, "\(lines)")
        // Each second request was conditional and answered 304 (the text one gzip-encoded, so its ETag is weak).
        #expect(lines.filter { $0.contains(" 304 ") && !$0.contains("inm=-") }.count == 2, "\(lines)")
    }

    @Test(
        .enabled(if: InteropServer.nginx != nil && nginxLog != nil, "nginx is not running (COURIER_NGINX_URL unset)"),
        arguments: TransportUnderTest.available)
    func nginxLastModifiedAloneGivesHeuristicFreshness(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.nginx)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        _ = try await session.request("cache/heuristic/blob.bin?\(marker)").validate().serializingData().value
        let second = await session.request("cache/heuristic/blob.bin?\(marker)").validate().serializingData().response
        // Last-Modified 10 days before Date: fresh for 10% of that, a day.
        #expect(second.source == .cache)
        #expect(try await Self.logLines(#require(Self.nginxLog), containing: marker, atLeast: 1).count == 1)
    }

    /// On the curl transport only: the URLSession transport cannot trust the test CA.
    @Test(
        .enabled(if: InteropServer.nginxHTTPS != nil && nginxLog != nil && InteropServer.testCA != nil, "nginx TLS is not running"),
        arguments: TransportUnderTest.available.filter { $0 == .curl })
    func nginxOverHTTP2RevalidatesToo(transport: TransportUnderTest) async throws {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.httpCache = .enabled
        configuration.additionalTrustedCertificates = [try #require(InteropServer.testCA)]
        let session = Session(configuration: configuration, baseURL: InteropServer.nginxHTTPS, callbackQueue: testCallbackQueue)
        let marker = Self.marker()
        let first = try await session.request("cache/revalidate/blob.bin?\(marker)").validate().serializingData().value
        let second = await session.request("cache/revalidate/blob.bin?\(marker)").validate().serializingData().response
        #expect(second.value == first)
        #expect(second.source == .revalidated)
        #expect(second.metrics?.httpVersion == "HTTP/2")
        let lines = try await Self.logLines(#require(Self.nginxLog), containing: marker, atLeast: 2)
        #expect(lines.map { $0.contains(" 304 ") } == [false, true], "\(lines)")
    }

    // MARK: httpbin

    @Test(
        .enabled(if: InteropServer.httpbin != nil && httpbinLog != nil, "httpbin is not running (COURIER_HTTPBIN_URL unset)"),
        arguments: TransportUnderTest.available)
    func httpbinCacheNIsFreshForNSeconds(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.httpbin)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        _ = try await session.request("cache/600?\(marker)").validate().serializingData().value
        let second = await session.request("cache/600?\(marker)").validate().serializingData().response
        #expect(second.source == .cache)
        #expect(try await Self.logLines(#require(Self.httpbinLog), containing: marker, atLeast: 1).count == 1)
    }

    @Test(
        .enabled(if: InteropServer.httpbin != nil && httpbinLog != nil, "httpbin is not running (COURIER_HTTPBIN_URL unset)"),
        arguments: TransportUnderTest.available)
    func httpbinCacheAndEtagAnswer304ToTheRevalidation(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.httpbin)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        // /cache sends Last-Modified (now) and an ETag, no freshness: stale at once, so revalidated.
        // /etag/{etag} sends only the ETag and honours If-None-Match.
        for path in ["cache", "etag/courier-\(marker.suffix(8))"] {
            let first = try await session.request("\(path)?\(marker)").validate().serializingData().value
            let second = await session.request("\(path)?\(marker)").validate().serializingData().response
            #expect(second.value == first, "\(path)")
            #expect(second.source == .revalidated, "\(path)")
        }
        let lines = try await Self.logLines(#require(Self.httpbinLog), containing: marker, atLeast: 4)
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.filter { $0.contains("\" 304 ") }.count == 2, "\(lines)")
    }

    @Test(
        .enabled(if: InteropServer.httpbin != nil && httpbinLog != nil, "httpbin is not running (COURIER_HTTPBIN_URL unset)"),
        arguments: TransportUnderTest.available)
    func httpbinResponseHeadersDriveStorage(transport: TransportUnderTest) async throws {
        let (session, directory) = Self.cachingSession(transport, baseURL: InteropServer.httpbin)
        defer { try? FileManager.default.removeItem(at: directory) }
        let marker = Self.marker()
        func twice(_ cacheControl: String) async throws -> ResponseSource {
            let path = "response-headers?Cache-Control=\(cacheControl)&\(marker)"
            _ = try await session.request(path).validate().serializingData().value
            return await session.request(path).validate().serializingData().response.source
        }
        // An hour: the two requests of a pair once came 95 s apart on a loaded machine, and the
        // cache's clock is the system's here (it is the server's freshness that is tested).
        #expect(try await twice("max-age=3600") == .cache)
        #expect(try await twice("no-store") == .network)
        let lines = try await Self.logLines(#require(Self.httpbinLog), containing: marker, atLeast: 3)
        #expect(lines.count == 3, "\(lines)")
    }
}
