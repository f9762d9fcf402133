import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierLocking

/// Resumable downloads against nginx: `Range` + `If-Range` with a strong ETag and with
/// Last-Modified, and a stale validator that must start over.
@Suite(.enabled(if: InteropServer.nginx != nil, "nginx is not running (COURIER_NGINX_URL unset)"))
struct NginxResumeInteropTests {
    enum Validator: String, CaseIterable, Sendable { case etag, lastModified, stale }

    @Test(arguments: TransportUnderTest.available, Validator.allCases)
    func resumesAPlantedPartial(transport: TransportUnderTest, validator: Validator) async throws {
        guard let nginx = InteropServer.nginx else { return }
        try await resume(base: nginx, transport: transport, validator: validator)
    }

    /// The same over HTTPS and HTTP/2 (curl transport: URLSession cannot trust the test CA).
    @Test(arguments: Validator.allCases)
    func resumesAPlantedPartialOverHTTP2(validator: Validator) async throws {
        guard TransportUnderTest.available.contains(.curl), let https = InteropServer.nginxHTTPS,
            let ca = InteropServer.testCA
        else { return }
        try await resume(base: https, transport: .curl, validator: validator, trusting: ca)
    }

    private func resume(base: URL, transport: TransportUnderTest, validator: Validator, trusting ca: URL? = nil) async throws {
        let storeDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-nginx-store-\(UUID().uuidString)")
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-nginx-out-\(UUID().uuidString).bin")
        defer {
            try? FileManager.default.removeItem(at: storeDirectory)
            try? FileManager.default.removeItem(at: output)
        }
        var configuration = SessionConfiguration.testing
        configuration.transport = transport.choice
        if let ca { configuration.tls.trustRoots = .system(adding: [ca]) }
        let monitor = EventRecorderWithHeaders()
        let session = Session(
            configuration: configuration, baseURL: base, eventMonitors: [monitor],
            downloadStore: DownloadStore(directory: storeDirectory), callbackQueue: testCallbackQueue)

        // The real bytes and validators, then a partial as an interrupted run would have left it.
        let whole = await session.request("random-1m.bin").serializingData().response
        let content = try #require(whole.data)
        let etag = try #require(whole.response?.value(forHTTPHeaderField: "ETag"))
        let lastModified = try #require(whole.response?.value(forHTTPHeaderField: "Last-Modified"))
        let url = try #require(whole.request?.url)
        let kept = 400_000
        try FileManager.default.createDirectory(at: storeDirectory, withIntermediateDirectories: true)
        let paths = DownloadStore.Paths(directory: storeDirectory, key: DownloadStore.key(url: url, method: .get))
        try content.prefix(kept).write(to: paths.part)
        let journal = DownloadJournal(
            url: url.absoluteString, method: "GET",
            etag: validator == .etag ? etag : (validator == .stale ? "\"not-the-etag\"" : nil),
            lastModified: validator == .lastModified ? lastModified : nil,
            expectedLength: Int64(content.count), durableLength: Int64(kept),
            bootID: BootIdentity.current, createdAt: Date(), updatedAt: Date())
        try journal.save(to: paths.journal)

        let response = await session.download("random-1m.bin", to: .file(output), resumable: true).serializingDownloadedFileURL().response
        #expect(response.error == nil, "\(response.error.map { "\($0)" } ?? "")")
        #expect(try Data(contentsOf: output) == content)
        let sent = monitor.lastHeaders
        #expect(sent["Range"] == "bytes=\(kept)-")
        #expect(sent["If-Range"] == (validator == .lastModified ? lastModified : (validator == .etag ? etag : "\"not-the-etag\"")))
        // nginx answers a matching If-Range with 206, a stale one with the whole file.
        #expect(monitor.lastStatus == (validator == .stale ? 200 : 206))
        #expect(session.downloadStore.partialDownloads().isEmpty)
        if ca != nil { #expect(response.metrics?.httpVersion == "HTTP/2") }
    }
}

/// Records the headers of the last exchange as sent and the last status, for interop checks.
final class EventRecorderWithHeaders: EventMonitor {
    private let state = Locked((headers: HTTPHeaders(), status: 0))
    var lastHeaders: HTTPHeaders { state.withLock { $0.headers } }
    var lastStatus: Int { state.withLock { $0.status } }

    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        state.withLock { $0.headers = headers }
    }

    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        state.withLock { $0.status = response.statusCode }
    }
}
