import Foundation

/// The libcurl behind the curl transport: which file the process loads, and what it can do.
///
/// A process loads one libcurl, once, when its first curl transport starts (the first ``Session``
/// whose ``SessionConfiguration/transport`` is ``SessionConfiguration/TransportChoice/curl``, or
/// ``SessionConfiguration/TransportChoice/automatic`` on Linux): the file the `COURIER_LIBCURL`
/// environment variable names when it is set, else the system's `libcurl.so.4`. To choose the file
/// in code, call ``load(from:)`` before that; ``current()`` says which one is in use.
///
/// ```swift
/// let libcurl = try Libcurl.load(from: URL(fileURLWithPath: "/opt/curl/lib/libcurl.so.4"))
/// print(libcurl)   // libcurl 8.23.0 (OpenSSL/3.6.0, HTTP/2, HTTP/3) from /opt/curl/lib/libcurl.so.4.8.0
/// ```
///
/// A chosen libcurl may bring its own TLS library and HTTP/2 and HTTP/3 libraries beside it: it
/// uses those, not the ones the system's libcurl loaded into the process. Its dependencies must be
/// where the dynamic linker finds them (its `RPATH`, or `LD_LIBRARY_PATH`).
public struct Libcurl: Sendable, Hashable, CustomStringConvertible {
    /// The file the dynamic linker loaded, e.g. `"/lib/x86_64-linux-gnu/libcurl.so.4"`.
    public let file: String
    /// Its version, e.g. `"8.23.0"`.
    public let version: String
    /// Its TLS library, e.g. `"OpenSSL/3.6.0"`; `nil` for a libcurl built without TLS.
    public let tlsBackend: String?
    /// Whether it speaks HTTP/2.
    public let supportsHTTP2: Bool
    /// Whether it speaks HTTP/3 over QUIC: ``HTTPVersion/http3`` and
    /// ``SessionConfiguration/usesHTTP3WhenAdvertised`` need it.
    public let supportsHTTP3: Bool
    /// Whether the file was chosen (`COURIER_LIBCURL` or ``load(from:)``) rather than the system's.
    public let isChosen: Bool

    init(_ library: CurlLibrary) {
        file = library.path
        version = library.version
        tlsBackend = library.sslVersion
        supportsHTTP2 = library.features.contains(.http2)
        supportsHTTP3 = library.features.contains(.http3)
        isChosen = library.isChosen
    }

    /// `"libcurl 8.23.0 (OpenSSL/3.6.0, HTTP/2, HTTP/3) from /opt/curl/lib/libcurl.so.4.8.0"`.
    public var description: String {
        let details = [tlsBackend, supportsHTTP2 ? "HTTP/2" : nil, supportsHTTP3 ? "HTTP/3" : nil].compactMap { $0 }
        return "libcurl \(version)" + (details.isEmpty ? "" : " (\(details.joined(separator: ", ")))") + " from \(file)"
    }

    /// Loads the libcurl at `file` for this process's curl transports, and describes it.
    ///
    /// Call it before the first curl transport starts; it takes the place of `COURIER_LIBCURL`. Once
    /// a libcurl is loaded, it returns that one when `file` names it, and throws otherwise.
    ///
    /// - Throws: ``CourierError/Kind-swift.struct/invalidConfiguration`` when the file is missing,
    ///   not a libcurl, older than 7.68.0 or missing a library it needs (nothing is loaded then, and
    ///   another file may be tried), or when another libcurl is loaded already.
    @discardableResult
    public static func load(from file: URL) throws(CourierError) -> Libcurl {
        Libcurl(try CurlLibrary.load(file: file.path))
    }

    /// The libcurl this process's curl transports use, loaded now if none is yet (the file
    /// `COURIER_LIBCURL` names, else the system's).
    ///
    /// - Throws: ``CourierError/Kind-swift.struct/transportFailed`` when the system's libcurl is
    ///   missing or unusable, ``CourierError/Kind-swift.struct/invalidConfiguration`` when the file
    ///   `COURIER_LIBCURL` names is.
    public static func current() throws(CourierError) -> Libcurl {
        Libcurl(try CurlLibrary.load())
    }
}
