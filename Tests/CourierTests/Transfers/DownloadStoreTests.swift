import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Resumable downloads through the DownloadStore: resume from disk, restarts, and every way a
/// server or a journal can disagree.
@Suite struct DownloadStoreTests {
    let storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-store-tests-\(UUID().uuidString)")
    let outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-store-out-\(UUID().uuidString)")

    func session(_ transport: TransportUnderTest, _ server: TestServer) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        configuration.cookies = .none
        return Session(
            configuration: configuration, baseURL: server.baseURL, downloadStore: DownloadStore(directory: storeDirectory),
            callbackQueue: testCallbackQueue)
    }

    func destination(_ name: String = "out.bin") -> DownloadDestination {
        .file(outputDirectory.appendingPathComponent(name), options: [.createIntermediateDirectories, .removePreviousFile])
    }

    /// Starts a resumable download and cancels it once `bytes` have arrived; the resource must stall
    /// its first response there (`.interruptedOnce(after:)`), so the cancel always lands mid-body.
    func interrupted(_ session: Session, _ path: String, after bytes: Int64) async {
        let download = session.download(path, to: destination(), resumable: true)
        var values = download.downloadProgress.makeAsyncIterator()
        while let value = await values.next(), value.completedUnitCount < bytes {}
        download.cancel()
        _ = await download.serializingDownloadedFileURL().response
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: storeDirectory)
        try? FileManager.default.removeItem(at: outputDirectory)
    }

    @Test(arguments: TransportUnderTest.available)
    func resumesFromDiskInANewSession(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let size: Int64 = 6_000_000
            server.route("/big.iso", Resource(pattern: size, seed: 4, etag: "\"v1\"").interruptedOnce(after: 2_000_000))
            await interrupted(session(transport, server), "big.iso", after: 2_000_000)
            let partial = try #require(DownloadStore(directory: storeDirectory).partialDownloads().first)
            #expect(partial.bytesOnDisk == 2_000_000)
            #expect(partial.expectedLength == size)
            #expect(partial.validator == "\"v1\"")

            // A brand-new session stands in for a restarted process.
            let fresh = session(transport, server)
            let progress = Collected<TransferProgress>()
            let download = fresh.download("big.iso", to: destination(), resumable: true).onDownloadProgress(queue: testCallbackQueue) {
                progress.append($0)
            }
            let url = try await download.serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == PatternBody.data(offset: 0, count: Int(size), seed: 4))
            let resume = try #require(server.recordedRequests.last)
            #expect(resume.headers["Range"] == "bytes=\(partial.bytesOnDisk)-")
            #expect(resume.headers["If-Range"] == "\"v1\"")
            #expect(resume.headers["Accept-Encoding"] == "identity")
            #expect(server.bytesSent(path: "/big.iso") == size)
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            #expect(progress.all.first?.completedUnitCount ?? 0 >= partial.bytesOnDisk)
            #expect(progress.all.last == .finished(size))
            #expect(fresh.downloadStore.partialDownloads().isEmpty)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aChangedResourceStartsOver(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let size: Int64 = 3_000_000
            server.route("/file", Resource(pattern: size, seed: 1, etag: "\"old\"").interruptedOnce(after: 500_000))
            await interrupted(session(transport, server), "file", after: 500_000)
            server.replace(Resource(pattern: size, seed: 2, etag: "\"new\""), at: "/file")
            let url = try await session(transport, server).download("file", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == PatternBody.data(offset: 0, count: Int(size), seed: 2))
            let last = try #require(server.recordedRequests.last)
            #expect(last.headers["If-Range"] == "\"old\"")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aServerThatIgnoresRangeDuplicatesNothing(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let size: Int64 = 3_000_000
            server.route("/file", Resource(pattern: size, seed: 8, etag: "\"v\"").ignoringRange().interruptedOnce(after: 500_000))
            await interrupted(session(transport, server), "file", after: 500_000)
            let url = try await session(transport, server).download("file", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == PatternBody.data(offset: 0, count: Int(size), seed: 8))
        }
    }

    /// Writes a partial and its journal as a previous run would have left them.
    func plantPartial(url: URL, bytes: Data, expectedLength: Int64?, etag: String?) throws {
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        let paths = DownloadStore.Paths(directory: storeDirectory, key: DownloadStore.key(url: url, method: .get))
        try bytes.write(to: paths.part)
        let journal = DownloadJournal(
            url: url.absoluteString, method: "GET", etag: etag, lastModified: nil, expectedLength: expectedLength,
            durableLength: Int64(bytes.count), bootID: BootIdentity.current, createdAt: Date(), updatedAt: Date())
        try journal.save(to: paths.journal)
    }

    @Test(arguments: TransportUnderTest.available)
    func aCompletePartialAnswered416IsDelivered(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let content = PatternBody.data(offset: 0, count: 100_000, seed: 3)
            server.route("/done", Resource(data: content, etag: "\"d\""))
            try plantPartial(url: server.url("/done"), bytes: content, expectedLength: 100_000, etag: "\"d\"")
            let response = await session(transport, server).download("done", to: destination(), resumable: true).serializingDownloadedFileURL()
                .response
            #expect(response.response?.statusCode == 200)
            #expect(try Data(contentsOf: try #require(response.value)) == content)
            #expect(server.recordedRequests.map { $0.headers["Range"] } == ["bytes=100000-"])
            #expect(server.bytesSent(path: "/done") == 0)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func a416ThatContradictsTheJournalStartsOver(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let content = PatternBody.data(offset: 0, count: 50_000, seed: 5)
            server.route("/shrunk", Resource(data: content, etag: "\"s\""))
            // The journal believes in 80,000 bytes; the server now has 50,000.
            try plantPartial(
                url: server.url("/shrunk"), bytes: PatternBody.data(offset: 0, count: 60_000, seed: 5), expectedLength: 80_000, etag: "\"s\"")
            let url = try await session(transport, server).download("shrunk", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == content)
            #expect(server.recordedRequests.map { $0.headers["Range"] } == ["bytes=60000-", nil])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aContentRangeMismatchStartsOver(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let content = PatternBody.data(offset: 0, count: 40_000, seed: 6)
            server.route("/liar") { request in
                guard request.headers["Range"] != nil else { return MockResponse.ok(content).header("ETag", "\"l\"") }
                // Claims a range that does not start where the client asked.
                return MockResponse(status: 206, headers: ["Content-Range": "bytes 0-99/40000", "ETag": "\"l\""], body: .data(content.prefix(100)))
            }
            try plantPartial(url: server.url("/liar"), bytes: content.prefix(10_000), expectedLength: 40_000, etag: "\"l\"")
            let url = try await session(transport, server).download("liar", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == content)
        }
    }

    @Test(arguments: TransportUnderTest.available, ["", "{\"version\":1,", "\u{0}\u{1}garbage", "{\"version\":99}"])
    func aCorruptJournalMeansACleanStart(transport: TransportUnderTest, journal: String) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let content = PatternBody.data(offset: 0, count: 30_000, seed: 7)
            server.route("/f", Resource(data: content, etag: "\"f\""))
            try plantPartial(url: server.url("/f"), bytes: Data(repeating: 0xEE, count: 5_000), expectedLength: 30_000, etag: "\"f\"")
            let paths = DownloadStore.Paths(directory: storeDirectory, key: DownloadStore.key(url: server.url("/f"), method: .get))
            try Data(journal.utf8).write(to: paths.journal)
            let url = try await session(transport, server).download("f", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == content)
            #expect(server.recordedRequests.first?.headers["Range"] == nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anotherSessionCannotTakeAPartialInUse(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/shared", Resource(pattern: 100_000, seed: 1, etag: "\"x\"").waiting(for: gate))
            let first = session(transport, server).download("shared", to: destination("a.bin"), resumable: true)
            let firstTask = first.serializingDownloadedFileURL()
            firstTask.resume()
            #expect(await gate.waitUntilWaiting(count: 1))
            let second = await session(transport, server).download("shared", to: destination("b.bin"), resumable: true).serializingDownloadedFileURL()
                .response
            #expect(second.error?.kind == .resumeFailed)
            #expect(second.error?.message.contains("another session or process") == true)
            #expect(DownloadStore(directory: storeDirectory).activeDownload(for: server.url("/shared")) == nil)
            gate.open()
            #expect(try await firstTask.value.lastPathComponent == "a.bin")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func integrityMismatchesAreNotDelivered(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let content = Data("the real content".utf8)
            server.route("/checked", Resource(data: content, etag: "\"c\""))
            let good = SHA256.hash(content).hexString
            let bad = String(repeating: "0", count: 64)
            let session = session(transport, server)
            let ok = try await session.download(
                "checked", to: destination("ok.bin"), resumable: true,
                integrity: DownloadIntegrity(expectedLength: 16, sha256: good.uppercased())
            ).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: ok) == content)
            let failed = await session.download(
                "checked", to: destination("bad.bin"), resumable: true,
                integrity: DownloadIntegrity(sha256: bad)
            ).serializingDownloadedFileURL().response
            #expect(failed.error?.kind == .resumeFailed)
            #expect(!FileManager.default.fileExists(atPath: outputDirectory.appendingPathComponent("bad.bin").path))
            #expect(session.downloadStore.partialDownloads().isEmpty)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func activeDownloadsCanBeFoundAndControlled(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let size: Int64 = 2_000_000
            let gate = Gate()
            server.route("/ctl", Resource(pattern: size, seed: 2, etag: "\"c\"").pausing(afterBytes: 300_000, until: gate))
            let session = session(transport, server)
            let download = session.download("ctl", to: destination(), resumable: true)
            var values = download.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < 300_000 {}
            let found = try #require(session.downloadStore.activeDownload(for: server.url("/ctl")))
            #expect(found === download)
            found.suspend()
            #expect(await download.state == .suspended)
            gate.open()
            found.resume()
            let url = try await download.serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == PatternBody.data(offset: 0, count: Int(size), seed: 2))
            #expect(session.downloadStore.activeDownload(for: server.url("/ctl")) == nil)
        }
    }

    /// A relative path is resolved against the download's session, and an absolute URL is
    /// standardized, so both find the download in flight.
    @Test(arguments: TransportUnderTest.available)
    func activeDownloadAcceptsRelativeAndUnstandardizedURLs(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/v2/files/big.iso", Resource(pattern: 1_000_000, seed: 3, etag: "\"b\"").pausing(afterBytes: 100_000, until: gate))
            var configuration = SessionConfiguration.testing
            configuration.transport = transport.choice
            let store = DownloadStore(directory: storeDirectory)
            let api = Session(configuration: configuration, baseURL: server.url("/v2"), downloadStore: store, callbackQueue: testCallbackQueue)
            let download = api.download("files/big.iso", to: destination(), resumable: true)
            var values = download.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < 100_000 {}
            // Booleans, not the requests: swift-testing cannot describe an actor in a failure message.
            let relative = store.activeDownload(for: "files/big.iso") === download
            let absolute = store.activeDownload(for: server.url("/v2/files/big.iso")) === download
            let standardized = store.activeDownload(for: server.url("/v2/./files/../files/big.iso")) === download
            let other = store.activeDownload(for: "files/other.iso") == nil
            #expect(relative, "relative, as the download was made")
            #expect(absolute)
            #expect(standardized, "standardized")
            #expect(other)
            gate.open()
            _ = try await download.serializingDownloadedFileURL().value
            let gone = store.activeDownload(for: "files/big.iso") == nil
            #expect(gone)
        }
    }

    /// A finished download leaves nothing in the store, lock file included; a cancelled one keeps
    /// its partial and journal, and no lock file.
    @Test(arguments: TransportUnderTest.available)
    func theStoreKeepsNoLockFiles(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        try await withServer { server async throws in
            server.route("/f", Resource(pattern: 600_000, seed: 4, etag: "\"f\"").interruptedOnce(after: 200_000))
            let session = session(transport, server)
            await interrupted(session, "f", after: 200_000)
            let kept = try FileManager.default.contentsOfDirectory(atPath: storeDirectory.path)
            #expect(kept.filter { $0.hasSuffix(".lock") }.isEmpty, "\(kept)")
            #expect(kept.contains { $0.hasSuffix(".part") } && kept.contains { $0.hasSuffix(".journal") }, "\(kept)")
            _ = try await session.download("f", to: destination(), resumable: true).serializingDownloadedFileURL().value
            #expect(try FileManager.default.contentsOfDirectory(atPath: storeDirectory.path).isEmpty)
        }
    }

    /// Lock files left without data (by a killed process) are removed by `prune`.
    @Test func pruneRemovesOrphanedLockFiles() throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        let orphan = storeDirectory.appendingPathComponent("0123456789abcdef.lock")
        #expect(FileManager.default.createFile(atPath: orphan.path, contents: nil))
        _ = DownloadStore(directory: storeDirectory).prune(olderThan: 3600)
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
    }

    @Test func discardAndPruneRemovePartials() throws {
        defer { cleanUp() }
        let store = DownloadStore(directory: storeDirectory)
        let a = URL(string: "http://127.0.0.1:1/a")!
        let b = URL(string: "http://127.0.0.1:1/b")!
        try plantPartial(url: a, bytes: Data(count: 10), expectedLength: 100, etag: "\"a\"")
        try plantPartial(url: b, bytes: Data(count: 20), expectedLength: 100, etag: "\"b\"")
        #expect(Set(store.partialDownloads().map(\.url)) == [a, b])
        #expect(store.discard(a))
        #expect(store.partialDownloads().map(\.url) == [b])
        #expect(store.prune(olderThan: 3600) == 0)
        #expect(store.prune(olderThan: -1) == 1)
        #expect(store.partialDownloads().isEmpty)
    }
}
