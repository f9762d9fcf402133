import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `-v` event monitor: prints each request head exactly as it goes to the transport (`> `
/// lines, in order), each response head as it arrives (`< ` lines), and the protocol each exchange
/// used (`* HTTP/2, TLSv1.3, TLS_AES_256_GCM_SHA384`) to standard error.
///
/// Events arrive on the request's executor; printing a few lines there is quick enough.
struct VerboseMonitor: EventMonitor {
    let console: Console

    func request(_ request: any Request, didStartExchange urlRequest: URLRequest, headers: HTTPHeaders) {
        var lines = ["> \(urlRequest.httpMethod ?? "GET") \(urlRequest.url?.absoluteString ?? "?")"]
        lines += headers.map { "> \($0.name): \($0.value)" }
        if let body = urlRequest.httpBody, !body.isEmpty { lines.append("> (body: \(body.count) bytes)") }
        lines.append(">")
        lines.forEach(console.message)
    }

    func request(_ request: any Request, didReceiveResponse response: HTTPURLResponse) {
        printHead(response)
    }

    func request(_ request: any Request, willRedirectTo urlRequest: URLRequest, from response: HTTPURLResponse) {
        printHead(response)
        console.message("* following the redirect to \(urlRequest.url?.absoluteString ?? "?")")
    }

    func request(_ request: any Request, didCompleteExchangeWith metrics: TransferMetrics, error: CourierError?) {
        if let line = Self.protocolLine(metrics) { console.message(line) }
    }

    /// `* HTTP/2, TLSv1.3, TLS_AES_256_GCM_SHA384`: the protocol an exchange used, with its TLS
    /// version and cipher when the transport knows them (just `* HTTP/1.1` in the clear); nil when
    /// no response came.
    static func protocolLine(_ metrics: TransferMetrics) -> String? {
        guard let httpVersion = metrics.httpVersion else { return nil }
        return "* " + ([httpVersion] + [metrics.tlsVersion, metrics.tlsCipherSuite].compactMap { $0 }).joined(separator: ", ")
    }

    func request(_ request: any Request, willRetryAfter delay: Duration, dueTo error: CourierError) {
        console.message("* retrying in \(Units.elapsed(delay.seconds)) after: \(error)")
    }

    private func printHead(_ response: HTTPURLResponse) {
        var lines = ["< \(HTTPStatusText.line(response.statusCode))"]
        let fields = response.allHeaderFields.reduce(into: [String: String]()) { fields, field in
            fields["\(field.key)"] = "\(field.value)"
        }
        lines += Self.sorted(fields).map { "< \($0.key): \($0.value)" }
        lines.append("<")
        lines.forEach(console.message)
    }

    /// Header fields sorted by name (Foundation keeps them in a dictionary, so the order on the
    /// wire is not known).
    private static func sorted(_ fields: [String: String]) -> [(key: String, value: String)] {
        fields.sorted { $0.key.lowercased() < $1.key.lowercased() }
    }
}
