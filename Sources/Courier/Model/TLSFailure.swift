import CCurl
import Foundation

/// A TLS failure told apart by libcurl's result code and the OpenSSL text in its error buffer
/// (FoundationNetworking runs on libcurl too, so its messages read the same).
struct TLSFailure: Equatable {
    let kind: CourierError.Kind

    /// The precise failure, or `nil` when `code`/`detail` describe no TLS problem Courier tells apart.
    init?(code: Int32, detail: String) {
        let text = detail.lowercased()
        func says(_ phrases: String...) -> Bool { phrases.contains { text.contains($0) } }
        switch code {
        case CCURLE_SSL_PINNEDPUBKEYNOTMATCH:
            kind = .pinMismatch
        case CCURLE_SSL_CERTPROBLEM, CCURLE_SSL_CACERT_BADFILE:
            kind = .invalidConfiguration
        case CCURLE_SSL_CLIENTCERT:
            kind = .clientCertificateRejected
        case _ where says("certificate has expired", "certificate is not yet valid", "certificate has bad date"):
            kind = .serverCertificateHasBadDate
        case _
        where says(
            "no alternative certificate subject name", "does not match target host", "subject name does not match",
            "hostname mismatch"):
            kind = .serverCertificateHostnameMismatch
        case CCURLE_PEER_FAILED_VERIFICATION:
            kind = .serverCertificateUntrusted
        case _
        where says(
            "alert certificate required", "alert bad certificate", "alert unknown ca", "alert certificate unknown",
            "alert certificate revoked", "alert certificate expired", "alert unsupported certificate"):
            kind = .clientCertificateRejected
        case _ where says("alert protocol version", "unsupported protocol", "no protocols available", "tlsv1 alert protocol"):
            kind = .tlsVersionUnsupported
        // FoundationNetworking passes libcurl's text without its code (URLError -1).
        case _
        where says(
            "ssl certificate problem", "self-signed certificate", "self signed certificate",
            "unable to get local issuer", "certificate verify failed"):
            kind = .serverCertificateUntrusted
        default:
            return nil
        }
    }

    /// What failed with `host`, in a sentence.
    func sentence(host: String) -> String {
        switch kind {
        case .pinMismatch: "The public key of \(host)'s certificate matches none of its pins (TLSConfiguration.pinnedPublicKeys)"
        case .invalidConfiguration: "The TLS configuration cannot be used with \(host): a certificate or key file could not be loaded"
        case .clientCertificateRejected: "\(host) refused the client certificate, or required one and none was sent"
        case .serverCertificateHasBadDate: "The certificate of \(host) has expired or is not valid yet"
        case .serverCertificateHostnameMismatch: "The certificate of \(host) is for another host name"
        case .serverCertificateUntrusted: "The certificate of \(host) is not trusted (it does not chain to a trusted certificate authority)"
        case .tlsVersionUnsupported: "\(host) and this client share no TLS version (TLSConfiguration.minimumVersion)"
        default: "TLS with \(host) failed"
        }
    }
}
