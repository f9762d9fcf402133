import CCurl
import Foundation

/// The certificates one transport trusts, parsed once into one OpenSSL store that every new TLS
/// connection of every event loop verifies against (handed over through
/// CURLOPT_SSL_CTX_FUNCTION), instead of each connection, or each loop, parsing the CA bundle again.
///
/// The system's roots come in as OpenSSL's hashed directory where there is one: looked up lazily,
/// one certificate per issuer a server presents, and kept in the store afterwards, so a cold
/// connection costs no bundle parse at all.
///
/// `@unchecked Sendable`: the store is used from every loop thread at once, which OpenSSL allows
/// (the `X509_STORE` guards its certificates and lookups with its own lock); this class only
/// holds the pointer, set once, and releases it at deinit.
final class CurlSharedTrust: @unchecked Sendable {
    /// The ccurl wrapper around the `X509_STORE`.
    let pointer: OpaquePointer

    /// A store holding `files` (PEM bundles, parsed now) and `directory` (a hashed directory, read
    /// on demand); `nil` when libcurl's TLS backend is not OpenSSL, libcurl cannot take a store
    /// (CURLOPT_SSL_CTX_FUNCTION unsupported), or OpenSSL cannot load one of them. The caller then
    /// hands libcurl the files and the directory the usual way.
    init?(files: [String], directory: String?) {
        var cStrings = files.map { strdup($0) }
        defer { cStrings.forEach { free($0) } }
        let store: OpaquePointer? = cStrings.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { rebound in
                ccurl_trust_store_create(rebound.baseAddress, Int32(files.count), directory)
            }
        }
        guard let store else { return nil }
        // libcurl says here, once, whether it takes the callback at all.
        guard let probe = CurlEasyHandle(), ccurl_easy_use_trust_store(probe.pointer, store) == CCURLE_OK else {
            ccurl_trust_store_release(store)
            return nil
        }
        pointer = store
    }

    deinit {
        // Every connection that verified against the store holds its own reference.
        ccurl_trust_store_release(pointer)
    }

    /// Makes every new TLS connection of `easy` verify against this store.
    func apply(to easy: CurlEasyHandle) throws(CourierError) {
        try easy.check(.sslContextFunction, ccurl_easy_use_trust_store(easy.pointer, pointer))
    }

    /// Stops `easy` from using a shared store (its connections read CURLOPT_CAINFO/CAPATH again).
    static func remove(from easy: CurlEasyHandle) throws(CourierError) {
        try easy.check(.sslContextFunction, ccurl_easy_use_trust_store(easy.pointer, nil))
    }
}
