import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Picks the transport a session configuration asks for, falling back when libcurl is missing.
enum TransportFactory {
    static func makeTransport(for configuration: SessionConfiguration) -> (any Transport, SessionNotice?) {
        do {
            try configuration.validate()
        } catch {
            return (FailingTransport(error: error), SessionNotice(kind: .invalidConfiguration, message: error.message))
        }
        switch configuration.transport {
        case .urlSession(let urlSessionConfiguration):
            return (
                URLSessionTransport(
                    configuration: configuration.transportConfiguration,
                    sessionConfiguration: urlSessionConfiguration), nil
            )
        case .curl:
            do {
                return (try makeCurl(configuration), nil)
            } catch {
                // Asked for explicitly: fail every request clearly rather than silently switching.
                return (FailingTransport(error: CourierError(wrapping: error)), nil)
            }
        case .automatic:
            #if canImport(FoundationNetworking)
            do {
                return (try makeCurl(configuration), nil)
            } catch let error as CourierError where error.kind == .invalidConfiguration {
                // A chosen libcurl that cannot be used (COURIER_LIBCURL, Libcurl.load(from:)) is
                // a mistake to report, not a machine without libcurl to work around.
                return (FailingTransport(error: error), SessionNotice(kind: .invalidConfiguration, message: error.message))
            } catch {
                // The fallback must not quietly drop TLS settings URLSession cannot honour.
                do {
                    try URLSessionTransport.checkSupport(
                        of: configuration.transportConfiguration.tls,
                        httpVersion: configuration.httpVersion, followsAltSvc: configuration.usesHTTP3WhenAdvertised)
                } catch let unsupported {
                    let failure = CourierError(
                        .invalidConfiguration,
                        "libcurl could not be loaded (\(error)), and URLSession, "
                            + "the fallback, cannot honour the TLS configuration: \(unsupported.message)")
                    return (FailingTransport(error: failure), SessionNotice(kind: .invalidConfiguration, message: failure.message))
                }
                let notice = SessionNotice(
                    kind: .transportFallback,
                    message: "libcurl could not be loaded (\(error)); using URLSession instead.")
                return (
                    URLSessionTransport(
                        configuration: configuration.transportConfiguration,
                        sessionConfiguration: .ephemeral), notice
                )
            }
            #else
            return (
                URLSessionTransport(
                    configuration: configuration.transportConfiguration,
                    sessionConfiguration: .ephemeral), nil
            )
            #endif
        }
    }

    private static func makeCurl(_ configuration: SessionConfiguration) throws -> any Transport {
        #if canImport(FoundationNetworking) || os(Linux)
        return try CurlTransport(configuration: configuration.transportConfiguration)
        #else
        throw CourierError(.transportFailed, "The libcurl transport runs on Linux; use .automatic or .urlSession here.")
        #endif
    }
}

/// A transport that fails every exchange with the same error, used when the chosen transport
/// cannot start.
final class FailingTransport: Transport {
    let error: CourierError
    let capabilities = TransportCapabilities(name: "unavailable", pausesInPlace: false, appliesBackpressure: false)

    init(error: CourierError) {
        self.error = error
    }

    func startTransfer(_ request: TransportRequest, sink: any TransportEventSink) -> any TransportTransfer {
        sink.receive(.completed(error: error.with(url: request.url), metrics: TransferMetrics(transport: capabilities.name)))
        return InertTransfer()
    }

    func shutdown() {}
}
