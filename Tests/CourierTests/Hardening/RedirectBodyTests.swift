import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// A redirect that turns an upload into GET drops the body and the headers describing it, as
/// browsers and curl do; 307 and 308 send the same method and the same bytes again (issue 23).
@Suite struct RedirectBodyTests {
    enum UploadKind: String, CaseIterable, Sendable {
        case data, file, multipart
    }

    static let payload = Data("name=bob&secret=42".utf8)

    /// Starts an upload of `kind` to `path`; the returned closure removes any file it made.
    static func upload(_ kind: UploadKind, method: HTTPMethod, on session: Session, to path: String) throws -> (UploadRequest, () -> Void) {
        switch kind {
        case .data:
            return (session.upload(payload, to: path, method: method), {})
        case .file:
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-redirect-\(UUID().uuidString).bin")
            try payload.write(to: url)
            return (session.upload(fileURL: url, to: path, method: method), { try? FileManager.default.removeItem(at: url) })
        case .multipart:
            let form = MultipartFormData(boundary: "courier-boundary")
            form.append("bob", withName: "name")
            form.append(payload, withName: "blob", fileName: "p.bin", mimeType: "application/octet-stream")
            return (session.upload(multipartFormData: form, to: path, method: method), {})
        }
    }

    static func expectedBody(_ kind: UploadKind) throws -> Data {
        guard kind == .multipart else { return payload }
        let form = MultipartFormData(boundary: "courier-boundary")
        form.append("bob", withName: "name")
        form.append(payload, withName: "blob", fileName: "p.bin", mimeType: "application/octet-stream")
        return try form.encode()
    }

    static let becomesGET: [(HTTPMethod, Int)] = [(.post, 301), (.post, 302), (.post, 303), (.put, 303), (.patch, 303)]

    @Test(arguments: TransportUnderTest.available, UploadKind.allCases)
    func redirectToGETDropsTheBodyAndItsHeaders(transport: TransportUnderTest, kind: UploadKind) async throws {
        for (method, status) in Self.becomesGET {
            try await withServer { server async throws in
                server.enqueue([.redirect(to: "/landing", status: status), .ok("landed")])
                let session = makeSession(transport, server: server)
                let (request, cleanUp) = try Self.upload(kind, method: method, on: session, to: "form")
                defer { cleanUp() }
                let response = await request.serializingString().response
                #expect(response.error == nil, "\(method) → \(status): \(String(describing: response.error))")
                #expect(response.value == "landed")
                let first = try await server.takeRequest()
                #expect(first.method == method.rawValue)
                #expect(first.body == (try Self.expectedBody(kind)))
                let second = try await server.takeRequest()
                #expect(second.path == "/landing")
                #expect(second.method == "GET", "\(method) → \(status)")
                #expect(second.body.isEmpty)
                for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                    #expect(second.headers[name] == nil, "\(method) → \(status) still sent \(name)")
                }
            }
        }
    }

    @Test(arguments: TransportUnderTest.available, UploadKind.allCases)
    func temporaryAndPermanentRedirectsSendTheSameBodyAgain(transport: TransportUnderTest, kind: UploadKind) async throws {
        for (method, status) in [(HTTPMethod.post, 307), (.post, 308), (.put, 307), (.put, 302)] {
            try await withServer { server async throws in
                server.enqueue([.redirect(to: "/landing", status: status), .ok("landed")])
                let session = makeSession(transport, server: server)
                let (request, cleanUp) = try Self.upload(kind, method: method, on: session, to: "form")
                defer { cleanUp() }
                let response = await request.serializingString().response
                #expect(response.error == nil, "\(method) → \(status): \(String(describing: response.error))")
                let first = try await server.takeRequest()
                let second = try await server.takeRequest()
                #expect(second.path == "/landing")
                #expect(second.method == method.rawValue, "\(method) → \(status)")
                #expect(second.body == first.body)
                #expect(second.body == (try Self.expectedBody(kind)))
                #expect(second.headers["Content-Type"] == first.headers["Content-Type"])
                #expect(second.headers["Content-Type"] != nil)
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func postWithAFormBodyRedirectedBy302ArrivesAsAPlainGET(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue([.redirect(to: "/landing", status: 302), .ok("landed")])
            let session = makeSession(transport, server: server)
            let response = await session.request(
                "form", method: .post, parameters: ["a": "1"],
                headers: ["Content-Encoding": "identity"]
            ).serializingString().response
            #expect(response.value == "landed", "\(String(describing: response.error))")
            _ = try await server.takeRequest()
            let second = try await server.takeRequest()
            #expect(second.method == "GET")
            #expect(second.body.isEmpty)
            #expect(second.headers["Content-Type"] == nil)
            #expect(second.headers["Content-Encoding"] == nil)
        }
    }
}
