import CCurl

/// The libcurl Courier loaded at run time: its version, what it was built with, and where its
/// default CA bundle lives.
struct CurlLibrary: Sendable {
    /// Optional libcurl features Courier cares about.
    struct Features: OptionSet, Sendable, Hashable {
        let rawValue: Int32
        /// Built with a TLS library.
        static let ssl = Features(rawValue: CCURL_VERSION_SSL)
        /// Decodes gzip and deflate.
        static let libz = Features(rawValue: CCURL_VERSION_LIBZ)
        /// Speaks HTTP/2.
        static let http2 = Features(rawValue: CCURL_VERSION_HTTP2)
        /// Decodes brotli.
        static let brotli = Features(rawValue: CCURL_VERSION_BROTLI)
        /// Decodes zstd.
        static let zstd = Features(rawValue: CCURL_VERSION_ZSTD)
        /// Follows `Alt-Svc` headers itself (CURLOPT_ALTSVC_CTRL).
        static let altSvc = Features(rawValue: CCURL_VERSION_ALTSVC)
        /// Speaks HTTP/3 over QUIC.
        static let http3 = Features(rawValue: CCURL_VERSION_HTTP3)
    }

    /// The version string, e.g. `"7.88.1"`.
    let version: String
    /// The version as `0xXXYYZZ`.
    let versionNumber: UInt32
    /// What this build supports.
    let features: Features
    /// The TLS library, e.g. `"OpenSSL/3.0.19"`; `nil` without TLS.
    let sslVersion: String?
    /// The CA bundle libcurl uses by default (libcurl 7.70.0+), when it says.
    let defaultCAInfo: String?
    /// The file the dynamic linker loaded, e.g. `"/lib/x86_64-linux-gnu/libcurl.so.4"`.
    var path = ""
    /// Whether the file was chosen (`COURIER_LIBCURL`, ``Libcurl/load(from:)``) rather than the
    /// system's `libcurl.so.4`.
    var isChosen = false

    /// The libssl file this libcurl calls, as read from its relocations; `nil` when its TLS backend is
    /// not OpenSSL or that cannot be told (then no trust store is shared, see ``CurlSharedTrust``).
    var openSSLPath: String? { ccurl_openssl_path().map { String(cString: $0) } }
    /// `curl_version()`: `"libcurl/7.88.1 OpenSSL/3.0.19 zlib/1.2.13 ..."`.
    var versionText = ""
    /// The platform it was built for, e.g. `"x86_64-pc-linux-gnu"`.
    var host = ""
    /// The protocols it speaks, as it lists them.
    var protocols: [String] = []
    /// Its feature names (libcurl 7.87.0+ names them; older ones are named from their bits).
    var featureNames: [String] = []

    /// Whether libcurl keeps a parsed CA file for later connections (CURLOPT_CA_CACHE_TIMEOUT,
    /// 7.87.0): then a CA file costs one parse per event loop rather than one per connection.
    var cachesCAFiles: Bool { versionNumber >= 0x075700 }

    /// Whether a paused HTTP/2 stream leaves the other streams of its connection running. Before
    /// 8.1.0, a paused stream whose buffer fills pauses the whole connection's processing and keeps
    /// its share of the connection window (curl issue 10988), so every stream on it waits.
    var pausesHTTP2StreamsIndependently: Bool { versionNumber >= 0x080100 }

    /// ``pausesHTTP2StreamsIndependently`` of the libcurl in use (`true` when none is loaded).
    static let pausesHTTP2StreamsIndependently: Bool = (try? load())?.pausesHTTP2StreamsIndependently ?? true

    /// Whether a cleartext HTTP/2 (prior knowledge) connection carries more than one request
    /// correctly: libcurl before 8.0.0 breaks the second one's framing (curl issue 10634).
    var reusesCleartextHTTP2: Bool { versionNumber >= 0x080000 }

    /// ``reusesCleartextHTTP2`` of the libcurl in use (`true` when none is loaded).
    static let reusesCleartextHTTP2: Bool = (try? load())?.reusesCleartextHTTP2 ?? true

    /// Whether a request for HTTP/1.1 never goes out on an HTTP/2 connection to the same host:
    /// before 7.77.0 libcurl reused one for it (curl issue 6862).
    var keepsHTTP1_1OffHTTP2: Bool { versionNumber >= 0x074D00 }

    /// ``keepsHTTP1_1OffHTTP2`` of the libcurl in use (`true` when none is loaded).
    static let keepsHTTP1_1OffHTTP2: Bool = (try? load())?.keepsHTTP1_1OffHTTP2 ?? true

    /// Whether the multi handle's socket callback can refuse a socket (return -1) and so end the
    /// transfers at once: before 7.81.0 libcurl ignored what it returned (curl issue 8083).
    var honoursSocketCallbackRefusal: Bool { versionNumber >= 0x075100 }

    /// Whether CURLOPT_BUFFERSIZE is refused (CURLE_BAD_FUNCTION_ARGUMENT) on a handle that still
    /// holds its receive buffer, as a reused handle whose last transfer was cut short does: from
    /// 7.73.0 until 8.7.0, which moved the buffer to the multi handle (before 7.73.0 libcurl
    /// reallocated it).
    var refusesBufferSizeOnReusedHandles: Bool { versionNumber >= 0x074900 && versionNumber < 0x080700 }

    /// ``refusesBufferSizeOnReusedHandles`` of the libcurl in use (`false` when none is loaded).
    static let refusesBufferSizeOnReusedHandles: Bool = (try? load())?.refusesBufferSizeOnReusedHandles ?? false

    /// Whether this libcurl speaks HTTP/3 over QUIC.
    var speaksHTTP3: Bool { features.contains(.http3) }

    /// CURLOPT_HTTP_VERSION for HTTP/3 without a fallback to TCP: CURL_HTTP_VERSION_3ONLY from
    /// 7.88.0; before, CURL_HTTP_VERSION_3, which did not fall back then.
    var http3OnlyVersion: Int { versionNumber >= 0x075800 ? Int(CCURL_HTTP_VERSION_3ONLY) : Int(CCURL_HTTP_VERSION_3) }

    /// The libcurl in use, for choices made per transfer (`nil` when none is loaded; a transfer
    /// only runs once one is).
    static let inUse: CurlLibrary? = try? load()

    /// The content codings this libcurl decodes, in the order it advertises them.
    var contentCodings: [String] {
        var codings: [String] = []
        if features.contains(.libz) { codings += ["deflate", "gzip"] }
        if features.contains(.brotli) { codings.append("br") }
        if features.contains(.zstd) { codings.append("zstd") }
        return codings
    }

    /// `"libcurl/7.88.1 (OpenSSL/3.0.19, deflate, gzip, br, zstd)"`.
    var summary: String {
        let details = ([sslVersion].compactMap { $0 } + contentCodings).joined(separator: ", ")
        return "libcurl/\(version)" + (details.isEmpty ? "" : " (\(details))")
    }

    /// Loads libcurl once per process (the file `COURIER_LIBCURL` names, else the system's
    /// `libcurl.so.4`) and describes it. Throws `.transportFailed` when the system's libcurl is
    /// missing, too old (before 7.68.0) or unusable, and `.invalidConfiguration` when the file
    /// `COURIER_LIBCURL` names is.
    static func load() throws(CourierError) -> CurlLibrary {
        var reason = [CChar](repeating: 0, count: 1024)
        let status = ccurl_load(&reason, reason.count)
        guard status == CCURL_LOAD_OK else { throw failure(status, reason: text(reason)) }
        return described()
    }

    /// Loads the libcurl at `path` unless one is loaded, and describes it. Throws
    /// `.invalidConfiguration` when that file cannot be loaded, or when another libcurl is loaded
    /// already (a process loads one).
    static func load(file path: String) throws(CourierError) -> CurlLibrary {
        var reason = [CChar](repeating: 0, count: 1024)
        let status = ccurl_load_file(path, &reason, reason.count)
        guard status == CCURL_LOAD_OK else { throw failure(status, reason: text(reason)) }
        return described()
    }

    private static func failure(_ status: Int32, reason: String) -> CourierError {
        switch status {
        case CCURL_LOAD_CHOSEN_UNUSABLE:
            CourierError(.invalidConfiguration, "The chosen libcurl cannot be used: \(reason)")
        case CCURL_LOAD_OTHER_LOADED:
            CourierError(
                .invalidConfiguration,
                "\(reason): choose the libcurl (COURIER_LIBCURL or Libcurl.load(from:)) before the first curl transport starts.")
        default:
            CourierError(.transportFailed, "libcurl is not available: \(reason)")
        }
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The loaded library, described.
    private static func described() -> CurlLibrary {
        let info = ccurl_library()
        var library = CurlLibrary(
            version: info.version.map { String(cString: $0) } ?? "unknown",
            versionNumber: info.version_num,
            features: Features(rawValue: info.features),
            sslVersion: info.ssl_version.map { String(cString: $0) },
            defaultCAInfo: info.cainfo.map { String(cString: $0) })
        library.path = info.path.map { String(cString: $0) } ?? ""
        library.isChosen = info.chosen != 0
        library.versionText = info.version_text.map { String(cString: $0) } ?? "libcurl/\(library.version)"
        library.host = info.host.map { String(cString: $0) } ?? ""
        library.protocols = strings(info.protocols)
        library.featureNames = info.feature_names == nil ? featureNames(bits: info.features) : strings(info.feature_names)
        return library
    }

    /// The strings of a NULL-terminated C array that libcurl owns.
    private static func strings(_ array: UnsafePointer<UnsafePointer<CChar>?>?) -> [String] {
        guard let array else { return [] }
        var result: [String] = []
        var index = 0
        while let text = array[index] {
            result.append(String(cString: text))
            index += 1
        }
        return result
    }

    /// The names libcurl 7.87.0 and later give the feature bits, for a libcurl that does not name them.
    static func featureNames(bits: Int32) -> [String] {
        let names: [(Int32, String)] = [
            (0, "IPv6"), (2, "SSL"), (3, "libz"), (4, "NTLM"), (6, "Debug"), (7, "AsynchDNS"), (8, "SPNEGO"),
            (9, "Largefile"), (10, "IDN"), (11, "SSPI"), (12, "CharConv"), (13, "TrackMemory"), (14, "TLS-SRP"),
            (15, "NTLM_WB"), (16, "HTTP2"), (17, "GSS-API"), (18, "Kerberos"), (19, "UnixSockets"), (20, "PSL"),
            (21, "HTTPS-proxy"), (22, "MultiSSL"), (23, "brotli"), (24, "alt-svc"), (25, "HTTP3"), (26, "zstd"),
            (27, "Unicode"), (28, "HSTS"), (29, "gsasl"), (30, "threadsafe"),
        ]
        return names.filter { bits & (1 << $0.0) != 0 }.map(\.1)
    }
}
