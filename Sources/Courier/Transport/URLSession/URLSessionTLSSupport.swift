import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionTransport {
    /// Throws `.invalidConfiguration` naming the first ``TLSConfiguration`` field this transport
    /// cannot honour: it leaves trust to the platform, so only the defaults (the system's trust
    /// store, no client certificate, no pins, TLS 1.2 or later, full verification) are accepted.
    static func checkSupport(
        of tls: TLSConfiguration, httpVersion: HTTPVersion = .automatic, followsAltSvc: Bool = false
    ) throws(CourierError) {
        if httpVersion != .automatic {
            throw CourierError(
                .invalidConfiguration,
                "The URLSession transport cannot choose the HTTP version "
                    + "(SessionConfiguration.httpVersion is \(httpVersion)); use the curl transport.")
        }
        if followsAltSvc {
            throw CourierError(
                .invalidConfiguration,
                "The URLSession transport cannot move to HTTP/3 (SessionConfiguration.usesHTTP3WhenAdvertised); "
                    + "use the curl transport with a libcurl built with HTTP/3.")
        }
        func refuse(_ field: String) throws(CourierError) {
            throw CourierError(
                .invalidConfiguration,
                "The URLSession transport cannot honour TLSConfiguration.\(field); "
                    + "use the curl transport (SessionConfiguration.transport = .curl).")
        }
        if tls.trustRoots != .system { try refuse("trustRoots (or additionalTrustedCertificates)") }
        if tls.clientCertificate != nil { try refuse("clientCertificate") }
        if !tls.pinnedPublicKeys.isEmpty { try refuse("pinnedPublicKeys") }
        if tls.minimumVersion > .tls1_2 { try refuse("minimumVersion") }
        if tls.certificateVerification != .full { try refuse("certificateVerification") }
    }
}
