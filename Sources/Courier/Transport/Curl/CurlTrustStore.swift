import CCurl
import Foundation
import Synchronization

/// A private CA file for one transport, written once to a temporary file (mode 0600) that
/// libcurl reads through CURLOPT_CAINFO and that is removed at shutdown: the certificates a
/// ``TLSConfiguration`` trusts beyond (or instead of) the system's, after the system bundle when
/// the system is trusted through a file.
final class CurlTrustStore: Sendable {
    /// The file's path.
    let path: String
    // Guards against removing the file twice (shutdown and deinit may both ask).
    private let removed = Atomic<Bool>(false)

    /// Writes `bundle` (when given and readable) followed by `certificates`; throws
    /// `.invalidConfiguration` when a certificate file cannot be read or holds no PEM certificate,
    /// and `.fileSystem` when the temporary file cannot be written.
    init(certificates: [URL], prependingBundle bundlePath: String?) throws(CourierError) {
        var bundle = Data()
        if let bundlePath, let data = FileManager.default.contents(atPath: bundlePath) {
            bundle.append(data)
            if data.last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
        }
        for certificate in certificates {
            let data = try Self.contents(ofCertificate: certificate)
            bundle.append(data)
            if data.last != UInt8(ascii: "\n") { bundle.append(UInt8(ascii: "\n")) }
        }
        path = try Self.writeTemporaryFile(bundle)
    }

    deinit { remove() }

    /// The contents of a trusted-certificate file; throws `.invalidConfiguration` when it cannot be
    /// read or holds no PEM certificate.
    static func contents(ofCertificate certificate: URL) throws(CourierError) -> Data {
        guard let data = FileManager.default.contents(atPath: certificate.path) else {
            throw CourierError(.invalidConfiguration, "Cannot read the trusted certificate file \(certificate.path).")
        }
        guard data.range(of: Data("-----BEGIN CERTIFICATE-----".utf8)) != nil else {
            throw CourierError(.invalidConfiguration, "The trusted certificate file \(certificate.path) holds no PEM certificate.")
        }
        return data
    }

    /// Deletes the bundle file; later calls do nothing.
    func remove() {
        if !removed.exchange(true, ordering: .relaxed) { unlink(path) }
    }

    /// Where this system's CA bundle is: libcurl's own default (CURLINFO_CAINFO from 7.84.0, the
    /// built-in path from 7.70.0), else the first of the usual Linux locations that exists.
    static func systemBundlePath(library: CurlLibrary) -> String? {
        var candidates: [String] = []
        if library.versionNumber >= 0x075400, let easy = CurlEasyHandle() {
            var value: UnsafePointer<CChar>?
            if ccurl_easy_getinfo_string(easy.pointer, CCURLINFO_CAINFO, &value) == CCURLE_OK, let value {
                candidates.append(String(cString: value))
            }
        }
        if let builtIn = library.defaultCAInfo { candidates.append(builtIn) }
        candidates += [
            "/etc/ssl/certs/ca-certificates.crt",  // Debian, Ubuntu, Arch, Gentoo
            "/etc/pki/tls/certs/ca-bundle.crt",  // RHEL, Fedora, CentOS
            "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",  // RHEL 7+
            "/etc/ssl/ca-bundle.pem",  // openSUSE
            "/etc/ssl/cert.pem",  // Alpine, macOS
        ]
        return candidates.first { FileManager.default.isReadableFile(atPath: $0) }
    }

    private static func writeTemporaryFile(_ contents: Data) throws(CourierError) -> String {
        let directory = FileManager.default.temporaryDirectory.path
        var template = Array((directory + "/courier-ca-XXXXXX.pem").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return -1 }
            return mkstemps(base, 4)
        }
        guard descriptor >= 0 else {
            throw CourierError(.fileSystem, "Cannot create a CA bundle file in \(directory): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let written = contents.withUnsafeBytes { buffer -> Bool in
            guard let base = buffer.baseAddress else { return true }
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, base + offset, buffer.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written else {
            unlink(path)
            throw CourierError(.fileSystem, "Cannot write the CA bundle file \(path): \(String(cString: strerror(errno)))")
        }
        return path
    }
}
