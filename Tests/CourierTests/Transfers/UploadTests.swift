import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Uploads from memory, files and multipart forms arrive byte-exact, with monotonic progress.
@Suite struct UploadTests {
    static func makeFile(bytes: Int, seed: UInt64) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-test-\(UUID().uuidString).bin")
        try PatternBody.data(offset: 0, count: bytes, seed: seed).write(to: url)
        return url
    }

    @Test(arguments: TransportUnderTest.available)
    func dataUpload(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.status(201))
            let session = makeSession(transport, server: server)
            let response = await session.upload(Data("hello".utf8), to: "upload").serializingData().response
            let recorded = try await server.takeRequest()
            #expect(response.response?.statusCode == 201)
            #expect(recorded.method == "POST")
            #expect(recorded.bodyText == "hello")
            #expect(recorded.headers["Content-Type"] == "application/octet-stream")
            #expect(recorded.headers["Content-Length"] == "5")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func fileUploadWithProgress(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size = 3_000_000
            let file = try Self.makeFile(bytes: size, seed: 11)
            defer { try? FileManager.default.removeItem(at: file) }
            server.enqueue(.ok("stored"))
            let session = makeSession(transport, server: server)
            let values = Collected<TransferProgress>()
            let request = session.upload(fileURL: file, to: "upload", method: .put).onUploadProgress(queue: testCallbackQueue) { values.append($0) }
            #expect(try await request.serializingString().value == "stored")
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            let recorded = try await server.takeRequest()
            #expect(recorded.method == "PUT")
            #expect(recorded.body == PatternBody.data(offset: 0, count: size, seed: 11))
            let progress = values.all
            #expect(!progress.isEmpty)
            #expect(progress.map(\.completedUnitCount) == progress.map(\.completedUnitCount).sorted())
            #expect(progress.last == .finished(Int64(size)))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func missingUploadFileFailsClearly(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let session = makeSession(transport, server: server)
            let missing = URL(fileURLWithPath: "/nonexistent/courier-\(UUID().uuidString).bin")
            let error = await session.upload(fileURL: missing, to: "upload").serializingData().response.error
            #expect(error?.kind == .fileSystem)
            #expect(error?.message.contains(missing.path) == true)
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: TransportUnderTest.available, [false, true])
    func multipartUpload(transport: TransportUnderTest, large: Bool) async throws {
        try await withServer { server async throws in
            let fileSize = large ? 11_000_000 : 300_000
            let file = try Self.makeFile(bytes: fileSize, seed: 5)
            defer { try? FileManager.default.removeItem(at: file) }
            server.enqueue(.json(#"{"id":1}"#))
            let session = makeSession(transport, server: server)
            let request = session.upload(
                multipartFormData: { form in
                    form.append(Data("bob".utf8), withName: "name")
                    form.append(fileURL: file, withName: "avatar", fileName: "a \"quoted\".jpg", mimeType: "image/jpeg")
                }, to: "profile")
            #expect(try await request.serializingJSON().value["id"]?.intValue == 1)
            let recorded = try await server.takeRequest()
            let contentType = try #require(recorded.headers["Content-Type"])
            #expect(contentType.hasPrefix("multipart/form-data; boundary="))
            let boundary = String(contentType.dropFirst("multipart/form-data; boundary=".count))
            let body = recorded.body
            #expect(body.count == Int(recorded.headers["Content-Length"] ?? "") ?? -1)
            let text = String(decoding: body.prefix(600), as: UTF8.self)
            #expect(text.hasPrefix("--\(boundary)\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nbob\r\n"))
            #expect(text.contains(#"Content-Disposition: form-data; name="avatar"; filename="a %22quoted%22.jpg""#))
            let header = Data("Content-Type: image/jpeg\r\n\r\n".utf8)
            let start = try #require(body.range(of: header)).upperBound
            #expect(body[start..<(start + fileSize)] == PatternBody.data(offset: 0, count: fileSize, seed: 5))
            #expect(body.suffix(boundary.count + 8) == Data("\r\n--\(boundary)--\r\n".utf8))
            #expect(session.temporaryFiles == [])
        }
    }
}
