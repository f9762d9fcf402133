import CourierSupport
import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierLocking
import CourierTestSupport

/// A test-server route that demands HTTP authentication, checking answers itself.
struct AuthenticatingRoute: Sendable {
    enum Scheme: Sendable { case basic, digest(DigestChallenge.Algorithm, qop: Bool) }

    let scheme: Scheme
    let username: String
    let password: String
    let realm = "courier-tests@example.org"
    /// Nonces the server gave out, and whether the next answer to each is called stale once.
    private let nonces = Locked((issued: [String](), staleOnce: false))

    init(_ scheme: Scheme, username: String = "bob", password: String = "s3cret", staleOnce: Bool = false) {
        self.scheme = scheme
        self.username = username
        self.password = password
        nonces.withLock { $0.staleOnce = staleOnce }
    }

    func install(on server: TestServer, path: String = "/private") {
        server.route(path) { request in respond(to: request) }
    }

    func respond(to request: RecordedRequest) -> MockResponse {
        guard let authorization = request.headers["Authorization"] else { return challenge(stale: false) }
        switch scheme {
        case .basic:
            let expected = "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
            return authorization == expected ? .text("welcome \(username)") : challenge(stale: false)
        case .digest(let algorithm, let qop):
            let fields = HTTPChallenge.parse(authorization).first { $0.scheme == "digest" }?.parameters ?? [:]
            guard let nonce = fields["nonce"], nonces.withLock({ $0.issued.contains(nonce) }),
                fields["username"] == username, fields["realm"] == realm, fields["uri"] == request.target,
                fields["algorithm"] == algorithm.rawValue, fields["opaque"] == "opaque-value"
            else { return challenge(stale: false) }
            var parameters = ["realm": realm, "nonce": nonce, "algorithm": algorithm.rawValue]
            if qop { parameters["qop"] = "auth" }
            guard let digest = DigestChallenge(HTTPChallenge(scheme: "digest", parameters: parameters)) else { return .status(500) }
            if qop, fields["qop"] != "auth" || fields["nc"]?.count != 8 || fields["cnonce"] == nil { return challenge(stale: false) }
            let expected = digest.response(
                username: username, password: password, method: request.method, uri: request.target,
                nonceCount: Int(fields["nc"] ?? "0", radix: 16) ?? 0, clientNonce: fields["cnonce"] ?? "")
            guard fields["response"] == expected else { return challenge(stale: false) }
            if nonces.withLock({ state in
                defer { state.staleOnce = false }; return state.staleOnce
            }) {
                return challenge(stale: true)
            }
            return .text("welcome \(username)")
        }
    }

    private func challenge(stale: Bool) -> MockResponse {
        switch scheme {
        case .basic:
            return MockResponse(
                status: 401, headers: ["WWW-Authenticate": "Basic realm=\"\(realm)\", charset=\"UTF-8\""],
                body: .text("who are you?"))
        case .digest(let algorithm, let qop):
            let nonce = UUID().uuidString
            nonces.withLock { $0.issued.append(nonce) }
            var value =
                "Digest realm=\"\(realm)\", \(qop ? "qop=\"auth, auth-int\", " : "")algorithm=\(algorithm.rawValue), "
                + "nonce=\"\(nonce)\", opaque=\"opaque-value\""
            if stale { value += ", stale=TRUE" }
            return MockResponse(status: 401, headers: ["WWW-Authenticate": value], body: .text("who are you?"))
        }
    }
}

/// HTTP authentication (#26): preemptive Basic, and Basic and Digest challenges answered by Courier.
@Suite struct HTTPAuthenticationTests {
    static let schemes: [AuthenticatingRoute.Scheme] = [
        .basic, .digest(.md5, qop: true), .digest(.sha256, qop: true), .digest(.md5Session, qop: true),
        .digest(.sha256Session, qop: true), .digest(.md5, qop: false),
    ]

    // MARK: Known answers

    @Test(
        "MD5 matches RFC 1321's test suite",
        arguments: [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"),
        ])
    func md5(input: String, hex: String) {
        #expect(MD5.hash(Array(input.utf8)).map { String(format: "%02x", $0) }.joined() == hex)
    }

    @Test(
        "Digest responses match RFC 7616 §3.9.1 for MD5 and SHA-256",
        arguments: [
            (DigestChallenge.Algorithm.md5, "8ca523f5e9506fed4657c9700eebdbec"),
            (.sha256, "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ])
    func rfc7616Example(algorithm: DigestChallenge.Algorithm, expected: String) throws {
        let field =
            "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=\(algorithm.rawValue), "
            + "nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""
        let challenge = try #require(HTTPChallenge.parse(field).first.flatMap(DigestChallenge.init))
        let response = challenge.response(
            username: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
            nonceCount: 1, clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ")
        #expect(response == expected)
        let header = challenge.authorization(
            username: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
            nonceCount: 1, clientNonce: "c")
        #expect(header.hasPrefix("Digest username=\"Mufasa\", realm=\"http-auth@example.org\""))
        #expect(header.contains("qop=auth, nc=00000001, cnonce=\"c\"") && header.contains("opaque=\"FQhe"))
    }

    @Test("WWW-Authenticate fields with several challenges, quoting and token68 parse")
    func challengeParsing() {
        let parsed = HTTPChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Bearer dXNlcg==, Digest nonce=abc"#)
        #expect(parsed.map(\.scheme) == ["newauth", "basic", "bearer", "digest"])
        #expect(parsed[0].parameters == ["realm": "apps", "type": "1", "title": #"Login to "apps""#])
        #expect(parsed[3].parameters["nonce"] == "abc")
        #expect(HTTPChallenge.parse("").isEmpty)
        #expect(DigestChallenge(HTTPChallenge(scheme: "digest", parameters: ["nonce": "n", "qop": "auth-int"])) == nil)
        #expect(DigestChallenge(HTTPChallenge(scheme: "digest", parameters: ["nonce": "n", "algorithm": "SHA-512-256"])) == nil)
        #expect(DigestChallenge(HTTPChallenge(scheme: "digest", parameters: ["nonce": "n", "userhash": "true"])) == nil)
    }

    // MARK: Against the test server

    @Test(arguments: TransportUnderTest.available, Self.schemes.indices)
    func challengesAreAnswered(transport: TransportUnderTest, scheme: Int) async throws {
        try await withServer { server async throws in
            AuthenticatingRoute(Self.schemes[scheme]).install(on: server)
            let session = makeSession(transport, server: server)
            let text = try await session.request("private?x=1&y=%2F").authenticate(with: HTTPCredential(username: "bob", password: "s3cret"))
                .serializingString().value
            #expect(text == "welcome bob")
            let requests = server.recordedRequests
            #expect(requests.count == 2)
            #expect(requests.first?.headers["Authorization"] == nil)
            #expect(requests.last?.headers["Authorization"] != nil)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func theStrongestDigestIsChosenAndPostBodiesAreResent(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let route = AuthenticatingRoute(.digest(.sha256, qop: true))
            server.route("/private") { request in
                let response = route.respond(to: request)
                guard response.status == 401 else { return .text(request.bodyText) }
                // Offer MD5 first: Courier still picks SHA-256.
                let sha = response.headers["WWW-Authenticate"] ?? ""
                let md5 = sha.replacingOccurrences(of: "SHA-256", with: "MD5")
                return MockResponse(status: 401, headers: ["WWW-Authenticate": md5 + ", " + sha])
            }
            let session = makeSession(transport, server: server)
            let echoed = try await session.request("private", method: .post, parameters: ["a": "1"])
                .authenticate(with: URLCredential(user: "bob", password: "s3cret", persistence: .none))
                .validate().serializingString().value
            #expect(echoed == "a=1")
            #expect(server.recordedRequests.last?.headers["Authorization"]?.contains("algorithm=SHA-256") == true)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStaleNonceIsAnsweredAgain(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            AuthenticatingRoute(.digest(.md5, qop: true), staleOnce: true).install(on: server)
            let text = try await makeSession(transport, server: server).request("private")
                .authenticate(with: HTTPCredential(username: "bob", password: "s3cret")).validate().serializingString().value
            #expect(text == "welcome bob")
            #expect(server.recordedRequests.count == 3)
        }
    }

    @Test(arguments: TransportUnderTest.available, [AuthenticatingRoute.Scheme.basic, .digest(.sha256, qop: true)].indices)
    func aRejectedAnswerDeliversThe401(transport: TransportUnderTest, scheme: Int) async throws {
        let schemes: [AuthenticatingRoute.Scheme] = [.basic, .digest(.sha256, qop: true)]
        try await withServer { server async throws in
            AuthenticatingRoute(schemes[scheme]).install(on: server)
            let session = makeSession(transport, server: server)
            let wrong = HTTPCredential(username: "bob", password: "wrong")
            let response = await session.request("private").authenticate(with: wrong).serializingString().response
            #expect(response.response?.statusCode == 401)
            #expect(response.value == "who are you?", "\(String(describing: response.error))")
            let validated = await session.request("private").authenticate(with: wrong).validate().serializingString().result
            #expect(validated.error?.validationFailure == .unacceptableStatusCode(401))
            #expect(server.recordedRequests.count == 4)
        }
    }

    /// Fails on the old code with the URLSession transport: FoundationNetworking held a 401 with a
    /// Basic challenge until the idle timeout (with or without an `Authorization` header sent).
    /// The timeout runs on a manual clock that never moves, so only the 401 itself can end the
    /// request, however slow the machine; the old behaviour hangs until the hang limit.
    @Test(.hangLimit(.seconds(300)), arguments: TransportUnderTest.available, [false, true])
    func withoutACredentialA401IsJustAResponse(transport: TransportUnderTest, presetHeader: Bool) async throws {
        try await withServer { server async throws in
            AuthenticatingRoute(.basic).install(on: server)
            let session = makeSession(transport, server: server) {
                $0.requestTimeout = 5
                $0.transportClock = .manual(ManualTransportClock())
            }
            let headers: HTTPHeaders = presetHeader ? [.authorization(username: "bob", password: "wrong")] : [:]
            let response = await session.request("private", headers: headers).serializingString().response
            #expect(response.response?.statusCode == 401)
            #expect(response.value == "who are you?", "\(String(describing: response.error))")
            #expect(server.recordedRequests.count == 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSessionCredentialAnswersEveryRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            AuthenticatingRoute(.digest(.md5, qop: true)).install(on: server)
            let session = makeSession(transport, server: server) { $0.credential = HTTPCredential(username: "bob", password: "s3cret") }
            async let first = session.request("private").validate().serializingString().value
            async let second = session.download("private", to: .temporary).serializingDownloadedFileURL().tryMap {
                try String(contentsOf: $0, encoding: .utf8)
            }.value
            #expect(try await first == "welcome bob")
            #expect(try await second == "welcome bob")
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func challengesFromAnotherOriginAreNotAnswered(transport: TransportUnderTest) async throws {
        try await withServer { origin async throws in
            try await withServer { other async throws in
                AuthenticatingRoute(.basic).install(on: other)
                origin.route("/hop") { _ in .redirect(to: other.url("/private").absoluteString) }
                let response = await makeSession(transport, server: origin).request("hop")
                    .authenticate(with: HTTPCredential(username: "bob", password: "s3cret")).serializingString().response
                #expect(response.response?.statusCode == 401)
                #expect(other.recordedRequests.count == 1)
                #expect(other.recordedRequests.first?.headers["Authorization"] == nil)
            }
        }
    }

    // MARK: Preemptive Basic

    @Test(arguments: TransportUnderTest.available)
    func preemptiveBasicIsSentOnTheFirstRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            AuthenticatingRoute(.basic, username: "ann", password: "pä ss").install(on: server)
            let text = try await makeSession(transport, server: server).request("private")
                .authenticate(username: "ann", password: "pä ss").validate().serializingString().value
            #expect(text == "welcome ann")
            #expect(server.recordedRequests.count == 1)
            #expect(server.recordedRequests.first?.headers["Authorization"] == "Basic " + Data("ann:pä ss".utf8).base64EncodedString())
        }
    }

    @Test(arguments: TransportUnderTest.available, ["a:b", "tab\there", "nul\u{0}"])
    func unsendableBasicCredentialsFailClearly(transport: TransportUnderTest, username: String) async throws {
        try await withServer { server async throws in
            let error = await makeSession(transport, server: server).request("private")
                .authenticate(username: username, password: "x").serializingData().result.error
            let kinds = [error?.kind, (error?.underlyingError as? CourierError)?.kind]
            #expect(kinds.contains(.invalidRequest))
            #expect(error?.description.contains("Basic") == true)
            #expect(server.recordedRequests.isEmpty)
        }
    }

    @Test func credentialsDoNotPrintTheirPassword() {
        #expect("\(HTTPCredential(username: "bob", password: "hunter2"))".contains("hunter2") == false)
    }
}
