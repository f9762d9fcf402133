import Testing
import Foundation
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierTestSupport

@Suite struct SmokeTests {
    @Test func getThroughURLSession() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        server.enqueue(MockResponse.json(#"{"nick":"bob","level":3}"#))
        var configuration = SessionConfiguration.testing
        configuration.transport = .urlSession(.ephemeral)
        let session = Session(configuration: configuration, baseURL: server.baseURL)
        let json = try await session.request("users/42").validate().serializingJSON().value
        #expect(json["nick"]?.stringValue == "bob")
        let recorded = try await server.takeRequest()
        #expect(recorded.path == "/users/42")
    }
}
