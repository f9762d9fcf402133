import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Downloads to every kind of destination, with clear errors and no temporary file left behind.
@Suite struct DownloadTests {
    static func scratchDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("courier-download-tests-\(UUID().uuidString)", isDirectory: true)
    }

    @Test(arguments: TransportUnderTest.available)
    func downloadToAFile(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size = 5_000_000
            server.route("/files/big.iso", Resource(pattern: Int64(size), seed: 3, etag: "\"v1\""))
            let directory = Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let destination = directory.appendingPathComponent("nested/big.iso")
            let session = makeSession(transport, server: server)
            let download = session.download("files/big.iso", to: .file(destination, options: [.removePreviousFile, .createIntermediateDirectories]))
            let fileURL = try await download.serializingDownloadedFileURL().value
            #expect(fileURL == destination)
            #expect(try Data(contentsOf: fileURL) == PatternBody.data(offset: 0, count: size, seed: 3))
            #expect(await download.fileURL == destination)
            #expect(session.temporaryFiles == [])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func destinationOptionErrorsAreFileSystemErrors(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/f", Resource(data: Data("new".utf8)))
            let directory = Self.scratchDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let existing = directory.appendingPathComponent("exists.txt")
            try Data("old".utf8).write(to: existing)
            let session = makeSession(transport, server: server)

            let clash = await session.download("f", to: .file(existing)).serializingDownloadedFileURL().response
            #expect(clash.error?.kind == .fileSystem)
            #expect(clash.error?.message.contains("removePreviousFile") == true)
            #expect(try Data(contentsOf: existing) == Data("old".utf8))

            let missingDirectory = directory.appendingPathComponent("missing/file.txt")
            let missing = await session.download("f", to: .file(missingDirectory)).serializingDownloadedFileURL().response
            #expect(missing.error?.kind == .fileSystem)
            #expect(missing.error?.message.contains("createIntermediateDirectories") == true)

            let replaced = try await session.download("f", to: .file(existing, options: .removePreviousFile)).serializingString().value
            #expect(replaced == "new")
            #expect(session.temporaryFiles == [])
        }
    }

    /// `.removePreviousFile` never replaces a device: run as root, a download to `/dev/null`
    /// removed it and put a regular file in its place, breaking every later process on the machine.
    @Test(arguments: TransportUnderTest.available)
    func aDeviceAtTheDestinationIsNeverReplaced(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/f", Resource(data: Data("new".utf8)))
            var before = stat()
            #expect(lstat("/dev/null", &before) == 0)
            #expect(before.st_mode & S_IFMT == S_IFCHR)
            let session = makeSession(transport, server: server)
            let destination = URL(fileURLWithPath: "/dev/null")
            let response = await session.download("f", to: .file(destination, options: .removePreviousFile)).serializingDownloadedFileURL().response
            #expect(response.error?.kind == .fileSystem)
            #expect(response.error?.message.contains("never replaces") == true, "\(String(describing: response.error))")
            var after = stat()
            #expect(lstat("/dev/null", &after) == 0)
            #expect(after.st_mode == before.st_mode && after.st_rdev == before.st_rdev, "/dev/null was replaced")
            #expect(session.temporaryFiles == [])
        }
    }

    @Test(
        arguments: TransportUnderTest.available,
        [
            ("attachment; filename=\"../../etc/passwd\"", "passwd"),
            ("attachment; filename=\"..\"", "report"),
            ("attachment; filename*=UTF-8''na%C3%AFve%20file.txt", "naïve file.txt"),
            ("attachment; filename=\".hidden\"", "hidden"),
        ])
    func serverSuggestedNamesCannotEscapeTheDirectory(transport: TransportUnderTest, names: (String, String)) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse.ok("content").header("Content-Disposition", names.0))
            let directory = Self.scratchDirectory()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let session = makeSession(transport, server: server)
            let fileURL = try await session.download("reports/report", to: .directory(directory)).serializingDownloadedFileURL().value
            #expect(fileURL.deletingLastPathComponent().standardizedFileURL.path == directory.standardizedFileURL.path)
            #expect(fileURL.lastPathComponent == names.1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func temporaryAndCustomDestinations(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/t", Resource(data: Data("temp".utf8)))
            let session = makeSession(transport, server: server)
            let temporary = try await session.download("t", to: .temporary).serializingDownloadedFileURL().value
            defer { try? FileManager.default.removeItem(at: temporary) }
            #expect(try Data(contentsOf: temporary) == Data("temp".utf8))
            let directory = Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let custom = try await session.download(
                "t",
                to: .custom { _, response in
                    (directory.appendingPathComponent("status-\(response.statusCode).txt"), [.createIntermediateDirectories])
                }
            ).serializingDownloadedFileURL().value
            #expect(custom.lastPathComponent == "status-200.txt")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func errorStatusesDoNotBecomeFilesUnlessAsked(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.text("not here", status: 404))
            server.enqueue(.text("not here", status: 404))
            let directory = Self.scratchDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let destination = directory.appendingPathComponent("file.bin")
            let session = makeSession(transport, server: server)
            let failed = await session.download("missing", to: .file(destination, options: .createIntermediateDirectories))
                .serializingDownloadedFileURL().response
            #expect(failed.error?.responseCode == 404)
            #expect(failed.error?.kind == .validationFailed)
            #expect(failed.fileURL == nil)
            #expect(!FileManager.default.fileExists(atPath: destination.path))
            let kept = await session.download("missing", to: .file(destination, options: .createIntermediateDirectories), failsOnErrorStatus: false)
                .serializingString().response
            #expect(kept.response?.statusCode == 404)
            #expect(kept.value == "not here")
            #expect(session.temporaryFiles == [])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func serializersReadTheDownloadedFile(transport: TransportUnderTest) async throws {
        struct Item: Decodable, Sendable { let name: String }
        try await withServer { server async throws in
            server.route("/item.json", Resource(data: Data(#"{"name":"courier"}"#.utf8), contentType: "application/json"))
            let session = makeSession(transport, server: server)
            let download = session.download("item.json").validate()
            #expect(try await download.serializingDecodable(Item.self).value.name == "courier")
            #expect(try await download.serializingJSON().value["name"]?.stringValue == "courier")
            let url = try await download.serializingDownloadedFileURL().value
            try? FileManager.default.removeItem(at: url)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func noTemporaryFileSurvivesCancelOrFailure(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/slow", Resource(pattern: 10_000_000, seed: 1).interruptedOnce(after: 200_000))
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 1_000_000, seed: 1)).truncated(afterBytes: 100_000))
            let session = makeSession(transport, server: server)
            let slow = session.download("slow")
            var values = slow.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < 200_000 {}
            slow.cancel()
            #expect(await slow.serializingDownloadedFileURL().response.error?.kind == .cancelled)
            let cut = await session.download("cut").serializingDownloadedFileURL().response
            #expect(cut.error?.kind == .connectionLost)
            #expect(session.temporaryFiles == [])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func suspendAndResumeADownloadByteExact(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size: Int64 = 4_000_000
            let gate = Gate()
            server.route("/big", Resource(pattern: size, seed: 21, etag: "\"e1\"").pausing(afterBytes: size * 3 / 10, until: gate))
            let session = makeSession(transport, server: server)
            let download = session.download("big")
            var values = download.downloadProgress.makeAsyncIterator()
            while let value = await values.next(), value.completedUnitCount < size * 3 / 10 {}
            download.suspend()
            #expect(await download.state == .suspended)
            gate.open()
            // Suspended for a second, as issue 5 asks, while the server is free to send the rest.
            try await Task.sleep(for: .seconds(1))
            download.resume()
            let url = try await download.serializingDownloadedFileURL().value
            defer { try? FileManager.default.removeItem(at: url) }
            #expect(try Data(contentsOf: url) == PatternBody.data(offset: 0, count: Int(size), seed: 21))
            if transport == .urlSession {
                // URLSession cannot pause in place: Courier cancelled and continued with a range request.
                let requests = server.recordedRequests
                #expect(requests.count == 2)
                #expect(requests.last?.headers["Range"]?.hasPrefix("bytes=") == true)
                #expect(requests.last?.headers["If-Range"] == "\"e1\"")
            } else {
                #expect(server.requestCount == 1)
            }
        }
    }
}
