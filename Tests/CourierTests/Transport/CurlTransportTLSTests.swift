@_spi(Transport) @testable import Courier
import CourierTestSupport
import Foundation
import Testing

/// HTTPS through CurlTransport against a local nginx whose certificate comes from a throwaway CA.
/// Runs only where nginx and the openssl tool are installed.
@Suite("Curl transport HTTPS", .enabled(if: CurlTLSFixture.toolsAvailable, "needs nginx and openssl"))
struct CurlTransportTLSTests {
    @Test("trusting the extra CA succeeds; without it the handshake fails with .serverCertificateUntrusted")
    func extraCertificateAuthority() async throws {
        let fixture = try await CurlTLSFixture.start()
        defer { fixture.stop() }

        let trusting = try CurlTestSupport.transport(trusting: [fixture.caCertificate])
        let good = try await CurlTestSupport.run(TransportRequest(url: fixture.url), on: trusting)
        CurlTestSupport.expectContract(good)
        #expect(good.error == nil, "\(String(describing: good.error))")
        #expect(good.head?.statusCode == 200)
        #expect(String(decoding: good.body, as: UTF8.self) == "secure\n")
        #expect(good.metrics?.tlsHandshake != nil)
        if let bundle = trusting.trustStore?.path {
            // libcurl reads the CA files itself: the private bundle lives as long as the transport.
            #expect(!trusting.sharesTrustStore)
            #expect(FileManager.default.fileExists(atPath: bundle))
            trusting.shutdown()
            #expect(!FileManager.default.fileExists(atPath: bundle))
        } else {
            // One store parsed in memory for every connection: no file was written.
            #expect(trusting.sharesTrustStore)
            trusting.shutdown()
        }

        let plain = try CurlTestSupport.transport()
        defer { plain.shutdown() }
        let bad = try await CurlTestSupport.run(TransportRequest(url: fixture.url), on: plain)
        CurlTestSupport.expectContract(bad)
        #expect(bad.error?.kind == .serverCertificateUntrusted, "\(String(describing: bad.error))")
        #expect(bad.error?.isSecureConnectionFailure == true)
        #expect(bad.error?.message.contains("127.0.0.1") == true)
        #expect(bad.error?.url == fixture.url)
        #expect(bad.head == nil)
    }

    @Test("HTTP/2: heads parse, suspend holds a stream without losing bytes, decoding can be switched off")
    func http2() async throws {
        let fixture = try await CurlTLSFixture.start()
        defer { fixture.stop() }
        // The idle timeout below runs on a manual clock: only the time the test moves on counts.
        let clock = ManualTransportClock()
        let transport = try CurlTestSupport.transport(trusting: [fixture.caCertificate], clock: .manual(clock))
        defer { transport.shutdown() }

        // Connect (TLS handshake, ALPN) first, so the short idle timeout below covers only the stream.
        let first = try await CurlTestSupport.run(TransportRequest(url: fixture.url), on: transport)
        #expect(first.head?.httpVersion == "HTTP/2")

        let window = IdleWindow()
        let (sink, transfer, suspendedAt) = CurlTestSupport.startSuspending(
            TransportRequest(url: fixture.url.appendingPathComponent("big.bin"), idleTimeout: .milliseconds(200)),
            on: transport, after: 200_000)
        try await sink.wait { $0.body.count >= 200_000 || $0.isCompleted }
        let atSuspend = try #require(suspendedAt.withLock { $0 })
        try await Task.sleep(for: .milliseconds(300))  // observation window; nginx sends 6 MB/s
        await clock.advance(by: .seconds(1))  // time suspended is not silence
        #expect(sink.progress.received == atSuspend)
        #expect(!sink.progress.completed)
        transfer.resume()
        let big = try await sink.completion()
        CurlTestSupport.expectContract(big)
        #expect(big.error == nil, "\(String(describing: big.error))")
        #expect(big.head?.httpVersion == "HTTP/2")
        #expect(big.metrics?.httpVersion == "HTTP/2")
        #expect(big.body == CurlTLSFixture.bigBody)

        let text = fixture.url.appendingPathComponent("text.txt")
        let decoded = try await CurlTestSupport.run(TransportRequest(url: text), on: transport)
        #expect(decoded.head?.headers["Content-Encoding"] == "gzip")
        #expect(decoded.body == CurlTLSFixture.text)
        if window.provesReuse("http2") { #expect(decoded.metrics?.connectionReused == true) }
        let raw = try await CurlTestSupport.run(
            TransportRequest(url: text, headers: ["Accept-Encoding": "gzip"], automaticDecompression: false), on: transport)
        #expect(raw.head?.headers["Content-Encoding"] == "gzip")
        #expect(raw.body.prefix(2) == Data([0x1F, 0x8B]))
    }
}

/// A CA, a server certificate for 127.0.0.1 signed by it, and nginx serving HTTPS with it.
struct CurlTLSFixture {
    static let nginx = "/usr/sbin/nginx"
    static let openssl = "/usr/bin/openssl"
    static var toolsAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: nginx) && FileManager.default.isExecutableFile(atPath: openssl)
    }

    /// Served at `/big.bin`, 6 MB/s.
    static let bigBody = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 11) })
    /// Served gzip-encoded at `/text.txt`.
    static let text = Data(String(repeating: "Courier speaks HTTP/2 through libcurl. ", count: 5_000).utf8)

    let directory: URL
    let process: ChildProcess
    let url: URL
    var caCertificate: URL { directory.appendingPathComponent("ca.pem") }

    static func start() async throws -> CurlTLSFixture {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try run(
            openssl, ["req", "-x509"] + ec + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=Courier Test CA"], in: directory)
        try run(openssl, ["req"] + ec + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"], in: directory)
        try Data("subjectAltName=IP:127.0.0.1,DNS:localhost\n".utf8).write(to: directory.appendingPathComponent("ext.cnf"))
        try run(
            openssl,
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf",
            ], in: directory)
        try bigBody.write(to: directory.appendingPathComponent("big.bin"))
        try text.write(to: directory.appendingPathComponent("text.txt"))
        let root = directory.path
        // The port is found free and then handed to nginx, so another process can take it in
        // between; nginx then exits and the next attempt uses a fresh port.
        var lastPort = 0
        for _ in 0..<3 {
            let port = try freePort()
            lastPort = port
            let process = try launchNginx(port: port, root: root, directory: directory)
            let fixture = CurlTLSFixture(directory: directory, process: process, url: URL(string: "https://127.0.0.1:\(port)/")!)
            // nginx is an external process: wait (bounded, generous for a loaded machine) until it accepts connections.
            let deadline = ContinuousClock.now + .seconds(60)
            while process.isRunning, ContinuousClock.now < deadline {
                if canConnect(port: port) { return fixture }
                try await Task.sleep(for: .milliseconds(20))
            }
            if process.isRunning { process.send(SIGKILL); _ = process.waitUntilExit() }
        }
        try? FileManager.default.removeItem(at: directory)
        throw CurlTestTimeout(description: "nginx did not start listening (last port \(lastPort))")
    }

    private static func launchNginx(port: Int, root: String, directory: URL) throws -> ChildProcess {
        let config = """
            daemon off;
            master_process off;
            worker_processes 1;
            pid \(root)/nginx.pid;
            error_log \(root)/error.log warn;
            events { worker_connections 64; }
            http {
                access_log off;
                client_body_temp_path \(root)/body; proxy_temp_path \(root)/proxy; fastcgi_temp_path \(root)/fastcgi;
                uwsgi_temp_path \(root)/uwsgi; scgi_temp_path \(root)/scgi;
                types { application/octet-stream bin; text/plain txt; }
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(root)/server.pem;
                    ssl_certificate_key \(root)/server.key;
                    root \(root);
                    location = / { return 200 "secure\\n"; }
                    location = /big.bin { limit_rate 6m; }
                    location = /text.txt { gzip on; gzip_types text/plain; gzip_min_length 1; }
                }
            }
            """
        try Data(config.utf8).write(to: directory.appendingPathComponent("nginx.conf"))
        return try ChildProcess(executable: nginx, arguments: ["-p", root, "-c", "\(root)/nginx.conf", "-e", "\(root)/error.log"])
    }

    /// A port on 127.0.0.1 that was free a moment ago (bound to port 0, then released).
    private static func freePort() throws -> Int {
        try ClosedPort().port
    }

    func stop() {
        if process.isRunning {
            process.send(SIGKILL)
            _ = process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    private static func run(_ tool: String, _ arguments: [String], in directory: URL) throws {
        let exit = try ChildProcess(executable: tool, arguments: arguments, currentDirectory: directory.path).waitUntilExit()
        guard exit == ChildProcess.Exit(status: 0, signalled: false) else {
            throw CurlTestTimeout(description: "\(tool) \(arguments.joined(separator: " ")) ended with \(exit)")
        }
    }

    private static func canConnect(port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
