import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Issue 23: an upload sends exactly the caller's bytes or fails. Files that report size 0, FIFOs,
/// devices, symbolic links and files that change size between measuring and sending.
@Suite struct UploadExactnessTests {
    static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-exact-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a /proc file that reports size 0 is sent whole, with its real length", arguments: TransportUnderTest.available)
    func procFileIsSentWhole(transport: TransportUnderTest) async throws {
        let file = URL(fileURLWithPath: "/proc/self/cmdline")
        try #require(FileManager.default.fileExists(atPath: file.path))
        let content = try #require(try FileHandle(forReadingFrom: file).readToEnd())
        try #require(!content.isEmpty)
        try await withServer { server async throws in
            server.enqueue(.ok("stored"))
            let session = makeSession(transport, server: server)
            let response = await session.upload(fileURL: file, to: "upload").serializingData().response
            #expect(response.error == nil)
            let recorded = try await server.takeRequest()
            #expect(recorded.body == content)
            #expect(recorded.headers["Content-Length"] == "\(content.count)")
        }
    }

    @Test("a character device is refused before anything is sent", arguments: TransportUnderTest.available)
    func characterDeviceIsRefused(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server)
            let error = await session.upload(fileURL: URL(fileURLWithPath: "/dev/zero"), to: "upload").serializingData().response.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains("/dev/zero") == true)
            #expect(error?.message.contains("character device") == true)
            #expect(server.requestCount == 0)
        }
    }

    @Test("a FIFO with no writer is refused and never blocks the session's other requests", arguments: TransportUnderTest.available)
    func fifoIsRefusedWithoutBlocking(transport: TransportUnderTest) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        try await withServer { server async throws in
            server.route("/plain", Resource(data: Data("plain".utf8)))
            let session = makeSession(transport, server: server)
            async let upload = session.upload(fileURL: fifo, to: "upload").serializingData().response
            async let plain = session.request("plain").serializingString().response
            let (uploaded, fetched) = await (upload, plain)
            #expect(fetched.value == "plain")
            #expect(uploaded.error?.kind == .fileSystem)
            #expect(uploaded.error?.message.contains("FIFO") == true)
            #expect(uploaded.error?.message.contains(fifo.path) == true)
            #expect(server.recordedRequests.map(\.path) == ["/plain"])
        }
    }

    @Test("a symbolic link uploads its target's bytes with the target's length", arguments: TransportUnderTest.available)
    func symbolicLinkSendsTheTarget(transport: TransportUnderTest) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let target = directory.appendingPathComponent("target.bin")
        let content = PatternBody.data(offset: 0, count: 70_000, seed: 23)
        try content.write(to: target)
        let link = directory.appendingPathComponent("link.bin")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: target)
        try await withServer { server async throws in
            server.enqueue(.ok("stored"))
            let session = makeSession(transport, server: server)
            let response = await session.upload(fileURL: link, to: "upload").serializingData().response
            #expect(response.error == nil)
            let recorded = try await server.takeRequest()
            #expect(recorded.headers["Content-Length"] == "70000")
            #expect(recorded.body == content)
        }
    }

    /// Changes the upload file once, on the first failure, and asks for a retry: the retry sends
    /// the length measured for the first attempt, which no longer matches the file.
    struct ChangingRetrier: RequestRetrier {
        let file: URL
        let shrinks: Bool
        let calls = Collected<CourierError.Kind>()

        func retry(_ request: any Request, for session: Session, dueTo error: CourierError) async -> RetryDecision {
            calls.append(error.kind)
            guard calls.all.count == 1 else { return .doNotRetry }
            guard let handle = try? FileHandle(forWritingTo: file) else { return .doNotRetry }
            if shrinks {
                try? handle.truncate(atOffset: 1000)
            } else {
                _ = try? handle.seekToEnd()
                // Bytes that, sent past Content-Length, would read as a second request.
                try? handle.write(contentsOf: Data("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
            }
            try? handle.close()
            return .retry
        }
    }

    @Test(
        "a file that grew or shrank since it was measured fails as fileSystem; nothing extra reaches the server",
        arguments: TransportUnderTest.available, [false, true])
    func fileChangedSinceMeasured(transport: TransportUnderTest, shrinks: Bool) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("changing.bin")
        let content = PatternBody.data(offset: 0, count: 50_000, seed: 9)
        try content.write(to: file)
        try await withServer { server async throws in
            server.enqueue(.status(500))
            let retrier = ChangingRetrier(file: file, shrinks: shrinks)
            let session = makeSession(transport, server: server, interceptor: Interceptor(retriers: [retrier]))
            let error = await session.upload(fileURL: file, to: "upload").validate().serializingData().response.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains(file.path) == true)
            #expect(retrier.calls.all.first == .validationFailed)
            // Only the first attempt arrived, exactly as measured; no second or smuggled request.
            #expect(server.recordedRequests.map(\.path) == ["/upload"])
            #expect(server.recordedRequests.first?.body == content)
        }
    }

    @Test(
        "curl's body source stops at the announced length and fails when the file grows or shrinks while read",
        arguments: [false, true])
    func curlBodySourceChangesWhileRead(shrinks: Bool) throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("changing.bin")
        let size = 100_000
        try PatternBody.data(offset: 0, count: size, seed: 2).write(to: file)
        let source = try CurlBodySource(.file(file, length: Int64(size)), url: URL(string: "http://127.0.0.1/")!)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 << 10, alignment: 1)
        defer { buffer.deallocate() }
        #expect(source.read(into: buffer) == 64 << 10)
        let handle = try FileHandle(forWritingTo: file)
        if shrinks {
            try handle.truncate(atOffset: 70_000)
        } else {
            _ = try handle.seekToEnd()
            try handle.write(contentsOf: Data("extra".utf8))
        }
        try handle.close()
        var total = 64 << 10
        var result: Int?
        repeat {
            result = source.read(into: buffer)
            total += result ?? 0
        } while (result ?? 0) > 0
        #expect(result == nil)
        #expect(total <= size)
        #expect(source.failure?.kind == .fileSystem)
        #expect(source.failure?.message.contains(shrinks ? "ended after" : "grew") == true)
    }

    @Test("the private upload copy is refused when the file grew since it was measured")
    func uploadCopyRefusesAGrownFile() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("file.bin")
        try Data(repeating: 1, count: 10).write(to: file)
        let copy = directory.appendingPathComponent("copy.bin")
        try UploadFile.copy(file, length: 10, to: copy)
        #expect(try Data(contentsOf: copy) == Data(repeating: 1, count: 10))
        let second = directory.appendingPathComponent("second.bin")
        let error = try #require(throws: CourierError.self) { try UploadFile.copy(file, length: 9, to: second) }
        #expect(error.kind == .fileSystem)
        #expect(!FileManager.default.fileExists(atPath: second.path))
    }
}

extension UploadExactnessTests {
    @Test("a multipart file part that is a FIFO with no writer is refused at once", arguments: TransportUnderTest.available)
    func multipartFifoPartIsRefused(transport: TransportUnderTest) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let fifo = directory.appendingPathComponent("pipe")
        try #require(mkfifo(fifo.path, 0o600) == 0)
        try await withServer { server async throws in
            let session = makeSession(transport, server: server)
            let error = await session.upload(
                multipartFormData: { form in
                    form.append(fileURL: fifo, withName: "part")
                }, to: "upload"
            ).serializingData().response.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains("not a regular file") == true)
            #expect(server.requestCount == 0)
        }
    }
}

extension UploadExactnessTests {
    @Test(
        "a file that grows while it is sent: the server never gets more than the announced bytes, nor a second request",
        arguments: TransportUnderTest.available)
    func fileGrowsWhileSent(transport: TransportUnderTest) async throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("growing.bin")
        let size = 8_000_000
        let content = PatternBody.data(offset: 0, count: size, seed: 31)
        try content.write(to: file)
        let server = try TestServer()
        do {
            server.enqueue(.ok("stored"))
            // Scripted twice: a smuggled second request would find this one.
            server.enqueue(.ok("second"))
            let session = makeSession(transport, server: server)
            let grown = Collected<Bool>()
            let response = await session.upload(fileURL: file, to: "upload").onUploadProgress(queue: testCallbackQueue) { _ in
                guard grown.all.isEmpty else { return }
                grown.append(true)
                if let handle = try? FileHandle(forWritingTo: file) {
                    _ = try? handle.seekToEnd()
                    try? handle.write(contentsOf: Data("GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
                    try? handle.close()
                }
            }.serializingString().response
            // Either the bytes sent were exactly the file as announced, or the upload failed.
            if let error = response.error {
                #expect(error.kind == .fileSystem)
            } else {
                #expect(response.value == "stored")
            }
            #expect(server.recordedRequests.allSatisfy { $0.path == "/upload" })
            #expect(server.recordedRequests.count <= 1)
            if let recorded = server.recordedRequests.first, response.error == nil { #expect(recorded.body == content) }
        }
        // One or both scripted responses stay queued, depending on when the growth was noticed;
        // what matters is that no request arrived unscripted.
        #expect(server.shutdown().unexpectedRequests.isEmpty)
    }
}
