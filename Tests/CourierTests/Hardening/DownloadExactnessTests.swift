import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Issue 23: a download is exactly the resource or fails. Destinations that are directories,
/// resumed bodies that run past their range, and long server-suggested names.
@Suite struct DownloadExactnessTests {
    let storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-exact-store-\(UUID().uuidString)")
    let outputDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-exact-out-\(UUID().uuidString)")

    func cleanUp() {
        try? FileManager.default.removeItem(at: storeDirectory)
        try? FileManager.default.removeItem(at: outputDirectory)
    }

    @Test(".removePreviousFile never removes a directory named like the suggested file", arguments: TransportUnderTest.available)
    func existingDirectoryIsKept(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        let keep = outputDirectory.appendingPathComponent("report", isDirectory: true)
        try FileManager.default.createDirectory(at: keep, withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: keep.appendingPathComponent("inside.txt"))
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("content").header("Content-Disposition", "attachment; filename=\"report\""))
            let session = makeSession(transport, server: server)
            let error = await session.download("files/1", to: .directory(outputDirectory, options: [.removePreviousFile]))
                .serializingDownloadedFileURL().response.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains(keep.path) == true)
            #expect(try Data(contentsOf: keep.appendingPathComponent("inside.txt")) == Data("precious".utf8))
        }
    }

    @Test(
        "a resumed 206 whose body runs past its Content-Range fails; the file is never longer than the resource",
        arguments: TransportUnderTest.available)
    func resumedBodyPastItsRange(transport: TransportUnderTest) async throws {
        defer { cleanUp() }
        let size = 2_000_000
        let content = PatternBody.data(offset: 0, count: size, seed: 12)
        try await withServer { server async throws in
            let ranged = Collected<String>()
            server.route("/big") { request in
                guard let range = request.headers["Range"] else {
                    return MockResponse.ok(content).header("ETag", "\"b\"")
                }
                ranged.append(range)
                let start = Int(range.dropFirst("bytes=".count).dropLast()) ?? 0
                // The first resume claims the rest of the resource and sends 5,000 bytes more.
                let extra = ranged.all.count == 1 ? 5_000 : 0
                let body = PatternBody.data(offset: Int64(start), count: size - start + extra, seed: 12)
                return MockResponse(
                    status: 206, headers: ["Content-Range": "bytes \(start)-\(size - 1)/\(size)", "ETag": "\"b\""],
                    body: .data(body))
            }
            try plantPartial(url: server.url("/big"), bytes: content.prefix(1_000_000), total: Int64(size), etag: "\"b\"")
            var configuration = SessionConfiguration.testing
            configuration.transport = transport.choice
            configuration.cookies = .none
            let session = Session(
                configuration: configuration, baseURL: server.baseURL,
                downloadStore: DownloadStore(directory: storeDirectory), callbackQueue: testCallbackQueue)
            let destination = DownloadDestination.file(
                outputDirectory.appendingPathComponent("big.bin"),
                options: [.createIntermediateDirectories, .removePreviousFile])
            let failed = await session.download("big", to: destination, resumable: true).serializingDownloadedFileURL().response
            #expect(failed.error?.kind == .invalidResponse)
            #expect(!FileManager.default.fileExists(atPath: outputDirectory.appendingPathComponent("big.bin").path))
            for partial in session.downloadStore.partialDownloads() { #expect(partial.bytesOnDisk <= Int64(size)) }

            // The next attempt continues from what was kept and delivers exactly the resource.
            let url = try await session.download("big", to: destination, resumable: true).serializingDownloadedFileURL().value
            #expect(try Data(contentsOf: url) == content)
        }
    }

    func plantPartial(url: URL, bytes: Data, total: Int64, etag: String) throws {
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        let paths = DownloadStore.Paths(directory: storeDirectory, key: DownloadStore.key(url: url, method: .get))
        try bytes.write(to: paths.part)
        let journal = DownloadJournal(
            url: url.absoluteString, method: "GET", etag: etag, lastModified: nil, expectedLength: total,
            durableLength: Int64(bytes.count), bootID: BootIdentity.current, createdAt: Date(), updatedAt: Date())
        try journal.save(to: paths.journal)
    }

    static let longNames: [String] = [
        String(repeating: "é", count: 150) + ".txt",
        String(repeating: "😀", count: 100),
    ]

    @Test(
        "long suggested names are cut at 255 bytes on a character boundary",
        arguments: TransportUnderTest.available, longNames)
    func longSuggestedNames(transport: TransportUnderTest, name: String) async throws {
        defer { cleanUp() }
        try FileManager.default.createDirectory(at: outputDirectory, withIntermediateDirectories: true)
        let encoded = try #require(name.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
        try await withServer { server async throws in
            let disposition = "attachment; filename*=UTF-8''\(encoded)"
            server.enqueue([
                MockResponse.ok("content").header("Content-Disposition", disposition),
                MockResponse.ok("content").header("Content-Disposition", disposition),
            ])
            let session = makeSession(transport, server: server)
            let fileURL = try await session.download("files/1", to: .directory(outputDirectory)).serializingDownloadedFileURL().value
            #expect(fileURL.lastPathComponent.utf8.count <= 255)
            #expect(name.hasPrefix(fileURL.lastPathComponent))
            #expect(try String(contentsOf: fileURL, encoding: .utf8) == "content")

            let temporary = try await session.download("files/1", to: .temporary).serializingDownloadedFileURL().value
            defer { try? FileManager.default.removeItem(at: temporary) }
            #expect(temporary.lastPathComponent.utf8.count <= 255)
            #expect(try String(contentsOf: temporary, encoding: .utf8) == "content")
        }
    }

    @Test("names are cut by bytes, keeping whole characters")
    func truncation() {
        #expect(SuggestedFileName.sanitize(String(repeating: "a", count: 300))?.utf8.count == 255)
        #expect(SuggestedFileName.sanitize(String(repeating: "é", count: 150)) == String(repeating: "é", count: 127))
        #expect(SuggestedFileName.sanitize(String(repeating: "😀", count: 100)) == String(repeating: "😀", count: 63))
        #expect(SuggestedFileName.sanitize("short.txt") == "short.txt")
    }
}
