import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@testable import Courier
import CourierTestServer

/// A `URLRequest` can carry its body as an `httpBodyStream`, which only an upload reads. Handed to
/// any other kind of request it is refused before anything is sent, never sent as an empty body
/// (`streamRequest` used to send such a POST with `Content-Length: 0`).
@Suite struct BodyStreamRefusalTests {
    static func streamedPOST(_ server: TestServer) -> URLRequest {
        var request = URLRequest(url: server.url("/echo"))
        request.httpMethod = "POST"
        request.httpBodyStream = InputStream(data: Data("the body".utf8))
        return request
    }

    @Test(arguments: TransportUnderTest.available)
    func aDataRequestRefusesIt(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/echo") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server).request(Self.streamedPOST(server)).serializingString().response
            #expect(response.error?.kind == .encodingFailed, "\(String(describing: response.error)) \(String(describing: response.value))")
            #expect(response.error?.errorDescription?.contains("httpBodyStream") == true)
            #expect(server.requestCount(path: "/echo") == 0, "nothing is sent")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStreamRequestRefusesIt(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/echo") { request in .text("\(request.bodySize)") }
            var chunks = 0
            var iterator = makeSession(transport, server: server).streamRequest(Self.streamedPOST(server)).streamingData().makeAsyncIterator()
            do throws(CourierError) {
                while try await iterator.next() != nil { chunks += 1 }
                Issue.record("the stream ended without an error")
            } catch {
                #expect(error.kind == .encodingFailed, "\(error)")
            }
            #expect(chunks == 0)
            #expect(server.requestCount(path: "/echo") == 0, "nothing is sent")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aDownloadRefusesIt(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/echo") { request in .text("\(request.bodySize)") }
            let response = await makeSession(transport, server: server).download(Self.streamedPOST(server)).serializingDownloadedFileURL().response
            #expect(response.error?.kind == .encodingFailed, "\(String(describing: response.error))")
            #expect(server.requestCount(path: "/echo") == 0, "nothing is sent")
        }
    }

    /// A body given as data is sent as before.
    @Test(arguments: TransportUnderTest.available)
    func aBodyGivenAsDataIsSent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/echo") { request in .text("\(request.bodySize)") }
            var request = URLRequest(url: server.url("/echo"))
            request.httpMethod = "POST"
            request.httpBody = Data("the body".utf8)
            let text = try await makeSession(transport, server: server).request(request).serializingString().value
            #expect(text == "8")
        }
    }
}
