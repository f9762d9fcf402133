import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Every validation rule, through real responses.
@Suite struct ValidationTests {
    /// Sends one request answered by `response`, validated by `validate`, and returns its error.
    static func validationError(
        _ transport: TransportUnderTest, _ response: MockResponse, accept: String? = nil,
        _ validate: @escaping @Sendable (DataRequest) -> DataRequest
    ) async throws -> CourierError? {
        try await withServer { server async throws in
            server.enqueue(response)
            let session = makeSession(transport, server: server)
            let headers: HTTPHeaders = accept.map { ["Accept": $0] } ?? [:]
            return await validate(session.request("v", headers: headers)).serializingData().response.error
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func statusCodeRangeAndSet(transport: TransportUnderTest) async throws {
        #expect(try await Self.validationError(transport, .status(204)) { $0.validate(statusCode: 200..<300) } == nil)
        let notFound = try await Self.validationError(transport, .text("missing", status: 404)) { $0.validate(statusCode: 200..<300) }
        #expect(notFound?.kind == .validationFailed)
        #expect(notFound?.responseCode == 404)
        #expect(notFound?.message.contains("404") == true)
        #expect(try await Self.validationError(transport, .text("teapot", status: 418)) { $0.validate(statusCode: [418]) } == nil)
        let emptySet = try await Self.validationError(transport, .ok("x")) { $0.validate(statusCode: Set<Int>()) }
        #expect(emptySet?.kind == .validationFailed)
    }

    @Test(
        arguments: TransportUnderTest.available,
        ["application/json", "application/*", "*/json", "*/*", "APPLICATION/JSON; charset=utf-8"])
    func contentTypeWildcardsAndParametersMatch(transport: TransportUnderTest, acceptable: String) async throws {
        let response = MockResponse.ok("{}").removingHeader("Content-Type").header("Content-Type", "application/json; charset=utf-8; q=0.8")
        #expect(try await Self.validationError(transport, response) { $0.validate(contentType: [acceptable]) } == nil)
    }

    @Test(arguments: TransportUnderTest.available)
    func contentTypeMismatchListsAcceptableTypesSorted(transport: TransportUnderTest) async throws {
        let response = MockResponse.ok("<html/>").removingHeader("Content-Type").header("Content-Type", "text/html")
        let error = try await Self.validationError(transport, response) { $0.validate(contentType: ["text/plain", "application/json"]) }
        #expect(error?.kind == .validationFailed)
        #expect(error?.message == #"Response Content-Type "text/html" was unacceptable; acceptable: application/json, text/plain."#)
    }

    @Test(arguments: TransportUnderTest.available)
    func missingContentTypeFailsUnlessAnythingIsAcceptable(transport: TransportUnderTest) async throws {
        let bare = MockResponse(status: 200, body: .text("raw"))
        let error = try await Self.validationError(transport, bare) { $0.validate(contentType: ["application/json"]) }
        #expect(error?.message.contains("no Content-Type") == true)
        #expect(try await Self.validationError(transport, bare) { $0.validate(contentType: ["*/*"]) } == nil)
    }

    @Test(arguments: TransportUnderTest.available)
    func emptyBodiesSkipContentTypeValidation(transport: TransportUnderTest) async throws {
        #expect(try await Self.validationError(transport, .status(204)) { $0.validate(contentType: [String]()) } == nil)
    }

    @Test(arguments: TransportUnderTest.available)
    func plainValidateChecksStatusAndAcceptHeader(transport: TransportUnderTest) async throws {
        let json = MockResponse.json("{}")
        #expect(try await Self.validationError(transport, json) { $0.validate() } == nil)
        #expect(try await Self.validationError(transport, json, accept: "text/html;q=0.9, application/json") { $0.validate() } == nil)
        let wrongType = try await Self.validationError(transport, json, accept: "text/html, application/xml;q=0.9") { $0.validate() }
        #expect(wrongType?.kind == .validationFailed)
        let serverError = try await Self.validationError(transport, .text("boom", status: 500)) { $0.validate() }
        #expect(serverError?.responseCode == 500)
    }

    @Test(arguments: TransportUnderTest.available)
    func jsonShapeNamesTheFirstMismatchingPath(transport: TransportUnderTest) async throws {
        let body = MockResponse.json(#"{"nick":"bob","level":"three","tags":["a",2]}"#)
        let matching = try await Self.validationError(transport, .json(#"{"nick":"bob","level":3,"tags":["a"]}"#)) {
            $0.validate(json: .object(["nick": .string, "level": .number])).validate(json: .object(["tags": .array(of: .string)]))
        }
        #expect(matching == nil)
        let level = try await Self.validationError(transport, body) { $0.validate(json: .object(["nick": .string, "level": .number])) }
        #expect(level?.message.contains("$.level: expected number, found string") == true)
        let tags = try await Self.validationError(transport, body) { $0.validate(json: .object(["tags": .array(of: .string)])) }
        #expect(tags?.message.contains("$.tags[1]") == true)
        let notJSON = try await Self.validationError(transport, .ok("plain")) { $0.validate(json: .any) }
        #expect(notJSON?.kind == .validationFailed)
    }

    @Test(arguments: TransportUnderTest.available)
    func customValidatorsSeeTheResponseAndMayThrow(transport: TransportUnderTest) async throws {
        struct Rejected: Error {}
        let passing = try await Self.validationError(transport, .ok("fine").header("X-Ok", "1")) { request in
            request.validate { _, response, data in
                response.value(forHTTPHeaderField: "X-Ok") == "1" && data == Data("fine".utf8) ? .success(()) : .failure(Rejected())
            }
        }
        #expect(passing == nil)
        let thrown = try await Self.validationError(transport, .ok("fine")) { request in
            request.validate { (_: ValidationInput) in throw Rejected() }
        }
        #expect(thrown?.kind == .validationFailed)
        #expect(thrown?.underlyingError is Rejected)
    }

    @Test(arguments: TransportUnderTest.available)
    func theFirstFailingValidatorWins(transport: TransportUnderTest) async throws {
        let error = try await Self.validationError(transport, .text("x", status: 404)) {
            $0.validate(contentType: ["application/json"]).validate(statusCode: 200..<300)
        }
        #expect(error?.message.contains("Content-Type") == true)
    }

    @Test(arguments: TransportUnderTest.available)
    func failedValidationStillExposesTheBody(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.json(#"{"error":"nope"}"#, status: 422))
            let session = makeSession(transport, server: server)
            let response = await session.request("v").validate().serializingJSON().response
            #expect(response.error?.responseCode == 422)
            #expect(response.data == Data(#"{"error":"nope"}"#.utf8))
            #expect(response.response?.statusCode == 422)
        }
    }
}
