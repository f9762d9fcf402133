import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierLocking

/// HTTP/3 against hypercorn with aioquic (`.ci/h3-server.py`): requests over QUIC only, the
/// ``TLSConfiguration`` applied to them, and `Alt-Svc` followed from HTTP/2 to HTTP/3. On a libcurl
/// without HTTP/3, `.http3` fails clearly before anything is sent.
@Suite(.enabled(if: TransportUnderTest.available.contains(.curl), "needs the curl transport"))
struct HTTP3InteropTests {
    /// Whether the libcurl in use speaks HTTP/3.
    static let speaksHTTP3 = (try? Libcurl.current())?.supportsHTTP3 ?? false

    /// A curl-transport session trusting the test CA, speaking HTTP/3 only.
    private func session(baseURL: URL, configure: (inout SessionConfiguration) -> Void = { _ in }) throws -> Session {
        try HTTPSInterop.session(baseURL: baseURL) { configuration in
            configuration.httpVersion = .http3
            configure(&configuration)
        }
    }

    @Test func withoutHTTP3InLibcurlAnHTTP3RequestFailsBeforeAnythingIsSent() async throws {
        guard !Self.speaksHTTP3 else { return }
        // No server and no CA needed: the request is refused before anything is sent.
        let session = makeSession(.curl) { $0.httpVersion = .http3 }
        let response = await session.request("https://127.0.0.1:9/get").serializingData().response
        #expect(response.error?.kind == .httpVersionUnavailable, "\(String(describing: response.error))")
        #expect(response.error?.message.contains("without HTTP/3") == true, "\(String(describing: response.error?.message))")
        #expect(response.response == nil)
    }

    @Test func http3IsForHTTPSURLsOnly() async throws {
        // No server and no CA needed: the request is refused before anything is sent.
        let session = makeSession(.curl) { $0.httpVersion = .http3 }
        let response = await session.request("http://127.0.0.1:9/get").serializingData().response
        #expect(response.error?.kind == .httpVersionUnavailable, "\(String(describing: response.error))")
        #expect(response.error?.message.contains("TLS only") == true, "\(String(describing: response.error?.message))")
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func requestsGoOverQUICAndMetricsSaySo() async throws {
        guard let h3 = InteropServer.http3 else { return }
        let session = try session(baseURL: h3)
        let window = IdleWindow()
        let response = await session.request("get", parameters: ["over": "quic"]).validate().serializingData().response
        #expect(response.error == nil, "\(String(describing: response.error))")
        #expect(response.metrics?.httpVersion == "HTTP/3")
        #expect(response.response?.value(forHTTPHeaderField: "Server") == "hypercorn-h3")
        let body = try #require(response.data)
        let json = try #require(try JSONSerialization.jsonObject(with: body) as? [String: Any])
        #expect((json["args"] as? [String: Any])?["over"] as? String == "quic")

        let second = await session.request("get").serializingData().response
        #expect(second.metrics?.httpVersion == "HTTP/3")
        if window.provesReuse("requestsGoOverQUICAndMetricsSaySo") {
            #expect(second.metrics?.connectionReused == true, "\(String(describing: second.metrics))")
        }
    }

    /// A fixture file of `.ci/start-servers.sh`, fetched over TCP (HTTP/2).
    private func overTCP(_ path: String, from server: URL) async throws -> Data {
        let session = try HTTPSInterop.session(baseURL: server)
        let response = await session.request(path).validate().serializingData().response
        #expect(response.metrics?.httpVersion == "HTTP/2")
        return try #require(response.data, "\(String(describing: response.error))")
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func bodiesArriveByteExactBothWaysAndDecoded() async throws {
        guard let h3 = InteropServer.http3 else { return }
        let session = try session(baseURL: h3)
        let expected = try await overTCP("files/random-1m.bin", from: h3)
        #expect(expected.count == 1 << 20)
        let file = await session.request("files/random-1m.bin").validate().serializingData().response
        #expect(file.error == nil, "\(String(describing: file.error))")
        #expect(file.data == expected)
        #expect(file.metrics?.httpVersion == "HTTP/3")

        let payload = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let posted = await session.upload(payload, to: "post", method: .post).validate().serializingData().response
        #expect(posted.error == nil, "\(String(describing: posted.error))")
        let echo = try #require(try JSONSerialization.jsonObject(with: posted.data ?? Data()) as? [String: Any])
        let prefix = "data:application/octet-stream;base64,"
        let echoed = (echo["data"] as? String).flatMap { $0.hasPrefix(prefix) ? Data(base64Encoded: String($0.dropFirst(prefix.count))) : nil }
        #expect(echoed == payload)
        #expect(posted.metrics?.httpVersion == "HTTP/3")

        let gzip = await session.request("gzip").validate().serializingData().response
        #expect(gzip.error == nil, "\(String(describing: gzip.error))")
        let gzipped = try #require(try JSONSerialization.jsonObject(with: gzip.data ?? Data()) as? [String: Any])
        #expect(gzipped["gzipped"] as? Bool == true)
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func aStreamReadSlowlyOverQUICLosesNoByte() async throws {
        guard let h3 = InteropServer.http3 else { return }
        let expected = try await overTCP("files/slow.bin", from: h3)
        let session = try session(baseURL: h3)
        let stream = session.streamRequest("files/slow.bin")
        var received = Data()
        var pauses = 0
        for try await chunk in stream.streamingData() {
            received.append(chunk)
            // A slow consumer: the 1 MiB window fills and the transfer pauses, QUIC's flow control
            // holding the server, until this loop reads on.
            if received.count >= (pauses + 1) << 20 {
                pauses += 1
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        #expect(received == expected)
        #expect(await stream.metrics?.httpVersion == "HTTP/3")
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func theTLSConfigurationAppliesOverQUIC() async throws {
        guard let h3 = InteropServer.http3, let ca = InteropServer.testCA, let other = InteropServer.otherCA,
            let pin = InteropServer.serverPin, let wrongPin = InteropServer.wrongPin, let host = h3.host
        else { return }
        func get(_ configure: (inout TLSConfiguration) -> Void) async -> DataResponse<Data, CourierError> {
            var configuration = SessionConfiguration()
            configuration.transport = .curl
            configuration.cookies = .none
            configuration.requestTimeout = 30
            configuration.httpVersion = .http3
            configure(&configuration.tls)
            let session = Session(configuration: configuration, callbackQueue: testCallbackQueue)
            return await session.request(h3.appendingPathComponent("get")).serializingData().response
        }
        let untrusted = await get { _ in }
        #expect(untrusted.error?.isSecureConnectionFailure == true, "\(String(describing: untrusted.error))")
        let wrongCA = await get { $0.trustRoots = .only([other]) }
        #expect(wrongCA.error?.isSecureConnectionFailure == true, "\(String(describing: wrongCA.error))")
        let trusted = await get { $0.trustRoots = .only([ca]) }
        #expect(trusted.error == nil, "\(String(describing: trusted.error))")
        #expect(trusted.metrics?.httpVersion == "HTTP/3")
        let pinned = await get {
            $0.trustRoots = .system(adding: [ca])
            $0.pinnedPublicKeys = [host: [pin]]
        }
        #expect(pinned.error == nil, "\(String(describing: pinned.error))")
        let mispinned = await get {
            $0.trustRoots = .system(adding: [ca])
            $0.pinnedPublicKeys = [host: [wrongPin]]
        }
        #expect(mispinned.error?.kind == .pinMismatch, "\(String(describing: mispinned.error))")
        let tls13 = await get {
            $0.trustRoots = .only([ca])
            $0.minimumVersion = .tls1_3
        }
        #expect(tls13.error == nil, "\(String(describing: tls13.error))")
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func aClientCertificateIsPresentedOverQUIC() async throws {
        guard let mtls = InteropServer.http3MutualTLS, let ca = InteropServer.testCA,
            let certificate = InteropServer.clientCertificate, let key = InteropServer.clientKey,
            let rogue = InteropServer.rogueClientCertificate, let rogueKey = InteropServer.rogueClientKey
        else { return }
        func get(_ client: TLSConfiguration.ClientCertificate?) async throws -> DataResponse<Data, CourierError> {
            let session = try session(baseURL: mtls) { $0.tls.clientCertificate = client }
            return await session.request("get").serializingData().response
        }
        _ = ca
        let none = try await get(nil)
        #expect(none.error != nil && none.response == nil, "\(String(describing: none.error))")
        let rogueResponse = try await get(.pem(certificate: rogue, privateKey: rogueKey))
        #expect(rogueResponse.error != nil && rogueResponse.response == nil, "\(String(describing: rogueResponse.error))")
        let accepted = try await get(.pem(certificate: certificate, privateKey: key))
        #expect(accepted.error == nil, "\(String(describing: accepted.error))")
        #expect(accepted.metrics?.httpVersion == "HTTP/3")
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func altSvcMovesAnOriginToHTTP3OnTheAdvertisedPort() async throws {
        guard let origin = InteropServer.http3AltSvc else { return }
        let session = try HTTPSInterop.session(baseURL: origin) { $0.usesHTTP3WhenAdvertised = true }
        let first = await session.request("get").serializingData().response
        #expect(first.error == nil, "\(String(describing: first.error))")
        #expect(first.metrics?.httpVersion == "HTTP/2")
        let second = await session.request("get").serializingData().response
        #expect(second.error == nil, "\(String(describing: second.error))")
        #expect(second.metrics?.httpVersion == "HTTP/3")
        // A request that chose its version keeps it.
        let pinned = await session.request("get").httpVersion(.http1_1).serializingData().response
        #expect(pinned.metrics?.httpVersion == "HTTP/1.1")

        // Without the opt-in the advertisement is not followed.
        let plain = try HTTPSInterop.session(baseURL: origin)
        for _ in 0..<2 {
            let response = await plain.request("get").serializingData().response
            #expect(response.metrics?.httpVersion == "HTTP/2")
        }
    }

    @Test(.enabled(if: speaksHTTP3, "needs a libcurl with HTTP/3"))
    func anAlternativeThatCannotBeReachedFallsBackToTCPAndIsLeftAlone() async throws {
        guard let origin = InteropServer.http3DeadAltSvc else { return }
        let session = try HTTPSInterop.session(baseURL: origin) { $0.usesHTTP3WhenAdvertised = true }
        let transport = try #require(session.transport as? CurlTransport)
        let key = try #require(CurlAlternativeServices.Origin(origin))
        let first = await session.request("get").serializingData().response
        #expect(first.metrics?.httpVersion == "HTTP/2")
        #expect(transport.defaults.alternativeServices?.alternative(for: key) != nil)
        // Sent to the dead alternative, then over TCP: the caller sees an ordinary answer.
        let second = await session.request("get").serializingData().response
        #expect(second.error == nil, "\(String(describing: second.error))")
        #expect(second.metrics?.httpVersion == "HTTP/2")
        #expect(transport.defaults.alternativeServices?.alternative(for: key) == nil)
        let third = await session.request("get").serializingData().response
        #expect(third.error == nil, "\(String(describing: third.error))")
        #expect(third.metrics?.httpVersion == "HTTP/2")
    }

    @Test func theURLSessionTransportRefusesHTTP3Clearly() async throws {
        var configuration = SessionConfiguration()
        configuration.transport = .urlSession(.ephemeral)
        configuration.httpVersion = .http3
        #expect(throws: CourierError.self) { try configuration.validate() }
        configuration.httpVersion = .automatic
        configuration.usesHTTP3WhenAdvertised = true
        do {
            try configuration.validate()
            Issue.record("usesHTTP3WhenAdvertised passed validation on URLSession")
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains("HTTP/3"))
        }
        let session = Session(
            configuration: {
                var c = SessionConfiguration(); c.transport = .urlSession(.ephemeral); return c
            }())
        let response = await session.request(URL(string: "https://127.0.0.1:9/")!).httpVersion(.http3).serializingData().response
        #expect(response.error?.kind == .invalidConfiguration, "\(String(describing: response.error))")
        #expect(response.error?.message.contains("HTTP/3") == true)
    }
}
