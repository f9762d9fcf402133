/// What the libcurl of the curl transport says about itself, as `curl -V` prints it: for Courier's
/// own tools (`courier --version`), read from `curl_version_info` in the library the transport loads.
package struct CurlLibraryReport: Sendable, Equatable {
    /// `curl_version()`: `"libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 ..."`, the text after the
    /// platform on the first line of `curl -V`.
    package let versionText: String
    /// `"7.88.1"`.
    package let version: String
    /// The platform it was built for, e.g. `"x86_64-pc-linux-gnu"`.
    package let host: String
    /// The TLS library, e.g. `"OpenSSL/3.0.19"`; nil without TLS.
    package let tlsBackend: String?
    /// The protocols it speaks, as it lists them (`curl -V`'s `Protocols:` line).
    package let protocols: [String]
    /// Its features, sorted as `curl -V` sorts them (case-insensitively).
    package let features: [String]
    /// The content codings libcurl was built to decode (`deflate`, `gzip`, `br`, `zstd`).
    package let contentCodings: [String]
    /// The `Accept-Encoding` the curl transport sends when it adds its own: every coding Courier
    /// decodes on this machine, in libcurl's order (`"deflate, gzip, br, zstd"`); nil for none.
    package let acceptEncoding: String?
    /// The file the dynamic linker loaded, e.g. `"/lib/x86_64-linux-gnu/libcurl.so.4"`.
    package var file = ""
    /// Whether that file was chosen (`COURIER_LIBCURL`, ``Libcurl/load(from:)``) rather than the
    /// system's `libcurl.so.4`.
    package var isChosen = false
    /// The libssl file this libcurl calls, when its TLS library is OpenSSL and that can be told.
    package var openSSLFile: String?

    /// The report of the libcurl this process loads, or why none can be loaded.
    package static func loaded() -> Result<CurlLibraryReport, CourierError> {
        do {
            let library = try CurlLibrary.load()
            var report = CurlLibraryReport(
                versionText: library.versionText, version: library.version, host: library.host,
                tlsBackend: library.sslVersion, protocols: library.protocols,
                features: library.featureNames.sorted { $0.lowercased() < $1.lowercased() },
                contentCodings: library.contentCodings, acceptEncoding: CurlContentCoding.advertised)
            report.file = library.path
            report.isChosen = library.isChosen
            report.openSSLFile = library.openSSLPath
            return .success(report)
        } catch {
            return .failure(error)
        }
    }
}
