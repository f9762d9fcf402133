import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestSupport

/// The upload rows of the hostile-server matrix (see ``HostileServerMatrixTests``): a server that
/// stops reading a large upload, and one that answers early and closes while it is in flight.
@Suite(.hangLimit(.seconds(300))) struct HostileUploadTests {
    static let body = Data(repeating: 0x5A, count: 64 << 20)
    static let tooLarge = Data("HTTP/1.1 413 Content Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!".utf8)

    static func post(_ session: Session, _ url: URL) async -> DataResponse<Data, CourierError> {
        await session.upload(body, to: url, method: .post).serializingData().response
    }

    /// The server reads the head and 8 KiB, then neither reads nor closes: once the socket
    /// buffers are full nothing moves, and the idle timeout (2 s) ends the request, not before
    /// 2 s have passed on the session's manual clock.
    @Test(arguments: TransportUnderTest.available)
    func serverThatStopsReadingTheUploadTimesOut(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([.readHead, .read(8 << 10), .hold])
        let outcome = try await HostileServerMatrixTests.run(transport, server: server, timeout: 2, send: Self.post)
        #expect(outcome.response.error?.kind == .timedOut, "\(outcome.response.error.map { "\($0)" } ?? "succeeded")")
        #expect(outcome.advanced >= .seconds(2), "timed out after \(outcome.advanced)")
        #expect(server.bytesRead < 1 << 20)
        await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
    }

    /// The server answers 413 after 8 KiB of a 64 MiB upload and closes. Both transports stop
    /// sending and hand out the 413 (measured: every run on both). Closing with unread bytes makes
    /// the kernel send a reset, which can overtake the response on a loaded machine; then the
    /// request fails as a lost connection. Either way it ends at once.
    @Test(arguments: TransportUnderTest.available)
    func earlyRejectionEndsTheUploadAtOnce(transport: TransportUnderTest) async throws {
        let server = try ScriptedReplyServer([.readHead, .read(8 << 10), .write(Self.tooLarge)])
        let outcome = try await HostileServerMatrixTests.run(transport, server: server, timeout: 30, send: Self.post)
        if let error = outcome.response.error {
            #expect(error.kind == .connectionLost, "\(error)")
        } else {
            #expect(outcome.response.response?.statusCode == 413)
            #expect(outcome.response.value == Data("too big!".utf8))
        }
        await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
    }
}
