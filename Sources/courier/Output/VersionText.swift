import Courier

/// `courier --version` (`-V`), laid out as `curl -V`: the first line names the tool, the platform
/// and libcurl's own version line (its TLS library and the other libraries it was built with),
/// then the protocols and libcurl's features, and where courier stands apart, its transports.
enum VersionText {
    /// The text, from the libcurl the curl transport loads (`report`), or saying why there is none.
    static func text(report: Result<CurlLibraryReport, CourierError> = CurlLibraryReport.loaded()) -> String {
        switch report {
        case .success(let library):
            return """
                courier \(Courier.version) (\(library.host)) \(library.versionText)
                Protocols: http https ws wss
                Features: \(library.features.joined(separator: " "))
                libcurl: \(library.version) from \(library.file)\(library.isChosen ? " (chosen: COURIER_LIBCURL)" : ""), TLS: \(library.tlsBackend ?? "none"), decodes: \(library.contentCodings.joined(separator: " ")); protocols: \(library.protocols.joined(separator: " "))\(library.openSSLFile.map { "\nOpenSSL: \($0)" } ?? "")
                Transports: curl (the default), urlsession (--transport urlsession)
                """
        case .failure(let error):
            return """
                courier \(Courier.version) (Courier \(Courier.version))
                Protocols: http https ws wss
                libcurl: not available: \(error.message)
                Transports: urlsession (the curl transport needs libcurl)
                """
        }
    }
}
