import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Every ``TLSConfiguration`` field against real servers (nginx and a Python TLS server started by
/// `.ci/start-servers.sh`): each test fails when its field is ignored.
@Suite(.enabled(if: TransportUnderTest.available.contains(.curl), "needs the curl transport"))
struct TLSConfigurationInteropTests {
    /// A curl-transport session with `configure` applied to a configuration that trusts nothing extra.
    private func session(_ configure: (inout TLSConfiguration) -> Void) -> Session {
        var configuration = SessionConfiguration.testing
        configuration.transport = .curl
        configuration.cookies = .none
        configuration.requestTimeout = 30
        configure(&configuration.tls)
        return Session(configuration: configuration, callbackQueue: testCallbackQueue)
    }

    private func get(_ url: URL, _ path: String = "connection", on session: Session) async -> DataResponse<Data, CourierError> {
        await session.request(url.appendingPathComponent(path)).serializingData().response
    }

    @Test func trustRootsDecideWhichServersAreTrusted() async throws {
        guard let server = InteropServer.nginxHTTPS, let ca = InteropServer.testCA, let other = InteropServer.otherCA,
            let directory = InteropServer.testCADirectory
        else { return }
        let system = await get(server, on: session { _ in })
        #expect(system.error?.kind == .serverCertificateUntrusted, "\(String(describing: system.error))")
        #expect(system.error?.message.contains("127.0.0.1") == true)
        let added = await get(server, on: session { $0.trustRoots = .system(adding: [ca]) })
        #expect(added.error == nil, "\(String(describing: added.error))")
        let only = await get(server, on: session { $0.trustRoots = .only([ca]) })
        #expect(only.error == nil, "\(String(describing: only.error))")
        let wrong = await get(server, on: session { $0.trustRoots = .only([other]) })
        #expect(wrong.error?.kind == .serverCertificateUntrusted, "\(String(describing: wrong.error))")
        let hashed = await get(server, on: session { $0.trustRoots = .only([], directory: directory) })
        #expect(hashed.error == nil, "\(String(describing: hashed.error))")
        // The deprecated spelling still adds to the system store.
        var legacy = SessionConfiguration.testing
        legacy.transport = .curl
        legacy.additionalTrustedCertificates = [ca]
        let legacySession = Session(configuration: legacy, callbackQueue: testCallbackQueue)
        #expect(await get(server, on: legacySession).error == nil)
    }

    /// The shared trust store (one parsed store for every connection) and libcurl reading the CA
    /// files itself must trust exactly the same servers, for every kind of trust root and for
    /// `SSL_CERT_FILE` / `SSL_CERT_DIR`; and where libcurl's TLS is OpenSSL the store is really used.
    @Test func theSharedTrustStoreTrustsWhatTheCAFilesTrust() async throws {
        guard let server = InteropServer.nginxHTTPS, let ca = InteropServer.testCA, let other = InteropServer.otherCA,
            let directory = InteropServer.testCADirectory
        else { return }
        var cases: [(String, TLSConfiguration.TrustRoots, [String: String], Bool)] = [
            ("system", .system, [:], false),
            ("system + CA", .system(adding: [ca]), [:], true),
            ("only CA", .only([ca]), [:], true),
            ("only other CA", .only([other]), [:], false),
            ("only directory", .only([], directory: directory), [:], true),
            ("only other CA + directory", .only([other], directory: directory), [:], true),
            ("SSL_CERT_FILE", .system, ["SSL_CERT_FILE": ca.path], true),
            ("SSL_CERT_DIR", .system, ["SSL_CERT_DIR": directory.path], true),
            ("SSL_CERT_FILE other + SSL_CERT_DIR", .system, ["SSL_CERT_FILE": other.path, "SSL_CERT_DIR": directory.path], true),
            ("SSL_CERT_FILE CA + SSL_CERT_DIR other", .system, ["SSL_CERT_FILE": ca.path, "SSL_CERT_DIR": "/etc/ssl/certs"], true),
        ]
        let library = try CurlLibrary.load()
        if let bundle = CurlTrustStore.systemBundlePath(library: library) {
            // The distributions' pair: the system bundle with a hashed directory is read as the directory alone.
            cases.append(
                (
                    "SSL_CERT_FILE bundle + SSL_CERT_DIR CA directory", .system,
                    ["SSL_CERT_FILE": bundle, "SSL_CERT_DIR": directory.path], true
                ))
            #expect(
                CurlTLSSettings.SystemTrust.locateForSharedStore(
                    library: library, environment: ["SSL_CERT_FILE": bundle, "SSL_CERT_DIR": directory.path])
                    == CurlTLSSettings.SystemTrust(file: nil, directory: directory.path))
            #expect(
                CurlTLSSettings.SystemTrust.locateForSharedStore(
                    library: library, environment: ["SSL_CERT_FILE": ca.path, "SSL_CERT_DIR": directory.path])
                    == CurlTLSSettings.SystemTrust(file: ca.path, directory: directory.path))
        }
        let openSSL = (library.sslVersion ?? "").hasPrefix("OpenSSL/")
        for (name, roots, environment, trusted) in cases {
            for sharing in [true, false] {
                var configuration = TransportConfiguration()
                configuration.tls.trustRoots = roots
                let transport = try CurlTransport(
                    configuration: configuration, receiveBufferSize: 64 * 1024,
                    responseWaitLimit: .zero, proxies: CurlProxyEnvironment(environment: [:]),
                    environment: environment, sharesTrust: sharing)
                defer { transport.shutdown() }
                #expect(transport.sharesTrustStore == (sharing && openSSL), "\(name), sharing \(sharing)")
                let result = try await CurlTestSupport.run(TransportRequest(url: server.appendingPathComponent("connection")), on: transport)
                if trusted {
                    #expect(result.error == nil, "\(name), sharing \(sharing): \(String(describing: result.error))")
                } else {
                    #expect(result.error?.kind == .serverCertificateUntrusted, "\(name), sharing \(sharing): \(String(describing: result.error))")
                }
            }
        }
    }

    @Test func sslCertFileAndDirAreHonouredForTheSystemStore() async throws {
        guard let server = InteropServer.nginxHTTPS, let ca = InteropServer.testCA, let directory = InteropServer.testCADirectory else { return }
        for environment in [["SSL_CERT_FILE": ca.path], ["SSL_CERT_DIR": directory.path], ["SSL_CERT_FILE": "/nonexistent.pem"]] {
            let transport = try CurlTransport(
                configuration: TransportConfiguration(), receiveBufferSize: 64 * 1024,
                responseWaitLimit: .zero, proxies: CurlProxyEnvironment(environment: [:]),
                environment: environment)
            defer { transport.shutdown() }
            let result = try await CurlTestSupport.run(TransportRequest(url: server.appendingPathComponent("connection")), on: transport)
            if environment["SSL_CERT_FILE"] == "/nonexistent.pem" {
                // The variable is read: the file it names is the one libcurl could not load.
                #expect(result.error?.kind == .invalidConfiguration, "\(environment): \(String(describing: result.error))")
                #expect(result.error?.message.contains("/nonexistent.pem") == true)
            } else {
                #expect(result.error == nil, "\(environment): \(String(describing: result.error))")
            }
        }
    }

    @Test func serverCertificateFailuresHaveTheirOwnKinds() async throws {
        guard let expired = InteropServer.nginxExpired, let wrongHost = InteropServer.nginxWrongHost,
            let selfSigned = InteropServer.nginxSelfSigned, let ca = InteropServer.testCA
        else { return }
        let trusting = session { $0.trustRoots = .system(adding: [ca]) }
        let badDate = await get(expired, on: trusting)
        #expect(badDate.error?.kind == .serverCertificateHasBadDate, "\(String(describing: badDate.error))")
        let mismatch = await get(wrongHost, on: trusting)
        #expect(mismatch.error?.kind == .serverCertificateHostnameMismatch, "\(String(describing: mismatch.error))")
        let untrusted = await get(selfSigned, on: trusting)
        #expect(untrusted.error?.kind == .serverCertificateUntrusted, "\(String(describing: untrusted.error))")
        for error in [badDate.error, mismatch.error, untrusted.error] {
            #expect(error?.isSecureConnectionFailure == true)
            #expect(error?.isTransportError == true)
        }
    }

    @Test func verificationCanBeTurnedOffForDevelopment() async throws {
        guard let selfSigned = InteropServer.nginxSelfSigned, let expired = InteropServer.nginxExpired else { return }
        let insecure = session { $0.certificateVerification = .disabledForDevelopmentOnly }
        #expect(await get(selfSigned, on: insecure).error == nil)
        #expect(await get(expired, on: insecure).error == nil)
        let request = insecure.request(selfSigned)
        #expect(await request.cURLDescription().contains("--insecure"))
    }

    @Test func pinsAreCheckedPerHost() async throws {
        guard let server = InteropServer.nginxHTTPS, let ca = InteropServer.testCA,
            let right = InteropServer.serverPin, let wrong = InteropServer.wrongPin
        else { return }
        let okHttpSpelling = "sha256/" + right.dropFirst("sha256//".count)
        let pinned = session {
            $0.trustRoots = .system(adding: [ca])
            $0.pin("127.0.0.1", to: [wrong, okHttpSpelling])
        }
        let matched = await get(server, on: pinned)
        #expect(matched.error == nil, "\(String(describing: matched.error))")
        let mismatched = session {
            $0.trustRoots = .system(adding: [ca])
            $0.pin("127.0.0.1", to: [wrong])
        }
        let failure = await get(server, on: mismatched)
        #expect(failure.error?.kind == .pinMismatch, "\(String(describing: failure.error))")
        #expect(failure.error?.message.contains("127.0.0.1") == true, "\(String(describing: failure.error))")
        // Pins of another host do not apply here; pins still apply with verification off.
        let elsewhere = session {
            $0.trustRoots = .system(adding: [ca])
            $0.pin("api.example.com", to: [wrong])
        }
        let unpinned = await get(server, on: elsewhere)
        #expect(unpinned.error == nil, "\(String(describing: unpinned.error))")
        let insecurePinned = session {
            $0.certificateVerification = .disabledForDevelopmentOnly
            $0.pin("127.0.0.1", to: [wrong])
        }
        let insecure = await get(server, on: insecurePinned)
        #expect(insecure.error?.kind == .pinMismatch, "\(String(describing: insecure.error))")
    }

    @Test func malformedPinsAndUnreadableFilesFailEveryRequestUpFront() async throws {
        var configuration = SessionConfiguration.testing
        configuration.transport = .curl
        configuration.tls.pin("example.com", to: ["md5/abc"])
        #expect(throws: CourierError.self) { try configuration.validate() }
        let session = Session(configuration: configuration, callbackQueue: testCallbackQueue)
        let response = await session.request("https://example.com/").serializingData().response
        #expect(response.error?.kind == .invalidConfiguration, "\(String(describing: response.error))")
        #expect(response.error?.message.contains("md5/abc") == true)

        var missing = SessionConfiguration()
        missing.tls.clientCertificate = .pem(certificate: URL(fileURLWithPath: "/nonexistent/client.pem"))
        #expect { try missing.validate() } throws: { ($0 as? CourierError)?.kind == .invalidConfiguration }
    }

    @Test func theMinimumVersionIsEnforced() async throws {
        guard let tls12 = InteropServer.nginxTLS12, let modern = InteropServer.nginxHTTPS, let ca = InteropServer.testCA else { return }
        let atLeast13 = session {
            $0.trustRoots = .system(adding: [ca])
            $0.minimumVersion = .tls1_3
        }
        let refused = await get(tls12, on: atLeast13)
        #expect(refused.error?.kind == .tlsVersionUnsupported, "\(String(describing: refused.error))")
        let fine = await get(modern, on: atLeast13)
        #expect(fine.error == nil, "\(String(describing: fine.error))")
        #expect(fine.metrics?.tlsVersion == "TLSv1.3")
        let atLeast12 = session { $0.trustRoots = .system(adding: [ca]) }
        let old = await get(tls12, on: atLeast12)
        #expect(old.error == nil, "\(String(describing: old.error))")
        #expect(old.metrics?.tlsVersion == "TLSv1.2")
    }

    @Test func clientCertificatesOpenMutualTLSServers() async throws {
        guard let nginx = InteropServer.nginxMutualTLS, let python = InteropServer.pythonMutualTLS, let ca = InteropServer.testCA,
            let certificate = InteropServer.clientCertificate, let key = InteropServer.clientKey,
            let combined = InteropServer.clientCombined, let p12 = InteropServer.clientP12,
            let password = InteropServer.clientP12Password,
            let rogue = InteropServer.rogueClientCertificate, let rogueKey = InteropServer.rogueClientKey
        else { return }
        let clients: [TLSConfiguration.ClientCertificate] = [
            .pem(certificate: certificate, privateKey: key), .pem(certificate: combined), .pkcs12(p12, password: password),
        ]
        for client in clients {
            let mutual = session {
                $0.trustRoots = .system(adding: [ca])
                $0.clientCertificate = client
            }
            let fromNginx = await get(nginx, on: mutual)
            #expect(fromNginx.error == nil && fromNginx.response?.statusCode == 200, "\(client): \(String(describing: fromNginx.error))")
            let fromPython = await get(python, "", on: mutual)
            #expect(fromPython.response?.statusCode == 200, "\(client): \(String(describing: fromPython.error))")
            #expect(fromPython.data.map { String(decoding: $0, as: UTF8.self) } == "mtls ok")
        }
        // nginx answers a missing certificate with 400; the Python server refuses it in the handshake.
        let anonymous = session { $0.trustRoots = .system(adding: [ca]) }
        #expect(await get(nginx, on: anonymous).response?.statusCode == 400)
        let refused = await get(python, "", on: anonymous)
        #expect(refused.error?.kind == .clientCertificateRejected, "\(String(describing: refused.error))")
        let rogueSession = session {
            $0.trustRoots = .system(adding: [ca])
            $0.clientCertificate = .pem(certificate: rogue, privateKey: rogueKey)
        }
        let rejected = await get(python, "", on: rogueSession)
        #expect(rejected.error?.kind == .clientCertificateRejected, "\(String(describing: rejected.error))")
        let wrongPassword = session {
            $0.trustRoots = .system(adding: [ca])
            $0.clientCertificate = .pkcs12(p12, password: "not the password")
        }
        let unusable = await get(nginx, on: wrongPassword)
        #expect(unusable.error?.kind == .invalidConfiguration, "\(String(describing: unusable.error))")
    }

    @Test func urlSessionRefusesWhatItCannotHonour() async throws {
        var configuration = SessionConfiguration.testing
        configuration.transport = .urlSession(.ephemeral)
        configuration.tls.pin("example.com", to: ["sha256/" + Data(repeating: 1, count: 32).base64EncodedString()])
        #expect { try configuration.validate() } throws: { ($0 as? CourierError)?.message.contains("pinnedPublicKeys") == true }
        let session = Session(configuration: configuration, callbackQueue: testCallbackQueue)
        let response = await session.request("https://example.com/").serializingData().response
        #expect(response.error?.kind == .invalidConfiguration, "\(String(describing: response.error))")

        var version = SessionConfiguration()
        version.transport = .urlSession(.ephemeral)
        version.httpVersion = .http2PriorKnowledge
        #expect(throws: CourierError.self) { try version.validate() }
    }
}

/// URLSession's TLS failures carry the same precise kinds as curl's (issue 23: they used to be
/// `.connectionLost`), from FoundationNetworking's codes and libcurl's text.
@Suite(.enabled(if: TransportUnderTest.available.contains(.urlSession), "needs the URLSession transport"))
struct URLSessionTLSErrorTests {
    @Test func certificateFailuresAreTLSKinds() async throws {
        guard let untrusted = InteropServer.nginxHTTPS, let selfSigned = InteropServer.nginxSelfSigned else { return }
        var configuration = SessionConfiguration.testing
        configuration.transport = .urlSession(.ephemeral)
        configuration.requestTimeout = 30
        let session = Session(configuration: configuration, callbackQueue: testCallbackQueue)
        for url in [untrusted, selfSigned] {
            let response = await session.request(url.appendingPathComponent("connection")).serializingData().response
            #expect(response.error?.isSecureConnectionFailure == true, "\(url): \(String(describing: response.error))")
            #expect(response.error?.kind == .serverCertificateUntrusted, "\(url): \(String(describing: response.error))")
        }
    }
}
