import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@testable import Courier
import CourierTestServer

extension AppLayer {
    /// `RequestGroup`: one completion with every response in input order, cancel-all, fail-fast.
    @Suite("AppLayer: request groups") struct RequestGroupTests {
        struct Item: Decodable, Sendable, Equatable { let id: Int }

        func session(_ transport: TransportUnderTest, _ server: TestServer) -> Session {
            var configuration = appConfiguration(transport)
            configuration.maximumConnectionsPerHost = 8
            return Session(configuration: configuration, baseURL: server.baseURL, callbackQueue: testCallbackQueue)
        }

        @Test(arguments: TransportUnderTest.available)
        func responsesArriveInInputOrderWhateverOrderTheyFinishIn(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                server.route("/a") { _ in MockResponse.ok("a").waiting(for: gate) }
                server.route("/b") { _ in .ok("b") }
                server.route("/c") { _ in .ok("c") }
                let session = session(transport, server)
                let b = session.request("b")
                let group = RequestGroup([session.request("a"), b, session.upload(Data("up".utf8), to: "c")])
                async let responses = group.serializingString()
                #expect(await gate.waitUntilWaiting(count: 1))
                // b finishes while a is still held; the group still lists a first.
                #expect(await b.serializingString().response.value == "b")
                gate.open()
                #expect(await responses.map(\.value) == ["a", "b", "c"])
                #expect(server.recordedRequests.first { $0.path == "/c" }?.bodyText == "up")
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func decodableAndCallbackForms(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.route("/items/1") { _ in .json(#"{"id":1}"#) }
                server.route("/items/2") { _ in .json(#"{"id":2}"#) }
                server.route("/items/3") { _ in .json(#"{"oops":3}"#) }
                let session = session(transport, server)
                let decoded = await RequestGroup((1...3).map { session.request("items/\($0)") }).serializingDecodable(Item.self)
                #expect(decoded.map(\.value) == [Item(id: 1), Item(id: 2), nil])
                #expect(decoded[2].error?.kind == .serializationFailed)

                let group = RequestGroup((1...2).map { session.request("items/\($0)") })
                let responses: [DataResponse<Data, CourierError>] = await awaitCallback { done in group.responseData(completionHandler: done) }
                #expect(responses.map(\.text) == [#"{"id":1}"#, #"{"id":2}"#])
                #expect(RequestGroup([]).requests.isEmpty)
                #expect(await RequestGroup([]).serializingData().isEmpty)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func cancelCancelsEveryRequest(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                server.dispatcher = { _ in MockResponse.ok("late").waiting(for: gate) }
                let session = session(transport, server)
                let group = RequestGroup((1...3).map { session.request("held/\($0)") })
                async let responses = group.serializingData()
                #expect(await gate.waitUntilWaiting(count: 3))
                group.cancel()
                let kinds = await responses.map(\.error?.kind)
                #expect(kinds == [.cancelled, .cancelled, .cancelled])
                for request in group.requests { #expect(await request.state == .cancelled) }
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func cancellingTheAwaitingTaskCancelsTheGroup(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                server.dispatcher = { _ in MockResponse.ok("late").waiting(for: gate) }
                let session = session(transport, server)
                let group = RequestGroup((1...2).map { session.request("held/\($0)") })
                let task = Task { await group.serializingData() }
                #expect(await gate.waitUntilWaiting(count: 2))
                task.cancel()
                #expect(await task.value.map(\.error?.kind) == [.cancelled, .cancelled])
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func failFastCancelsTheRestAtTheFirstFailure(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let held = Gate(), failing = Gate()
                server.route("/done") { _ in .ok("done") }
                server.route("/held") { _ in MockResponse.ok("late").waiting(for: held) }
                server.route("/broken") { _ in MockResponse.status(500).waiting(for: failing) }
                let session = session(transport, server)
                let done = session.request("done")
                #expect(await done.serializingData().response.value == Data("done".utf8))
                let group = RequestGroup(
                    [done, session.request("held"), session.request("broken").validate(), session.request("held")],
                    failFast: true)
                async let responses = group.serializingData()
                #expect(await held.waitUntilWaiting(count: 2))
                #expect(await failing.waitUntilWaiting(count: 1))
                failing.open()
                let results = await responses
                #expect(results.count == 4)
                #expect(results[0].value == Data("done".utf8))
                #expect(results[1].error?.kind == .cancelled)
                #expect(results[2].error?.kind == .validationFailed)
                #expect(results[2].error?.responseCode == 500)
                #expect(results[3].error?.kind == .cancelled)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func withoutFailFastAFailureHidesNothing(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                server.route("/ok") { _ in .ok("ok") }
                server.route("/broken") { _ in .status(500) }
                let session = session(transport, server)
                let results = await RequestGroup([session.request("broken").validate(), session.request("ok")]).serializingString()
                #expect(results[0].error?.kind == .validationFailed)
                #expect(results[1].value == "ok")
            }
        }
    }
}
