import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Alamofire parity (#26): response transforms, serializer factories and preprocessing,
/// empty-body rules, structured validation errors — through real responses on both transports.
@Suite struct ResponseParityTests {
    struct User: Codable, Sendable, Equatable { let nick: String; let level: Int }
    struct AppError: Error, Equatable { let code: Int? }

    static func respond(
        _ transport: TransportUnderTest, _ response: MockResponse, method: HTTPMethod = .get,
        _ body: (DataRequest) async throws -> Void
    ) async throws {
        try await withServer { server async throws in
            server.enqueue(response)
            try await body(makeSession(transport, server: server).request("s", method: method))
        }
    }

    // MARK: Transforms

    @Test(arguments: TransportUnderTest.available)
    func mapAndTryMapKeepTheExchange(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .text("42")) { request async throws in
            let response = await request.serializingString().response
            let mapped = response.map { $0.count }
            #expect(mapped.value == 2)
            #expect(mapped.response?.statusCode == 200 && mapped.data == Data("42".utf8) && mapped.metrics != nil)
            let parsed: DataResponse<Int, CourierError> = response.tryMap { text in
                guard let number = Int(text) else { throw AppError(code: nil) }
                return number
            }
            #expect(parsed.value == 42)
            let failed: DataResponse<Int, CourierError> = response.tryMap { _ in throw AppError(code: 7) }
            #expect(failed.error?.kind == .serializationFailed)
            #expect(failed.error?.underlyingError as? AppError == AppError(code: 7))
            #expect(failed.error?.responseCode == 200)
            let kept: DataResponse<Int, CourierError> = response.tryMap { _ in throw CourierError(.serverError, "no") }
            #expect(kept.error?.kind == .serverError)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func mapErrorAndTryMapErrorTransformOnlyFailures(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .text("gone", status: 410)) { request async throws in
            let response = await request.validate().serializingString().response
            let mine = response.mapError { AppError(code: $0.responseCode) }
            #expect(mine.error == AppError(code: 410))
            #expect(mine.data == Data("gone".utf8))
            let thrown = response.tryMapError { error -> AppError in throw AppError(code: -(error.responseCode ?? 0)) }
            #expect(thrown.error as? AppError == AppError(code: -410))
            let returned = response.tryMapError { AppError(code: $0.responseCode) }
            #expect(returned.error as? AppError == AppError(code: 410))
            let generic = response.mapError { $0 as any Error }.tryMap { $0.count }
            #expect(generic.error is CourierError)
        }
        try await Self.respond(transport, .text("fine")) { request async throws in
            let response = await request.serializingString().response
            #expect(response.mapError { _ in AppError(code: 1) }.value == "fine")
            #expect(response.tryMapError { _ -> AppError in throw AppError(code: 2) }.value == "fine")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func tasksMapTheirValues(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(#"{"nick":"bob","level":3}"#)) { request async throws in
            let task = request.serializingDecodable(User.self)
            #expect(try await task.map(\.nick).value == "bob")
            #expect(try await task.tryMap { $0.level * 2 }.value == 6)
            let failing = await task.tryMap { _ -> Int in throw AppError(code: 1) }.result
            #expect(failing.error?.kind == .serializationFailed)
            #expect(await task.map(\.level).response.response?.statusCode == 200)
        }
        try await Self.respond(transport, .status(500)) { request async throws in
            let renamed = await request.validate().serializingData()
                .mapError { CourierError(.serverError, "Server said \($0.responseCode ?? 0)", responseCode: $0.responseCode) }.result
            #expect(renamed.error?.kind == .serverError)
            #expect(renamed.error?.message == "Server said 500")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingAMappedTaskCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withServer(unconsumedResponses: 0) { server async throws in
            let gate = Gate()
            server.route("/slow") { _ in MockResponse.text("late").waiting(for: gate) }
            let request = makeSession(transport, server: server).request("slow")
            let mapped = request.serializingString().map(\.count)
            mapped.resume()
            _ = try await server.takeRequest()
            mapped.cancel()
            let result = await mapped.result
            #expect(result.error?.isCancelled == true)
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func downloadResponsesTransformToo(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.text("file body"))
            server.enqueue(.text("file body"))
            let session = makeSession(transport, server: server)
            let task = session.download("f", to: .temporary).serializingDownloadedFileURL()
            let response = await task.response
            let size = response.tryMap { url in try Data(contentsOf: url).count }
            #expect(size.value == 9)
            #expect(response.map(\.isFileURL).value == true)
            #expect(response.mapError { _ in AppError(code: nil) }.value == response.value)
            #expect(response.tryMapError { _ -> AppError in throw AppError(code: 3) }.value == response.value)
            let generic = response.mapError { $0 as any Error }.tryMap { _ -> Int in throw AppError(code: 4) }
            #expect(generic.error as? AppError == AppError(code: 4))
            let text = try await session.download("f", to: .temporary).serializingDownloadedFileURL()
                .tryMap { try String(contentsOf: $0, encoding: .utf8) }.value
            #expect(text == "file body")
            if let url = response.fileURL { try? FileManager.default.removeItem(at: url) }
        }
    }

    // MARK: Serializer factories, preprocessing, empty bodies

    @Test(arguments: TransportUnderTest.available)
    func factoriesServeResponseAndSerializing(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(#"{"nick":"bob","level":3}"#)) { request async throws in
            #expect(try await request.serializing(using: .decodable(of: User.self)).value == User(nick: "bob", level: 3))
            #expect(try await request.serializing(using: .data).value.count == 24)
            #expect(try await request.serializing(using: .string).value.hasPrefix("{"))
            #expect(try await request.serializing(using: .string(encoding: .utf8)).value.hasSuffix("}"))
            #expect(try await request.serializing(using: .json).value["nick"]?.stringValue == "bob")
            let callback = await awaitCallback { done in
                request.response(queue: testCallbackQueue, using: .decodable(of: User.self)) { done($0.value) }
            }
            #expect(callback == User(nick: "bob", level: 3))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theJSONSecurityPrefixIsStripped(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(")]}',\n{\"nick\":\"bob\",\"level\":1}")) { request async throws in
            let plain = await request.serializingDecodable(User.self).result
            #expect(plain.error?.kind == .serializationFailed)
            let user = try await request.serializing(using: .decodable(of: User.self, dataPreprocessor: .jsonSecurityPrefix)).value
            #expect(user == User(nick: "bob", level: 1))
            #expect(try await request.serializing(using: .json(dataPreprocessor: .jsonSecurityPrefix)).value["level"]?.intValue == 1)
            #expect(try await request.serializing(using: .string(dataPreprocessor: .jsonSecurityPrefix)).value.hasPrefix("{"))
            #expect(try await request.serializing(using: .data(dataPreprocessor: .jsonSecurityPrefix)).value.first == UInt8(ascii: "{"))
        }
    }

    struct Failing: DataPreprocessor {
        func preprocess(_ data: Data) throws -> Data { throw AppError(code: 9) }
    }

    @Test(arguments: TransportUnderTest.available)
    func aFailingPreprocessorIsASerializationFailure(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .text("x")) { request async throws in
            let error = await request.serializing(using: .string(dataPreprocessor: Failing())).result.error
            #expect(error?.kind == .serializationFailed)
            #expect(error?.underlyingError as? AppError == AppError(code: 9))
        }
    }

    /// Fails on the old code: a 201 with no body was `.emptyResponse` for every serializer.
    @Test(arguments: TransportUnderTest.available)
    func aCreatedResponseWithoutABodyIsAValidEmptyValue(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .status(201)) { request async throws in
            #expect(try await request.serializingDecodable(Empty.self).value == Empty.value)
            #expect(try await request.serializingData().value == Data())
            #expect(try await request.serializingString().value == "")
            #expect(try await request.serializingJSON().value == .null)
            let optional = try await request.serializingDecodable(User?.self).value
            #expect(optional == nil)
            let required = await request.serializingDecodable(User.self).result.error
            #expect(required?.kind == .emptyResponse)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func emptyBodyRulesAreConfigurable(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, MockResponse(status: 200)) { request async throws in
            #expect(await request.serializingData().result.error?.kind == .emptyResponse)
            #expect(try await request.serializing(using: .data(emptyResponseCodes: [200])).value == Data())
            let optional = try await request.serializing(using: .decodable(of: User?.self, emptyResponseCodes: [200])).value
            #expect(optional == nil)
        }
        try await Self.respond(transport, .status(201)) { request async throws in
            let strict = await request.serializing(using: .decodable(of: Empty.self, emptyResponseCodes: [204])).result.error
            #expect(strict?.kind == .emptyResponse)
        }
        try await Self.respond(transport, .json(#"{"nick":"x","level":1}"#), method: .head) { request async throws in
            #expect(try await request.serializingDecodable(Empty.self).value == Empty.value)
            #expect(try await request.serializingDecodable(User?.self).value == nil)
        }
    }

    // MARK: Structured validation errors

    @Test(arguments: TransportUnderTest.available)
    func validationFailuresAreReadableAsFields(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .text("nope", status: 404)) { request async throws in
            let error = await request.validate().serializingData().result.error
            #expect(error?.kind == .validationFailed)
            #expect(error?.validationFailure == .unacceptableStatusCode(404))
            #expect(error?.validationFailure?.statusCode == 404)
        }
        try await Self.respond(transport, .text("nope", status: 409)) { request async throws in
            let error = await request.validate(statusCode: [200]).serializingData().result.error
            #expect(error?.validationFailure == .unacceptableStatusCode(409))
        }
        try await Self.respond(transport, .text("<html/>")) { request async throws in
            let error = await request.validate(contentType: ["application/json"]).serializingData().result.error
            #expect(error?.validationFailure == .unacceptableContentType(acceptable: ["application/json"], actual: "text/plain"))
        }
        try await Self.respond(transport, MockResponse(status: 200, body: .text("untyped"))) { request async throws in
            let error = await request.validate(contentType: ["application/json"]).serializingData().result.error
            #expect(error?.validationFailure == .missingContentType(acceptable: ["application/json"]))
        }
        try await Self.respond(transport, .json(#"{"nick":1}"#)) { request async throws in
            let error = await request.validate(json: .object(["nick": .string])).serializingData().result.error
            guard case .unexpectedJSONShape(let mismatch)? = error?.validationFailure else {
                Issue.record("expected a JSON shape failure, got \(String(describing: error))")
                return
            }
            #expect(mismatch.contains("nick"))
        }
        try await Self.respond(transport, .text("plain")) { request async throws in
            let error = await request.validate(json: .any).serializingData().result.error
            #expect(error?.validationFailure == .bodyIsNotJSON)
        }
        try await Self.respond(transport, .text("ok")) { request async throws in
            let error = await request.validate { _ in .failure(AppError(code: 1)) }.serializingData().result.error
            #expect(error?.kind == .validationFailed)
            #expect(error?.validationFailure == nil)
        }
    }

    @Test func validationFailuresSurviveContextBeingAdded() {
        let url = URL(string: "http://example.com/x")
        let error = CourierError(validationFailure: .unacceptableStatusCode(500), "bad").with(url: url, responseCode: 500)
        #expect(error.validationFailure == .unacceptableStatusCode(500))
        #expect(error.url == url && error.responseCode == 500 && error.kind == .validationFailed)
    }
}
