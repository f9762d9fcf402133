@_spi(Transport) @testable import Courier
import CCurl
import Foundation
import Testing

/// Every workaround for an older libcurl applies exactly to the versions that need it, and the
/// libcurl in use describes itself (which file, which OpenSSL).
@Suite("libcurl versions and the workarounds they need")
struct CurlLibraryVersionTests {
    private func library(_ version: UInt32, features: CurlLibrary.Features = [.ssl, .http2]) -> CurlLibrary {
        CurlLibrary(
            version: "\(version >> 16).\((version >> 8) & 0xFF).\(version & 0xFF)", versionNumber: version,
            features: features, sslVersion: "OpenSSL/3.0.19", defaultCAInfo: nil)
    }

    /// (version, refuses CURLOPT_BUFFERSIZE on reused handles, paused HTTP/2 streams independent,
    /// cleartext HTTP/2 reused, caches CA files, CURLOPT_HTTP_VERSION for HTTP/3 only)
    static let table: [(UInt32, Bool, Bool, Bool, Bool, Int32)] = [
        (0x074400, false, false, false, false, CCURL_HTTP_VERSION_3),  // 7.68.0, the oldest accepted
        (0x074800, false, false, false, false, CCURL_HTTP_VERSION_3),  // 7.72.0
        (0x074900, true, false, false, false, CCURL_HTTP_VERSION_3),  // 7.73.0: refuses BUFFERSIZE while a buffer exists
        (0x074A00, true, false, false, false, CCURL_HTTP_VERSION_3),  // 7.74.0, Debian 11
        (0x075100, true, false, false, false, CCURL_HTTP_VERSION_3),  // 7.81.0, Ubuntu 22.04
        (0x075700, true, false, false, true, CCURL_HTTP_VERSION_3),  // 7.87.0: CA cache
        (0x075801, true, false, false, true, CCURL_HTTP_VERSION_3ONLY),  // 7.88.1, Debian 12
        (0x080000, true, false, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.0.0: cleartext HTTP/2 reuse fixed
        (0x080100, true, true, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.1.0: paused streams independent
        (0x080500, true, true, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.5.0, Ubuntu 24.04
        (0x080602, true, true, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.6.2
        (0x080700, false, true, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.7.0: the buffer moved to the multi handle
        (0x081700, false, true, true, true, CCURL_HTTP_VERSION_3ONLY),  // 8.23.0, the wheel's
    ]

    @Test("each workaround is gated on the versions that need it", arguments: table)
    func gates(version: UInt32, refusesBufferSize: Bool, independentStreams: Bool, cleartextReuse: Bool, caCache: Bool, http3: Int32) {
        let library = library(version)
        #expect(library.refusesBufferSizeOnReusedHandles == refusesBufferSize)
        #expect(library.pausesHTTP2StreamsIndependently == independentStreams)
        #expect(library.reusesCleartextHTTP2 == cleartextReuse)
        #expect(library.cachesCAFiles == caCache)
        #expect(library.http3OnlyVersion == Int(http3))
    }

    @Test("the process-wide gates are those of the libcurl in use")
    func processWideGates() throws {
        let loaded = try CurlLibrary.load()
        #expect(CurlLibrary.refusesBufferSizeOnReusedHandles == loaded.refusesBufferSizeOnReusedHandles)
        #expect(CurlLibrary.pausesHTTP2StreamsIndependently == loaded.pausesHTTP2StreamsIndependently)
        #expect(CurlLibrary.reusesCleartextHTTP2 == loaded.reusesCleartextHTTP2)
        #expect(CurlLibrary.inUse?.versionNumber == loaded.versionNumber)
    }

    @Test("the libcurl in use says which file it is, whether it was chosen, and what it speaks")
    func describesItself() throws {
        let libcurl = try Libcurl.current()
        let loaded = try CurlLibrary.load()
        #expect(libcurl.version == loaded.version)
        #expect(FileManager.default.fileExists(atPath: libcurl.file), "\(libcurl.file)")
        #expect(libcurl.file.contains("curl"))
        let chosen = ProcessInfo.processInfo.environment["COURIER_LIBCURL"].map { !$0.isEmpty } ?? false
        #expect(libcurl.isChosen == chosen)
        if let path = ProcessInfo.processInfo.environment["COURIER_LIBCURL"], !path.isEmpty {
            #expect(URL(fileURLWithPath: libcurl.file).resolvingSymlinksInPath() == URL(fileURLWithPath: path).resolvingSymlinksInPath())
        }
        #expect(libcurl.supportsHTTP2 == loaded.features.contains(.http2))
        #expect(libcurl.supportsHTTP3 == loaded.features.contains(.http3))
        #expect(libcurl.description.hasPrefix("libcurl \(loaded.version)"))
        #expect(libcurl.description.hasSuffix("from \(libcurl.file)"))
    }

    @Test("naming the loaded libcurl again returns it; naming another one, or none that exists, fails clearly")
    func onlyOneLibcurlPerProcess() throws {
        let loaded = try Libcurl.current()
        #expect(try Libcurl.load(from: URL(fileURLWithPath: loaded.file)) == loaded)
        let missing = URL(fileURLWithPath: "/nonexistent/courier/libcurl.so.4")
        #expect(throws: CourierError.self) { try Libcurl.load(from: missing) }
        do {
            try Libcurl.load(from: missing)
        } catch {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains(loaded.file), "\(error.message)")
            #expect(error.message.contains("before the first curl transport starts"), "\(error.message)")
        }
        // The transport keeps working on the libcurl it has.
        #expect(try Libcurl.current() == loaded)
    }

    /// The files a process has mapped, from `/proc/self/maps`.
    private static func mappedFiles() -> Set<String> {
        // Read to the end: /proc files report no size, and a sized read stops short.
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/maps"), let data = try? handle.readToEnd() else { return [] }
        try? handle.close()
        let maps = String(decoding: data, as: UTF8.self)
        return Set(
            maps.split(separator: "\n").compactMap { line in
                line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first.map(String.init)
            })
    }

    @Test(
        "the trust store and TLS details use the OpenSSL the loaded libcurl calls: the one beside a libcurl that brings its own",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps")))
    func openSSLIsTheLibcurlsOwn() throws {
        let loaded = try CurlLibrary.load()
        guard loaded.sslVersion?.hasPrefix("OpenSSL/") == true else { return }
        let libssl = try #require(loaded.openSSLPath, "the OpenSSL libcurl calls was not found")
        let resolved = URL(fileURLWithPath: libssl).resolvingSymlinksInPath().path
        let mapped = Self.mappedFiles()
        #expect(mapped.contains(resolved), "\(resolved) is not mapped: \(mapped.filter { $0.contains("ssl") })")
        // A libssl in the libcurl's own directory is the one it was built with (the wheel's
        // libssl-<hash>.so.3, the distribution's libssl.so.3), whatever else the process loaded.
        let directory = URL(fileURLWithPath: loaded.path).resolvingSymlinksInPath().deletingLastPathComponent().path
        let beside = mapped.filter { $0.hasPrefix(directory + "/") && URL(fileURLWithPath: $0).lastPathComponent.hasPrefix("libssl") }
        if !beside.isEmpty { #expect(beside.contains(resolved), "libcurl calls \(resolved), beside it: \(beside)") }
    }
}
