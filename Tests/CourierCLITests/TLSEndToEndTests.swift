import Foundation
import Testing

/// The TLS and HTTP-version options of the built `courier` binary against the real servers of
/// `.ci/start-servers.sh` (nginx over TLS, h2c, TLS 1.2 only, self-signed; a Python mutual-TLS
/// server). Without those servers' environment each test prints `SKIPPED …` and returns.
@Suite struct TLSEndToEndTests {
    /// `courier ARGUMENTS... URL`, with a timeout that fits a loaded machine.
    private func courier(_ arguments: [String], _ url: URL, environment: [String: String] = [:]) async throws -> CLIResult {
        try await runCLI(arguments + [url.absoluteString], environment: environment, timeout: .seconds(120))
    }

    @Test func cacertAndCapathReachTheHTTPSServerThatIsUntrustedWithoutThem() async throws {
        guard let server = TLSServers.https, let ca = TLSServers.testCA, let directory = TLSServers.testCADirectory,
            let other = TLSServers.otherCA
        else { return }
        let url = server.appendingPathComponent("small.json")
        let untrusted = try await courier([], url)
        #expect(untrusted.status == 60, "\(untrusted)")
        #expect(untrusted.stderrText.hasPrefix("courier: (60) The certificate of "), "\(untrusted)")
        #expect(untrusted.stderrText.contains("is not trusted"), "\(untrusted)")
        #expect(!untrusted.stderrText.contains("libcurl"), "the transport's own text only with -v: \(untrusted)")
        let trusted = try await courier(["--cacert", ca], url)
        #expect(trusted.status == 0, "\(trusted)")
        #expect(trusted.stdoutText.contains(#""name":"courier""#), "\(trusted)")
        let hashed = try await courier(["--capath", directory], url)
        #expect(hashed.status == 0, "\(hashed)")
        let both = try await courier(["--cacert", other, "--capath", directory], url)
        #expect(both.status == 0, "--capath adds to --cacert: \(both)")
        let wrongCA = try await courier(["--cacert", other], url)
        #expect(wrongCA.status == 60, "\(wrongCA)")
        #expect(wrongCA.stderrText.contains("is not trusted"), "\(wrongCA)")
        // SSL_CERT_FILE replaces the system store, and --cacert replaces that in turn.
        let fromEnvironment = try await courier([], url, environment: ["SSL_CERT_FILE": ca])
        #expect(fromEnvironment.status == 0, "\(fromEnvironment)")
        let replaced = try await courier(["--cacert", other], url, environment: ["SSL_CERT_FILE": ca])
        #expect(replaced.status == 60, "--cacert does not add to the system store: \(replaced)")
    }

    @Test func insecureReachesTheSelfSignedServerAndWarns() async throws {
        guard let server = TLSServers.selfSigned else { return }
        let url = server.appendingPathComponent("small.json")
        let refused = try await courier([], url)
        #expect(refused.status == 60, "\(refused)")
        #expect(refused.stderrText.contains("is not trusted"), "\(refused)")
        for flag in ["-k", "--insecure"] {
            let insecure = try await courier([flag], url)
            #expect(insecure.status == 0, "\(insecure)")
            #expect(insecure.stdoutText.contains(#""name":"courier""#), "\(insecure)")
            let warnings = insecure.stderrText.split(separator: "\n").filter { $0.contains("warning: --insecure") }
            #expect(warnings == ["courier: warning: --insecure: the server's certificate is not checked"], "\(insecure)")
        }
    }

    @Test func pinnedPublicKeyMustMatch() async throws {
        guard let server = TLSServers.https, let ca = TLSServers.testCA, let pin = TLSServers.serverPin,
            let wrong = TLSServers.wrongPin, let selfSigned = TLSServers.selfSigned
        else { return }
        let url = server.appendingPathComponent("small.json")
        let matching = try await courier(["--cacert", ca, "--pinnedpubkey", pin], url)
        #expect(matching.status == 0, "\(matching)")
        let oneOfTwo = try await courier(["--cacert", ca, "--pinnedpubkey", "\(wrong);\(pin)"], url)
        #expect(oneOfTwo.status == 0, "\(oneOfTwo)")
        let mismatch = try await courier(["--cacert", ca, "--pinnedpubkey", wrong], url)
        #expect(mismatch.status == 90, "\(mismatch)")
        #expect(mismatch.stderrText.contains("matches none of its pins"), "\(mismatch)")
        #expect(mismatch.stdout.isEmpty)
        // -k turns certificate checks off, not pins.
        let insecure = try await courier(["-k", "--pinnedpubkey", wrong], selfSigned.appendingPathComponent("small.json"))
        #expect(insecure.status == 90, "\(insecure)")
        #expect(insecure.stderrText.contains("matches none of its pins"), "\(insecure)")
    }

    @Test func http2PriorKnowledgeReachesTheH2CServer() async throws {
        guard let server = TLSServers.h2c else { return }
        let url = server.appendingPathComponent("small.json")
        let h2c = try await courier(["-v", "--http2-prior-knowledge"], url)
        #expect(h2c.status == 0, "\(h2c)")
        #expect(h2c.stdoutText.contains(#""name":"courier""#), "\(h2c)")
        #expect(h2c.stderrText.split(separator: "\n").contains("* HTTP/2"), "cleartext: no TLS on the line: \(h2c)")
        let http1 = try await courier([], url)
        #expect(http1.status != 0, "an h2c-only server gives an HTTP/1.1 request no answer: \(http1)")
    }

    @Test func verboseShowsTheProtocolTLSVersionAndCipher() async throws {
        guard let server = TLSServers.https, let http1Only = TLSServers.httpsHTTP1, let ca = TLSServers.testCA else { return }
        let url = server.appendingPathComponent("small.json")
        let automatic = try await courier(["-v", "--cacert", ca], url)
        #expect(automatic.status == 0, "\(automatic)")
        let line = automatic.stderrText.split(separator: "\n").first { $0.hasPrefix("* HTTP/") }.map(String.init)
        #expect(line?.hasPrefix("* HTTP/2, TLSv1.3, TLS_") == true, "\(automatic)")
        let forced = try await courier(["-v", "--cacert", ca, "--http1.1"], url)
        #expect(forced.status == 0, "\(forced)")
        #expect(forced.stderrText.contains("* HTTP/1.1, TLSv1.3, TLS_"), "\(forced)")
        let http2 = try await courier(["-v", "--cacert", ca, "--http2"], url)
        #expect(http2.status == 0 && http2.stderrText.contains("* HTTP/2, TLSv1.3"), "\(http2)")
        let refused = try await courier(["--cacert", ca, "--http2"], http1Only.appendingPathComponent("small.json"))
        #expect(refused.status == 16, "\(refused)")
        #expect(refused.stderrText.hasPrefix("courier: (16) HTTP version unavailable: "), "\(refused)")
    }

    @Test func minimumTLSVersion() async throws {
        guard let tls12 = TLSServers.tls12, let ca = TLSServers.testCA else { return }
        let url = tls12.appendingPathComponent("small.json")
        let allowed = try await courier(["-v", "--cacert", ca, "--tlsv1.2"], url)
        #expect(allowed.status == 0, "\(allowed)")
        #expect(allowed.stderrText.contains(", TLSv1.2, "), "\(allowed)")
        let refused = try await courier(["--cacert", ca, "--tlsv1.3"], url)
        #expect(refused.status == 35, "\(refused)")
        #expect(refused.stderrText.contains("share no TLS version"), "\(refused)")
        let lastWins = try await courier(["--cacert", ca, "--tlsv1.3", "--tlsv1.2"], url)
        #expect(lastWins.status == 0, "the last of --tlsv1.3 and --tlsv1.2 counts, as in curl: \(lastWins)")
    }

    @Test func clientCertificateOpensTheMutualTLSServer() async throws {
        guard let server = TLSServers.mutualTLS, let ca = TLSServers.testCA, let certificate = TLSServers.clientCertificate,
            let key = TLSServers.clientKey, let combined = TLSServers.clientCombined, let p12 = TLSServers.clientP12,
            let password = TLSServers.clientP12Password
        else { return }
        let accepted: [[String]] = [
            ["--cert", certificate, "--key", key],
            ["--cert", "\(certificate):unused-password", "--key", key],
            ["-E", combined],
            ["--cert-type", "P12", "--cert", "\(p12):\(password)"],
            ["--cert-type", "p12", "--cert", p12, "--pass", password],
        ]
        for arguments in accepted {
            let result = try await courier(["--cacert", ca] + arguments, server)
            #expect(result.status == 0, "\(arguments): \(result)")
            #expect(result.stdoutText == "mtls ok", "\(arguments): \(result)")
        }
        let anonymous = try await courier(["--cacert", ca], server)
        #expect(anonymous.status == 35, "\(anonymous)")
        #expect(anonymous.stderrText.contains("refused the client certificate"), "\(anonymous)")
        // A P12 file that the password does not open is a bad option, as the library reports it.
        let wrongPassword = try await courier(["--cacert", ca, "--cert-type", "P12", "--cert", "\(p12):not-the-password"], server)
        #expect(wrongPassword.status == 2, "\(wrongPassword)")
        #expect(wrongPassword.stderrText.contains("courier: Invalid configuration: "), "\(wrongPassword)")
    }
}
