import Courier
@testable import courier
import Foundation
import Testing

/// The TLS and HTTP-version options (curl's spelling), parsed and checked as pure functions, and
/// the configuration they turn into.
@Suite struct ConnectionOptionsTests {
    static let pinA = "sha256//" + Data(repeating: 1, count: 32).base64EncodedString()
    static let pinB = "sha256//" + Data(repeating: 2, count: 32).base64EncodedString()

    private func parse(_ arguments: [String], url: String = "https://h/") throws(UsageError) -> ConnectionOptions {
        try FetchOptions.parse(arguments + [url], environment: [:]).connection
    }

    @Test func noOptionsLeaveTheLibraryDefaults() throws {
        let options = try parse([])
        #expect(options == ConnectionOptions())
        #expect(options.tlsConfiguration(host: "h") == TLSConfiguration())
        #expect(options.httpVersion == .automatic)
    }

    @Test func trustRoots() throws {
        let file = try parse(["--cacert", "/ca/a.pem"])
        #expect(file.caCertificate == "/ca/a.pem" && file.caDirectory == nil)
        #expect(file.tlsConfiguration(host: "h").trustRoots == .only([URL(fileURLWithPath: "/ca/a.pem")]))
        let directory = try parse(["--capath", "/ca/hashed"])
        #expect(directory.tlsConfiguration(host: "h").trustRoots == .only([], directory: URL(fileURLWithPath: "/ca/hashed", isDirectory: true)))
        let both = try parse(["--capath=/ca/hashed", "--cacert=/ca/a.pem"])
        #expect(
            both.tlsConfiguration(host: "h").trustRoots
                == .only([URL(fileURLWithPath: "/ca/a.pem")], directory: URL(fileURLWithPath: "/ca/hashed", isDirectory: true)))
    }

    @Test func clientCertificates() throws {
        let separate = try parse(["--cert", "c.pem", "--key", "k.pem", "--pass", "secret"])
        #expect(separate.clientCertificate == .init(type: .pem, certificate: "c.pem", key: "k.pem", password: "secret"))
        #expect(
            separate.tlsConfiguration(host: "h").clientCertificate
                == .pem(certificate: URL(fileURLWithPath: "c.pem"), privateKey: URL(fileURLWithPath: "k.pem"), password: "secret"))
        let combined = try parse(["-E", "both.pem:pw:with:colons"])
        #expect(combined.clientCertificate == .init(type: .pem, certificate: "both.pem", key: nil, password: "pw:with:colons"))
        let p12 = try parse(["--cert-type", "P12", "--cert", "id.p12:courier"])
        #expect(p12.tlsConfiguration(host: "h").clientCertificate == .pkcs12(URL(fileURLWithPath: "id.p12"), password: "courier"))
        let p12Pass = try parse(["--cert-type=p12", "-Eid.p12", "--pass", "courier"])
        #expect(p12Pass.tlsConfiguration(host: "h").clientCertificate == .pkcs12(URL(fileURLWithPath: "id.p12"), password: "courier"))
        let p12NoPassword = try parse(["--cert-type", "P12", "--cert", "id.p12"])
        #expect(p12NoPassword.tlsConfiguration(host: "h").clientCertificate == .pkcs12(URL(fileURLWithPath: "id.p12"), password: ""))
        #expect(try parse(["--cert-type", "pem", "--cert", "c.pem"]).clientCertificate?.type == .pem)
    }

    @Test(
        arguments: [
            ("plain.pem", "plain.pem", nil),
            ("c.pem:secret", "c.pem", "secret"),
            ("c.pem:", "c.pem", ""),
            ("c.pem:a:b", "c.pem", "a:b"),
            (#"dir\:x/c.pem:pw"#, "dir:x/c.pem", "pw"),
            (#"back\\slash.pem"#, #"back\slash.pem"#, nil),
            (#"keep\n.pem"#, #"keep\n.pem"#, nil),
            (#"trailing\"#, #"trailing\"#, nil),
            (#"c.pem:p\:w"#, "c.pem", #"p\:w"#),
        ] as [(String, String, String?)])
    func certificateArgumentSplitsLikeCurl(text: String, path: String, password: String?) {
        #expect(CertificateArgument.parse(text) == CertificateArgument(path: path, password: password))
    }

    @Test func pinsAreForTheURLsHost() throws {
        let options = try parse(["--pinnedpubkey", "\(Self.pinA);\(Self.pinB)"], url: "https://API.example.com:8443/x")
        #expect(options.pins == [Self.pinA, Self.pinB])
        let tls = options.tlsConfiguration(host: "API.example.com")
        #expect(tls.pinnedPublicKeys == ["api.example.com": [Self.pinA, Self.pinB]])
        var configuration = SessionConfiguration()
        configuration.transport = .curl
        configuration.tls = tls
        #expect(throws: Never.self, "the library takes curl's spelling of the pins") { try configuration.validate() }
    }

    @Test func insecureAndTLSVersions() throws {
        for flag in ["-k", "--insecure"] {
            let options = try parse([flag])
            #expect(options.insecure)
            #expect(options.tlsConfiguration(host: "h").certificateVerification == .disabledForDevelopmentOnly)
        }
        #expect(try parse(["-vk"]).insecure)
        #expect(try parse(["--tlsv1.2"]).minimumTLSVersion == .tls1_2)
        #expect(try parse(["--tlsv1.3"]).tlsConfiguration(host: "h").minimumVersion == .tls1_3)
        #expect(try parse(["--tlsv1.2", "--tlsv1.3"]).minimumTLSVersion == .tls1_3, "the last one wins, as in curl")
        #expect(try parse(["--tlsv1.3", "--tlsv1.2"]).minimumTLSVersion == .tls1_2)
    }

    @Test func httpVersions() throws {
        #expect(try parse(["--http1.1"]).httpVersion == .http1_1)
        #expect(try parse(["--http1.1"], url: "http://h/").httpVersion == .http1_1)
        #expect(try parse(["--http2"]).httpVersion == .http2)
        #expect(try parse(["--http2-prior-knowledge"], url: "http://h/").httpVersion == .http2PriorKnowledge)
        #expect(try parse(["--http2", "--http2"]).httpVersion == .http2, "the same flag twice is one choice")
        #expect(try parse(["--http3"]).httpVersion == .http3)
        #expect(try parse(["--http3-only"]).httpVersion == .http3)
    }

    @Test(arguments: [
        (["--cacert", ""], "--cacert needs a file name"),
        (["--capath="], "--capath needs a directory"),
        (["--cacert", "a.pem", "--cacert", "b.pem"], "given more than once"),
        (["--cert", ":pw"], "--cert needs a file name"),
        (["--key", "k.pem"], "--key needs --cert"),
        (["--pass", "pw"], "--pass needs --cert"),
        (["--cert-type", "P12"], "--cert-type needs --cert"),
        (["--cert", "c", "--cert-type", "DER"], "--cert-type must be PEM or P12, not 'DER'"),
        (["--cert", "c", "--cert-type", "ENG"], "--cert-type must be PEM or P12"),
        (["--cert", "c.p12", "--cert-type", "P12", "--key", "k.pem"], "--key cannot be used with --cert-type P12"),
        (["--cert", "c.pem:pw", "--pass", "pw"], "the password is given twice"),
        (["--cert", "c.pem:pw", "--pass", "other"], "two different passwords"),
        (["--cert", "c.pem", "--key", ""], "--key needs a file name"),
        (["--pinnedpubkey", "sha256/AAAA"], "'sha256/AAAA' is not a pin (expected sha256//BASE64"),
        (["--pinnedpubkey", "/etc/server.pub"], "a public-key file is not supported"),
        (["--pinnedpubkey", "sha256//not-base64!"], "the base64 SHA-256 of the public key"),
        (["--pinnedpubkey", "sha256//AAAA"], "the base64 SHA-256 of the public key"),
        (["--pinnedpubkey", ""], "'' is not a pin"),
        (["--pinnedpubkey", "\(ConnectionOptionsTests.pinA);"], "'' is not a pin"),
        (["--http1.1", "--http2"], "--http1.1 and --http2 cannot be used together"),
        (["--http2-prior-knowledge", "--http1.1"], "--http1.1 and --http2-prior-knowledge cannot be used together"),
        (["--http2", "--http2-prior-knowledge"], "--http2 and --http2-prior-knowledge cannot be used together"),
        (["--insecure=yes"], "takes no value"),
        (["--tlsv1.1"], "unknown option '--tlsv1.1'"),
        (["--http3-only", "--http2"], "--http2 and --http3-only cannot be used together"),
        (["--http3.1"], "unknown option '--http3.1'"),
    ])
    func usageErrors(arguments: [String], message: String) {
        do {
            let options = try parse(arguments)
            Issue.record("expected a usage error containing \"\(message)\", got \(options)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func http2OverCleartextIsAUsageError() {
        do {
            _ = try parse(["--http2"], url: "http://h/")
            Issue.record("--http2 with an http:// URL was accepted")
        } catch {
            #expect(error.message.contains("--http2 needs an https:// URL"), "\(error.message)")
            #expect(error.message.contains("--http2-prior-knowledge"), "\(error.message)")
        }
    }

    @Test(arguments: ["--http3", "--http3-only"])
    func http3OverCleartextIsAUsageError(flag: String) {
        do {
            _ = try parse([flag], url: "http://h/")
            Issue.record("\(flag) with an http:// URL was accepted")
        } catch {
            #expect(error.message.contains("\(flag) needs an https:// URL"), "\(error.message)")
        }
    }

    @Test func checkFilesNamesTheOptionAndTheProblem() throws {
        let directory = try TemporaryDirectory("connection-files")
        defer { directory.remove() }
        let file = directory.path("ca.pem").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        let missing = directory.path("missing.pem").path
        let cases: [([String], String?)] = [
            (["--cacert", file, "--capath", directory.url.path, "--cert", file, "--key", file], nil),
            (["--cacert", missing], "--cacert: cannot read \(missing): no such file"),
            (["--cacert", directory.url.path], "--cacert: cannot read \(directory.url.path): it is a directory"),
            (["--capath", missing], "--capath: \(missing): no such directory"),
            (["--capath", file], "--capath: \(file) is not a directory"),
            (["--cert", "\(missing):pw"], "--cert: cannot read \(missing): no such file"),
            (["--cert", file, "--key", missing], "--key: cannot read \(missing): no such file"),
        ]
        for (arguments, expected) in cases {
            let options = try parse(arguments)
            do {
                try options.checkFiles()
                #expect(expected == nil, "\(arguments) passed the check")
            } catch {
                #expect(error.message == expected, "\(arguments)")
            }
        }
    }

    @Test func redirectsStayUnderThePins() {
        #expect(FetchCommand.staysPinned(URL(string: "https://API.example.com/next"), host: "api.example.com"))
        #expect(!FetchCommand.staysPinned(URL(string: "http://api.example.com/next"), host: "api.example.com"))
        #expect(!FetchCommand.staysPinned(URL(string: "https://other.example.com/"), host: "api.example.com"))
        #expect(!FetchCommand.staysPinned(nil, host: "api.example.com"))
    }

    @Test func verboseProtocolLine() {
        var metrics = TransferMetrics(transport: "curl")
        #expect(VerboseMonitor.protocolLine(metrics) == nil, "no response, nothing negotiated")
        metrics.httpVersion = "HTTP/1.1"
        #expect(VerboseMonitor.protocolLine(metrics) == "* HTTP/1.1")
        metrics.httpVersion = "HTTP/2"
        metrics.tlsVersion = "TLSv1.3"
        metrics.tlsCipherSuite = "TLS_AES_256_GCM_SHA384"
        #expect(VerboseMonitor.protocolLine(metrics) == "* HTTP/2, TLSv1.3, TLS_AES_256_GCM_SHA384")
    }

    @Test func helpListsEveryOptionWithCurlsSpelling() {
        let help = Help.fetch
        for name in [
            "--cacert FILE", "--capath DIR", "-E, --cert FILE[:PASSWORD]", "--cert-type PEM|P12", "--key FILE",
            "--pass PASSWORD", "--pinnedpubkey HASHES", "-k, --insecure", "--tlsv1.2", "--tlsv1.3", "--http1.1",
            "--http2 ", "--http2-prior-knowledge",
        ] {
            #expect(help.contains(name), "\(name)")
        }
        #expect(help.contains("replaces the system store, unlike curl on Debian"))
    }
}
