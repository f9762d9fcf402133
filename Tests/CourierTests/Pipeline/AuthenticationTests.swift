import Testing
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// A bearer token that may be marked as expiring.
private struct TestToken: AuthenticationCredential, Equatable {
    var value: String
    var requiresRefresh = false
}

/// Issues `fresh-1`, `fresh-2`, … and counts refreshes; `hold` keeps a refresh running until it
/// is reached, `fails` makes refreshes throw.
private final class TestAuthenticator: Authenticator {
    let refreshCount = Atomic(0)
    let authenticationFailures = Atomic(0)
    let hold: CountdownLatch?
    let fails: Bool

    init(hold: CountdownLatch? = nil, fails: Bool = false) {
        self.hold = hold
        self.fails = fails
    }

    func apply(_ credential: TestToken, to urlRequest: inout URLRequest) {
        urlRequest.setValue("Bearer \(credential.value)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ credential: TestToken, for session: Session) async throws -> TestToken {
        let number = refreshCount.add(1, ordering: .relaxed).newValue
        if let hold { _ = await hold.wait() }
        if fails { throw TestFailure(reason: "token endpoint down") }
        return TestToken(value: "fresh-\(number)")
    }

    func didRequest(_ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: CourierError) -> Bool {
        authenticationFailures.add(1, ordering: .relaxed)
        hold?.arrive()
        return response.statusCode == 401
    }
}

extension Pipeline {
    /// `AuthenticationInterceptor`: one refresh for many failures, waiting adapts, failures, limits.
    @Suite("Pipeline: Authentication") struct AuthenticationTests {
        /// Answers 401 (held on `gate`, if given) to anything but `Bearer <accepted>`.
        private func protect(_ server: TestServer, accepting accepted: String, gate: Gate? = nil) {
            server.route("/private") { request in
                if request.headers["Authorization"] == "Bearer \(accepted)" { return .ok("secret") }
                let rejection = MockResponse.status(401)
                return gate.map { rejection.waiting(for: $0) } ?? rejection
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func sixConcurrentRejectionsCauseOneRefreshAndSixRetries(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                protect(server, accepting: "fresh-1", gate: gate)
                // The refresh finishes only once all six failures reached the interceptor, so every
                // one of them finds a refresh running.
                let authenticator = TestAuthenticator(hold: CountdownLatch(target: 6))
                let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestToken(value: "stale"))
                let session = makeSession(transport, server: server, interceptor: auth)
                let requests = (0..<6).map { _ in session.request("private").validate() }
                let tasks = requests.map { $0.serializingString() }
                tasks.forEach { $0.resume() }
                #expect(await gate.waitUntilWaiting(count: 6))
                gate.open()
                for task in tasks { #expect(try await task.value == "secret") }
                for request in requests { #expect(await request.retryCount == 1) }
                #expect(authenticator.refreshCount.load(ordering: .relaxed) == 1)
                #expect(authenticator.authenticationFailures.load(ordering: .relaxed) == 6)
                let tokens = server.recordedRequests.map { $0.headers["Authorization"] ?? "" }
                #expect(tokens.filter { $0 == "Bearer stale" }.count == 6)
                #expect(tokens.filter { $0 == "Bearer fresh-1" }.count == 6)
                #expect(auth.credential == TestToken(value: "fresh-1"))
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aRefreshFailureReachesAllSixAndClearsTheCredential(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                protect(server, accepting: "never", gate: gate)
                let authenticator = TestAuthenticator(hold: CountdownLatch(target: 6), fails: true)
                let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestToken(value: "stale"))
                let session = makeSession(transport, server: server, interceptor: auth)
                let tasks = (0..<6).map { _ in session.request("private").validate().serializingString() }
                tasks.forEach { $0.resume() }
                #expect(await gate.waitUntilWaiting(count: 6))
                gate.open()
                for task in tasks {
                    let error = await task.response.error
                    #expect(error?.kind == .authenticationFailed)
                    #expect(error?.responseCode == 401)
                    guard case .refreshFailed(let cause)? = error?.underlyingError as? AuthenticationError else {
                        Issue.record("expected refreshFailed, got \(String(describing: error))")
                        continue
                    }
                    #expect(cause as? TestFailure == TestFailure(reason: "token endpoint down"))
                }
                #expect(authenticator.refreshCount.load(ordering: .relaxed) == 1)
                #expect(auth.credential == nil)
                #expect(server.requestCount == 6)

                // Without a credential, the next request fails before reaching the server.
                let next = await session.request("private").validate().serializingString().response
                #expect(next.error?.kind == .authenticationFailed)
                #expect(
                    next.error?.underlyingError.flatMap { $0 as? AuthenticationError }.map { "\($0)" }
                        == "\(AuthenticationError.missingCredential)")
                #expect(server.requestCount == 6)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func adaptsWaitForARunningRefresh(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                protect(server, accepting: "fresh-1")
                let release = CountdownLatch(target: 1)
                let authenticator = TestAuthenticator(hold: release)
                let auth = AuthenticationInterceptor(
                    authenticator: authenticator,
                    credential: TestToken(value: "expiring", requiresRefresh: true))
                let session = makeSession(transport, server: server, interceptor: auth)
                let tasks = (0..<6).map { _ in session.request("private").validate().serializingString() }
                tasks.forEach { $0.resume() }
                // All six adapts queue behind the one refresh; nothing reaches the server meanwhile.
                #expect(await eventually { auth.waitingCount == 6 })
                #expect(server.requestCount == 0)
                release.arrive()
                for task in tasks { #expect(try await task.value == "secret") }
                #expect(authenticator.refreshCount.load(ordering: .relaxed) == 1)
                #expect(server.recordedRequests.allSatisfy { $0.headers["Authorization"] == "Bearer fresh-1" })
                #expect(server.requestCount == 6)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aRequestSentWithAnOlderCredentialIsRetriedWithoutARefresh(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                let gate = Gate()
                protect(server, accepting: "new-login", gate: gate)
                let authenticator = TestAuthenticator()
                let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestToken(value: "old"))
                let session = makeSession(transport, server: server, interceptor: auth)
                let request = session.request("private").validate()
                let task = request.serializingString()
                task.resume()
                #expect(await gate.waitUntilWaiting(count: 1))
                auth.credential = TestToken(value: "new-login")
                gate.open()
                #expect(try await task.value == "secret")
                #expect(await request.retryCount == 1)
                #expect(authenticator.refreshCount.load(ordering: .relaxed) == 0)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func tooManyRefreshesFailClearly(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                protect(server, accepting: "nothing works")
                let authenticator = TestAuthenticator()
                let window = RefreshWindow(interval: .seconds(60), maximumAttempts: 2)
                let auth = AuthenticationInterceptor(authenticator: authenticator, credential: TestToken(value: "a"), refreshWindow: window)
                let session = makeSession(transport, server: server, interceptor: auth)
                let request = session.request("private").validate()
                let error = await request.serializingString().response.error
                #expect(error?.kind == .authenticationFailed)
                guard case .excessiveRefresh(let reported)? = error?.underlyingError as? AuthenticationError else {
                    Issue.record("expected excessiveRefresh, got \(String(describing: error))")
                    return
                }
                #expect(reported == window)
                #expect(error?.description.contains("refreshed 2 times") == true)
                #expect(error?.message == "Authentication failed after a 401 response.")
                #expect(authenticator.refreshCount.load(ordering: .relaxed) == 2)
                #expect(await request.retryCount == 2)
                #expect(server.requestCount == 3)
            }
        }

        @Test(arguments: TransportUnderTest.available)
        func aMissingCredentialFailsTheAdapt(transport: TransportUnderTest) async throws {
            try await withServer { server async throws in
                protect(server, accepting: "x")
                let auth = AuthenticationInterceptor<TestAuthenticator>(authenticator: TestAuthenticator())
                let session = makeSession(transport, server: server)
                let error = await session.request("private", interceptor: auth).serializingString().response.error
                #expect(error?.kind == .authenticationFailed)
                #expect(error?.description.contains("no credential") == true)
                #expect(server.requestCount == 0)
            }
        }

        @Test func theDefaultCredentialCheckComparesWhatApplyWouldChange() throws {
            let authenticator = TestAuthenticator()
            var request = URLRequest(url: try #require(URL(string: "http://example.com/a")))
            request.setValue("text/plain", forHTTPHeaderField: "Accept")
            authenticator.apply(TestToken(value: "one"), to: &request)
            #expect(authenticator.isRequest(request, authenticatedWith: TestToken(value: "one")))
            #expect(!authenticator.isRequest(request, authenticatedWith: TestToken(value: "two")))
            request.setValue(nil, forHTTPHeaderField: "Authorization")
            #expect(!authenticator.isRequest(request, authenticatedWith: TestToken(value: "one")))
        }
    }
}
