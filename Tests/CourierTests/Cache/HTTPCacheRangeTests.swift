import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

/// Issue 36: `Range` requests answered from the store (RFC 9111 §3.3–3.4, RFC 9110 §14) through
/// real requests on both transports: a `206` built from a stored complete response, a `416`,
/// `If-Range`, several ranges left to the server, and partial responses stored and combined.
@Suite("HTTP cache: ranges end to end") struct HTTPCacheRangeTests {
    typealias Fixture = HTTPCacheEndToEndTests.Fixture
    static let length = 300 << 10
    static let body = PatternBody.data(offset: 0, count: length, seed: 36)

    /// Serves `body` at `/file` with a strong ETag, byte ranges and `max-age`.
    static func routeFile(_ server: TestServer, path: String = "/file") {
        server.route(path, Resource(data: body, etag: "\"r1\"").header("Cache-Control", "max-age=600"))
    }

    static func get(_ f: Fixture, _ path: String, range: String?, headers: HTTPHeaders = [:]) async -> DataResponse<Data, CourierError> {
        var headers = headers
        if let range { headers.update(name: "Range", value: range) }
        return await f.session.request(path, headers: headers).serializingData().response
    }

    static func slice(_ range: ClosedRange<Int>) -> Data { body.subdata(in: range.lowerBound..<(range.upperBound + 1)) }

    @Test(arguments: TransportUnderTest.available)
    func aStoredResponseAnswersRangesWithoutTheServer(transport: TransportUnderTest) async throws {
        let directory = makeTemporaryDirectory("ranges")
        defer { try? FileManager.default.removeItem(at: directory) }
        try await HTTPCacheEndToEndTests.withFixture(transport, directory: directory) { f in
            Self.routeFile(f.server)
            #expect(await Self.get(f, "file", range: nil).value == Self.body)

            let middle = await Self.get(f, "file", range: "bytes=1000-70999")
            #expect(middle.response?.statusCode == 206)
            #expect(middle.source == .cache)
            #expect(middle.value == Self.slice(1000...70999))
            #expect(middle.response?.value(forHTTPHeaderField: "Content-Range") == "bytes 1000-70999/\(Self.length)")
            #expect(middle.response?.value(forHTTPHeaderField: "Content-Length") == "70000")

            let suffix = await Self.get(f, "file", range: "bytes=-100")
            #expect(suffix.response?.statusCode == 206)
            #expect(suffix.value == Self.slice((Self.length - 100)...(Self.length - 1)))

            let matching = await Self.get(f, "file", range: "bytes=0-9", headers: ["If-Range": "\"r1\""])
            #expect(matching.response?.statusCode == 206 && matching.value == Self.slice(0...9))
            let changed = await Self.get(f, "file", range: "bytes=0-9", headers: ["If-Range": "\"r0\""])
            #expect(changed.response?.statusCode == 200, "If-Range that does not match: the whole response, as the server would")
            #expect(changed.value == Self.body)
            #expect(changed.source == .cache)

            let past = await Self.get(f, "file", range: "bytes=\(Self.length)-")
            #expect(past.response?.statusCode == 416)
            #expect(past.source == .cache)
            #expect(past.response?.value(forHTTPHeaderField: "Content-Range") == "bytes */\(Self.length)")
            #expect(past.value?.isEmpty ?? true)

            // A new session on the same directory answers from disk the same way.
            let fromDisk = Session(
                configuration: f.session.configuration, baseURL: f.server.baseURL,
                responseCache: ResponseCache(memoryCapacity: 0, diskDirectory: directory, now: { f.time.now }), callbackQueue: testCallbackQueue)
            let onDisk = await fromDisk.request("file", headers: ["Range": "bytes=200000-200099"]).serializingData().response
            #expect(onDisk.response?.statusCode == 206 && onDisk.value == Self.slice(200_000...200_099))
            #expect(onDisk.source == .cache)
            #expect(f.seen("/file").count == 1, "every range came from the store")

            // Several ranges: the server answers (no multipart/byteranges is built from the store).
            let several = await Self.get(f, "file", range: "bytes=0-1,5-6")
            #expect(several.source == .network)
            #expect(f.seen("/file").count == 2)
        }
    }

    /// A stale stored response answers a range after a `304`; the conditional request carries the
    /// caller's `Range`, so a changed resource sends only the bytes asked for.
    @Test(arguments: TransportUnderTest.available)
    func aRevalidatedResponseAnswersTheRange(transport: TransportUnderTest) async throws {
        try await HTTPCacheEndToEndTests.withFixture(transport) { f in
            f.server.route("/stale", Resource(data: Self.body, etag: "\"r1\"").header("Cache-Control", "max-age=10"))
            #expect(await Self.get(f, "stale", range: nil).value == Self.body)
            f.time.advance(by: .seconds(60))
            let revalidated = await Self.get(f, "stale", range: "bytes=10-19")
            #expect(revalidated.response?.statusCode == 206)
            #expect(revalidated.value == Self.slice(10...19))
            #expect(revalidated.source == .revalidated)
            let conditional = try #require(f.seen("/stale").last)
            #expect(conditional.headers["If-None-Match"] == "\"r1\"")
            #expect(conditional.headers["Range"] == "bytes=10-19")
        }
    }

    /// Partial responses are kept and combined (RFC 9111 §3.4) until the whole representation is
    /// there; a part never answers a request for more than it holds.
    @Test(arguments: TransportUnderTest.available)
    func partialResponsesAreStoredAndCombined(transport: TransportUnderTest) async throws {
        try await HTTPCacheEndToEndTests.withFixture(transport) { f in
            Self.routeFile(f.server)
            let first = await Self.get(f, "file", range: "bytes=0-99999")
            #expect(first.response?.statusCode == 206 && first.source == .network && first.value == Self.slice(0...99_999))

            let inside = await Self.get(f, "file", range: "bytes=500-1499")
            #expect(inside.source == .cache && inside.value == Self.slice(500...1499))
            #expect(inside.response?.value(forHTTPHeaderField: "Content-Range") == "bytes 500-1499/\(Self.length)")

            let whole = await Self.get(f, "file", range: nil)
            #expect(whole.source == .network, "a part never answers for the whole")
            #expect(whole.value == Self.body)
            #expect(await Self.get(f, "file", range: nil).source == .cache, "the whole response replaced the part")

            // Another URL: parts that touch, then one that completes it.
            Self.routeFile(f.server, path: "/parts")
            #expect(await Self.get(f, "parts", range: "bytes=100000-199999").source == .network)
            let next = await Self.get(f, "parts", range: "bytes=200000-")
            #expect(next.source == .network && next.value == Self.slice(200_000...(Self.length - 1)))
            let joined = await Self.get(f, "parts", range: "bytes=150000-250000")
            #expect(joined.source == .cache, "the two parts were combined")
            #expect(joined.value == Self.slice(150_000...250_000))
            #expect(await Self.get(f, "parts", range: nil).source == .network, "still not the whole")
            #expect(await Self.get(f, "parts", range: nil).source == .cache)

            Self.routeFile(f.server, path: "/completed")
            #expect(await Self.get(f, "completed", range: "bytes=1000-").source == .network)
            #expect(await Self.get(f, "completed", range: "bytes=0-999").source == .network)
            let complete = await Self.get(f, "completed", range: nil)
            #expect(complete.source == .cache, "two parts that make the whole are served as a 200")
            #expect(complete.response?.statusCode == 200 && complete.value == Self.body)
            #expect(f.seen("/completed").count == 2)
        }
    }

    /// The download store's resumable downloads never use the HTTP cache, even with the whole
    /// response stored and fresh: the download and its `Range` + `If-Range` resume go to the
    /// server, and what they bring is not stored (the partial file is the download store's).
    @Test(arguments: TransportUnderTest.available)
    func resumableDownloadsLeaveTheCacheAlone(transport: TransportUnderTest) async throws {
        let storeDirectory = makeTemporaryDirectory("range-downloads")
        let output = makeTemporaryDirectory("range-downloads-out")
        defer {
            try? FileManager.default.removeItem(at: storeDirectory)
            try? FileManager.default.removeItem(at: output)
        }
        try await withServer { server async throws in
            let size: Int64 = 3_000_000
            server.route(
                "/big.bin", Resource(pattern: size, seed: 7, etag: "\"d1\"").header("Cache-Control", "max-age=600").interruptedOnce(after: 1_000_000))
            var configuration = appConfiguration(transport)
            configuration.httpCache = .enabled
            let session = Session(
                configuration: configuration, baseURL: server.baseURL, downloadStore: DownloadStore(directory: storeDirectory),
                responseCache: ResponseCache(memoryCapacity: 64 << 20), callbackQueue: testCallbackQueue)
            let destination = DownloadDestination.file(
                output.appendingPathComponent("big.bin"), options: [.createIntermediateDirectories, .removePreviousFile])

            // Interrupted once (the resource stalls its first response), then stored whole by a GET.
            let first = session.download("big.bin", to: destination, resumable: true)
            var progress = first.downloadProgress.makeAsyncIterator()
            while let value = await progress.next(), value.completedUnitCount < 1_000_000 {}
            first.cancel()
            _ = await first.serializingDownloadedFileURL().response
            let whole = await session.request("big.bin").serializingData().response
            #expect(whole.value?.count == Int(size) && whole.source == .network)
            #expect(await session.request("big.bin").serializingData().response.source == .cache)

            let resumed = try await session.download("big.bin", to: destination, resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: resumed) == PatternBody.data(offset: 0, count: Int(size), seed: 7))
            let resume = try #require(server.recordedRequests.last)
            #expect(resume.headers["Range"] == "bytes=1000000-", "the resume went to the server")
            #expect(resume.headers["If-Range"] == "\"d1\"")
            #expect(server.requestCount(path: "/big.bin") == 3)
            let stillWhole = await session.request("big.bin").serializingData().response
            #expect(stillWhole.source == .cache && stillWhole.response?.statusCode == 200 && stillWhole.value?.count == Int(size))
        }
    }

    /// The TTL cache's key has no `Range`: it neither serves a range nor stores a part.
    @Test(arguments: TransportUnderTest.available)
    func theTTLCacheNeitherServesNorStoresRanges(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            Self.routeFile(server)
            let session = Session(
                configuration: appConfiguration(transport), baseURL: server.baseURL, responseCache: ResponseCache(), callbackQueue: testCallbackQueue)
            let part = await session.request("file", headers: ["Range": "bytes=0-9"]).cached(for: .seconds(600)).serializingData().response
            #expect(part.response?.statusCode == 206)
            let whole = await session.request("file").cached(for: .seconds(600)).serializingData().response
            #expect(whole.source == .network, "the part was not stored as the response")
            #expect(whole.value == Self.body)
            let ranged = await session.request("file", headers: ["Range": "bytes=0-9"]).cached(for: .seconds(600)).serializingData().response
            #expect(ranged.source == .network && ranged.value == Self.slice(0...9), "the whole is not served for a range")
        }
    }
}
