import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Serializers through real responses, and the order of response handlers.
@Suite struct SerializationTests {
    struct User: Decodable, Sendable, Equatable { let nick: String; let level: Int }

    static func respond(
        _ transport: TransportUnderTest, _ response: MockResponse, method: HTTPMethod = .get,
        _ body: (DataRequest) async throws -> Void
    ) async throws {
        try await withServer { server async throws in
            server.enqueue(response)
            try await body(makeSession(transport, server: server).request("s", method: method))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func everySerializerReadsTheSameBody(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(#"{"nick":"bob","level":3}"#)) { request async throws in
            async let user = request.serializingDecodable(User.self).value
            async let text = request.serializingString().value
            async let json = request.serializingJSON().value
            async let data = request.serializingData().value
            #expect(try await user == User(nick: "bob", level: 3))
            #expect(try await text == #"{"nick":"bob","level":3}"#)
            #expect(try await json["level"]?.intValue == 3)
            #expect(try await data.count == 24)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func stringEncodingPrefersTheCallerThenTheResponseThenLatin1(transport: TransportUnderTest) async throws {
        let latin1Bytes = Data([0x63, 0x61, 0x66, 0xE9])  // "café" in ISO-8859-1
        let utf8Bytes = Data("café".utf8)
        let declaredLatin1 = MockResponse(status: 200, headers: ["Content-Type": "text/plain; charset=iso-8859-1"], body: .data(latin1Bytes))
        let undeclared = MockResponse(status: 200, headers: ["Content-Type": "text/plain"], body: .data(latin1Bytes))
        let declaredUTF8 = MockResponse(status: 200, headers: ["Content-Type": "text/plain; charset=UTF-8"], body: .data(utf8Bytes))
        try await Self.respond(transport, declaredLatin1) { r async throws in #expect(try await r.serializingString().value == "café") }
        try await Self.respond(transport, undeclared) { r async throws in #expect(try await r.serializingString().value == "café") }
        try await Self.respond(transport, declaredUTF8) { r async throws in #expect(try await r.serializingString().value == "café") }
        try await Self.respond(transport, declaredUTF8) { r async throws in
            #expect(try await r.serializingString(encoding: .isoLatin1).value == "cafÃ©")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func invalidBytesForTheCharsetFailReadably(transport: TransportUnderTest) async throws {
        let utf32 = "hi".data(using: .utf32LittleEndian) ?? Data()
        let response = MockResponse(status: 200, headers: ["Content-Type": "text/plain; charset=utf-8"], body: .data(utf32 + Data([0xFF, 0xFE])))
        try await Self.respond(transport, response) { request async throws in
            let error = await request.serializingString().result.error
            #expect(error?.kind == .serializationFailed)
            #expect(error?.message.contains("UTF-8") == true || error?.message.contains("utf-8") == true)
        }
    }

    @Test(arguments: TransportUnderTest.available, [204, 205])
    func emptyStatusesGiveEmptyValues(transport: TransportUnderTest, status: Int) async throws {
        try await Self.respond(transport, .status(status)) { request async throws in
            #expect(try await request.serializingData().value == Data())
            #expect(try await request.serializingString().value == "")
            #expect(try await request.serializingJSON().value == .null)
            #expect(try await request.serializingDecodable(Empty.self).value == Empty.value)
            let int = await request.serializingDecodable(Int.self).result.error
            #expect(int?.kind == .emptyResponse)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func headGivesEmptyValues(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json("[1,2,3]"), method: .head) { request async throws in
            #expect(try await request.serializingData().value == Data())
            #expect(try await request.serializingJSON().value == .null)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func anEmptyBodyWhereOneIsExpectedIsAnError(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, MockResponse(status: 200)) { request async throws in
            let dataError = await request.serializingData().result.error
            #expect(dataError?.kind == .emptyResponse)
            let decodableError = await request.serializingDecodable(User.self).result.error
            #expect(decodableError?.kind == .emptyResponse)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func decodingErrorsNameTheMissingKey(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(#"{"nick":"bob"}"#)) { request async throws in
            let error = await request.serializingDecodable(User.self).result.error
            #expect(error?.kind == .serializationFailed)
            #expect(error?.message.contains(#"missing key "level""#) == true)
            #expect(error?.underlyingError is DecodingError)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func invalidJSONIsASerializationError(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .json(#"{"nick":"#)) { request async throws in
            let error = await request.serializingJSON().result.error
            #expect(error?.kind == .serializationFailed)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func handlersRunOnceEachInTheOrderAdded(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.json(#"{"nick":"bob","level":3}"#))
            let session = makeSession(transport, server: server)
            let order = Collected<String>()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                session.request("s")
                    .responseDecodable(of: User.self) { _ in order.append("decodable") }
                    .responseString { _ in order.append("string") }
                    .responseJSON { _ in order.append("json") }
                    .responseData { _ in
                        order.append("data"); continuation.resume()
                    }
            }
            #expect(order.all == ["decodable", "string", "json", "data"])
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func handlersAddedAfterCompletionStillRun(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("late"))
            let session = makeSession(transport, server: server)
            let request = session.request("s")
            #expect(try await request.serializingString().value == "late")
            #expect(await request.state == .finished)
            let again: DataResponse<String, CourierError> = await awaitCallback { done in request.responseString(completionHandler: done) }
            #expect(again.value == "late")
            #expect(try await request.serializingData().value == Data("late".utf8))
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func awaitingTheSameTaskTwiceSerializesOnce(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .ok("once")) { request async throws in
            let task = request.serializingString()
            async let first = task.value
            async let second = task.response
            #expect(try await first == "once")
            #expect(await second.value == "once")
            #expect(await second.serializationDuration >= 0)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func callbackQueueIsHonoured(transport: TransportUnderTest) async throws {
        try await Self.respond(transport, .ok("q")) { request async throws in
            let queue = DispatchQueue(label: "courier.tests.custom")
            let key = DispatchSpecificKey<Bool>()
            queue.setSpecific(key: key, value: true)
            let onQueue: Bool = await awaitCallback { done in
                request.responseString(queue: queue) { _ in done(DispatchQueue.getSpecific(key: key) == true) }
            }
            #expect(onQueue)
        }
    }
}
