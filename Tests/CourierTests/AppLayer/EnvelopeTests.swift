import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

extension AppLayer {
    /// `{code, message, data}` envelopes: error mapping and payload decoding.
    @Suite("AppLayer: JSON envelopes") struct EnvelopeTests {
        struct User: Decodable, Sendable, Equatable {
            let id: Int64
            let name: String
        }

        func session(_ transport: TransportUnderTest, _ server: TestServer) -> Session {
            Session(configuration: appConfiguration(transport), baseURL: server.baseURL, callbackQueue: testCallbackQueue)
        }

        @Test(arguments: TransportUnderTest.available)
        func theDataMemberIsDecodedExactly(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                // 2^53 + 1 cannot be held by a Double: the payload must be decoded from the original bytes.
                server.enqueue(.json(#"{"code": 0, "message": "ok", "data": {"id": 9007199254740993, "name": "Ada \"Lovelace\""}}"#))
                let session = session(transport, server)
                let user = try await session.request("me").validate(envelope: .standard).serializingEnvelope(User.self).value
                #expect(user == User(id: 9_007_199_254_740_993, name: #"Ada "Lovelace""#))
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aFailureCodeBecomesAServerErrorWithTheServersMessage(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue(.json(#"{"code": 1001, "message": "余额不足", "data": null}"#))
                server.enqueue(.json(#"{"code": 1001, "message": "余额不足"}"#))
                let session = session(transport, server)
                for validating in [true, false] {
                    let request = session.request("pay")
                    if validating { request.validate(envelope: .standard) }
                    let error = try #require(await request.serializingEnvelope(User.self).response.error)
                    #expect(error.kind == .serverError)
                    #expect(error.message == "余额不足 (code 1001)")
                    #expect(error.responseCode == 200)
                    #expect(error.underlyingError as? EnvelopeError == EnvelopeError(code: 1001, message: "余额不足"))
                    #expect(error.url?.path == "/pay")
                }
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func envelopesOnHTTPErrorsAndBodiesThatAreNotEnvelopes(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.enqueue(.json(#"{"code": 503, "message": "database down"}"#, status: 503))
                server.enqueue(MockResponse(status: 502, headers: ["Content-Type": "text/html"], body: .text("<html>Bad gateway</html>")))
                server.enqueue(.json(#"{"message": "no code"}"#))
                server.enqueue(.json(#"[1, 2]"#))
                server.enqueue(.status(204))
                let session = session(transport, server)
                let http = await session.request("a").validate(envelope: .standard).serializingData().response.error
                #expect(http?.kind == .serverError)
                #expect(http?.message == "database down (code 503)")
                #expect(http?.responseCode == 503)
                for _ in 0..<3 {
                    let error = await session.request("b").validate(envelope: .standard).serializingData().response.error
                    #expect(error?.kind == .validationFailed)
                    #expect(error?.message.hasPrefix("The response is not a JSON envelope") == true)
                }
                let empty = await session.request("c").validate(envelope: .standard).serializingData().response
                #expect(empty.error == nil)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func customKeysStringCodesAndEmptyPayloads(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let format = EnvelopeFormat(codeKey: "errno", messageKey: "errmsg", dataKey: "result", successCodes: [200, 201])
                server.enqueue(.json(#"{"errno": "201", "errmsg": "", "result": {"id": 7, "name": "Bo"}}"#))
                server.enqueue(.json(#"{"errno": 200}"#))
                server.enqueue(.json(#"{"errno": 200, "result": null}"#))
                server.enqueue(.json(#"{"errno": 200}"#))
                server.enqueue(.json(#"{"errno": 404, "errmsg": ""}"#))
                let session = session(transport, server)
                #expect(try await session.request("1").serializingEnvelope(User.self, format: format).value == User(id: 7, name: "Bo"))
                #expect(try await session.request("2").serializingEnvelope(Empty.self, format: format).value == Empty.value)
                #expect(try await session.request("3").serializingEnvelope(User?.self, format: format).value == nil)
                let missing = await session.request("4").serializingEnvelope(User.self, format: format).response.error
                #expect(missing?.kind == .emptyResponse)
                let failure: DataResponse<User, CourierError> = await awaitCallback { done in
                    session.request("5").responseEnvelope(of: User.self, format: format, completionHandler: done)
                }
                #expect(failure.error?.message == "The server answered with code 404.")
                #expect(failure.error?.underlyingError as? EnvelopeError == EnvelopeError(code: 404, message: nil))
            }
        }

        @Test func theScannerFindsTopLevelMembersOnly() {
            func member(_ name: String, _ json: String) -> String? {
                JSONMemberScanner.value(of: name, in: Data(json.utf8)).map { String(decoding: $0, as: UTF8.self) }
            }
            let nested = #"{"a": {"data": 1, "s": "}\"{"}, "d\u0061ta" : [1, {"x": "]"}], "z": true}"#
            #expect(member("data", nested) == #"[1, {"x": "]"}]"#)
            #expect(member("z", nested) == "true")
            #expect(member("missing", nested) == nil)
            #expect(member("data", #"{"data": 1, "data": 2.5e3}"#) == "2.5e3")
            #expect(member("data", "\u{FEFF}{\"data\":null}") == "null")
            #expect(member("data", #"[{"data": 1}]"#) == nil)
            #expect(member("data", "{}") == nil)
        }
    }
}
