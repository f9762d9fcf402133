import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

/// Issue 36: a stored response keeps `Content-Encoding` when its body is stored still coded
/// (the transport did not decode it: decoding off), so a coded body is never replayed as if it
/// were plain; a request that decodes never gets such an entry.
@Suite("HTTP cache: content codings end to end") struct HTTPCacheCodingTests {
    static let text = String(repeating: "compressible text, ", count: 500)
    static let gzipMagic = Data([0x1F, 0x8B])

    static func session(
        _ transport: TransportUnderTest, server: TestServer, cache: ResponseCache, decoding: Bool, events: HTTPCacheEndToEndTests.CacheEvents? = nil
    ) -> Session {
        var configuration = appConfiguration(transport)
        configuration.httpCache = .enabled
        configuration.automaticDecompression = decoding
        return Session(
            configuration: configuration, baseURL: server.baseURL, eventMonitors: events.map { [$0] } ?? [], responseCache: cache,
            callbackQueue: testCallbackQueue)
    }

    /// With decoding off, what the network handed over is what the store replays: the same bytes
    /// with the same `Content-Encoding`. Where the transport still decodes (FoundationNetworking
    /// always does), the body is plain and stored without the field.
    @Test(arguments: TransportUnderTest.available)
    func aBodyKeptCodedIsReplayedWithItsCoding(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/gz") { _ in MockResponse.text(Self.text).header("Cache-Control", "max-age=600").gzip() }
            let directory = makeTemporaryDirectory("coded")
            defer { try? FileManager.default.removeItem(at: directory) }
            let cache = ResponseCache(diskDirectory: directory)
            let plain = Self.session(transport, server: server, cache: cache, decoding: false)

            let first = await plain.request("gz").serializingData().response
            let firstBody = try #require(first.value)
            let coded = firstBody.starts(with: Self.gzipMagic)
            if transport == .curl { #expect(coded, "the curl transport hands the body over as it came when decoding is off") }
            if !coded { #expect(firstBody == Data(Self.text.utf8)) }

            // From memory, then from disk (a new cache on the same directory).
            for replay in [plain, Self.session(transport, server: server, cache: ResponseCache(diskDirectory: directory), decoding: false)] {
                let again = await replay.request("gz").serializingData().response
                #expect(again.source == .cache)
                #expect(again.value == firstBody, "the stored bytes are the bytes handed over")
                #expect(again.response?.value(forHTTPHeaderField: "Content-Encoding") == (coded ? "gzip" : nil), "coded: \(coded)")
                #expect(again.response?.value(forHTTPHeaderField: "Content-Length") == String(firstBody.count))
            }
            #expect(server.requestCount(path: "/gz") == 1)

            // A session that decodes, on the same store, never gets the coded body: it asks the
            // server, and what it stores (decoded) is what it replays.
            let events = HTTPCacheEndToEndTests.CacheEvents()
            let decoding = Self.session(transport, server: server, cache: cache, decoding: true, events: events)
            let decoded = await decoding.request("gz").serializingString().response
            #expect(decoded.value == Self.text)
            #expect(decoded.source == (coded ? .network : .cache))
            if coded {
                #expect(events.all.contains { if case .miss(let reason) = $0 { reason.contains("content coding") } else { false } }, "\(events.all)")
                let replayed = await decoding.request("gz").serializingString().response
                #expect(replayed.value == Self.text)
                #expect(replayed.source == .cache)
                #expect(replayed.response?.value(forHTTPHeaderField: "Content-Encoding") == nil)
            }
        }
    }

    /// The TTL cache keeps the coding of a body it stores still coded, too.
    @Test(arguments: TransportUnderTest.available)
    func theTTLCacheKeepsTheCodingOfACodedBody(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/ttl-gz") { _ in MockResponse.text(Self.text).gzip() }
            var configuration = appConfiguration(transport)
            configuration.automaticDecompression = false
            let session = Session(
                configuration: configuration, baseURL: server.baseURL, responseCache: ResponseCache(), callbackQueue: testCallbackQueue)
            let first = await session.request("ttl-gz").cached(for: .seconds(600)).serializingData().response
            let body = try #require(first.value)
            let coded = body.starts(with: Self.gzipMagic)
            let again = await session.request("ttl-gz").cached(for: .seconds(600)).serializingData().response
            #expect(again.source == .cache)
            #expect(again.value == body)
            #expect(again.response?.value(forHTTPHeaderField: "Content-Encoding") == (coded ? "gzip" : nil))
            let last = await session.request("ttl-gz").cachedResponse()
            #expect(last?.response?.value(forHTTPHeaderField: "Content-Encoding") == (coded ? "gzip" : nil))
        }
    }
}
