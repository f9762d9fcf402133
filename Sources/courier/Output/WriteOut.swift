import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `-w/--write-out FORMAT`: text printed after each transfer, with curl's `%{variable}`
/// placeholders replaced, `%header{name}` for a response header, `\n`, `\r`, `\t` and `\\`
/// unescaped, and `%%` for `%`. `%{stderr}` sends what follows to standard error, `%{stdout}`
/// back to standard output. `-w @FILE` reads the format from FILE (`@-`: standard input).
struct WriteOut: Equatable, Sendable {
    /// The format as given.
    let format: String

    init(_ format: String) {
        self.format = format
    }

    /// Where a piece of the text goes.
    enum Stream: Equatable, Sendable {
        case standardOutput
        case standardError
    }

    /// What the placeholders stand for, once the transfer is done.
    struct Values: Sendable {
        /// The final status code; nil when no response arrived (printed `000`, as curl does).
        var statusCode: Int?
        /// Body bytes received (written to standard output or the file).
        var sizeDownload: Int64 = 0
        /// Request body bytes sent.
        var sizeUpload: Int64 = 0
        /// Seconds from start to end.
        var timeTotal: Double = 0
        /// Seconds to the first response byte, when known.
        var timeStartTransfer: Double?
        /// The last URL requested (after redirects).
        var urlEffective: String
        /// The URL as given.
        var url: String = ""
        /// The transfer's place among the command's URLs, from 0.
        var urlNumber = 0
        /// The request method.
        var method = "GET"
        /// The final response's `Content-Type`.
        var contentType: String?
        /// Redirects followed.
        var redirects = 0
        /// `1.1`, `2`...: the HTTP version of the final response, as curl prints it.
        var httpVersion: String?
        /// The server's address.
        var remoteAddress: String?
        /// The exit status the command will end with.
        var exitCode: Int32 = 0
        /// The error message, when the command failed.
        var errorMessage: String?
        /// The file the body went to (`-o`, `-O`).
        var filename: String?
        /// The final response, for `%header{name}`, `%{num_headers}`, `%{redirect_url}`.
        var response: HTTPURLResponse?
        /// The transfer's metrics, for the timings.
        var metrics: TransferMetrics?
    }

    /// The variables `-w` knows, for help and for warnings about unknown ones.
    static let variables = [
        "http_code", "response_code", "size_download", "size_upload", "speed_download", "speed_upload", "time_total",
        "time_namelookup", "time_connect", "time_appconnect", "time_pretransfer", "time_starttransfer", "url_effective", "url",
        "urlnum", "method", "scheme", "content_type", "num_redirects", "redirect_url", "num_headers", "num_connects",
        "http_version", "remote_ip", "remote_port", "filename_effective", "exitcode", "errormsg", "stdout", "stderr",
    ]

    /// What a format gives for a transfer.
    struct Rendered {
        /// The text, in pieces by stream, in order.
        var pieces: [(stream: Stream, text: String)]
        /// The unknown variables met (to warn about).
        var unknown: [String]

        /// The standard-output text.
        var text: String {
            pieces.filter { $0.stream == .standardOutput }.map(\.text).joined()
        }
    }

    /// The text to print, in pieces by stream, and the names of unknown variables met (to warn about).
    func render(_ values: Values) -> Rendered {
        var pieces: [(stream: Stream, text: String)] = []
        var stream = Stream.standardOutput
        var output = ""
        var unknown: [String] = []
        func switchTo(_ next: Stream) {
            if !output.isEmpty { pieces.append((stream, output)) }
            output = ""
            stream = next
        }
        var rest = Substring(format)
        while let character = rest.first {
            rest = rest.dropFirst()
            switch character {
            case "\\":
                guard let next = rest.first else { output.append("\\"); continue }
                rest = rest.dropFirst()
                switch next {
                case "n": output.append("\n")
                case "r": output.append("\r")
                case "t": output.append("\t")
                case "\\": output.append("\\")
                default: output.append("\\"); output.append(next)
                }
            case "%":
                if rest.first == "%" {
                    rest = rest.dropFirst()
                    output.append("%")
                } else if rest.hasPrefix("header{"), let close = rest.firstIndex(of: "}") {
                    let name = String(rest[rest.index(rest.startIndex, offsetBy: "header{".count)..<close])
                    rest = rest[rest.index(after: close)...]
                    output += values.response?.value(forHTTPHeaderField: name) ?? ""
                } else if rest.first == "{", let close = rest.firstIndex(of: "}") {
                    let name = String(rest[rest.index(after: rest.startIndex)..<close])
                    rest = rest[rest.index(after: close)...]
                    switch name {
                    case "stdout": switchTo(.standardOutput)
                    case "stderr": switchTo(.standardError)
                    default:
                        if let value = Self.value(of: name, in: values) { output += value } else { unknown.append(name) }
                    }
                } else {
                    output.append("%")
                }
            default:
                output.append(character)
            }
        }
        switchTo(.standardOutput)
        return Rendered(pieces: pieces, unknown: unknown)
    }

    /// The text of one variable; nil for an unknown name.
    static func value(of name: String, in values: Values) -> String? {
        let metrics = values.metrics
        func seconds(_ value: Double) -> String { String(format: "%.6f", value) }
        let lookup = metrics?.dnsLookup?.seconds ?? 0
        let connect = lookup + (metrics?.connect?.seconds ?? 0)
        let appConnect = metrics?.tlsHandshake.map { connect + $0.seconds } ?? 0
        switch name {
        case "http_code", "response_code": return values.statusCode.map { String(format: "%03d", $0) } ?? "000"
        case "size_download": return String(values.sizeDownload)
        case "size_upload": return String(values.sizeUpload)
        case "speed_download":
            return String(values.timeTotal > 0 ? Int64(Double(values.sizeDownload) / values.timeTotal) : values.sizeDownload)
        case "speed_upload": return String(values.timeTotal > 0 ? Int64(Double(values.sizeUpload) / values.timeTotal) : values.sizeUpload)
        case "time_total": return seconds(metrics?.total.seconds ?? values.timeTotal)
        case "time_namelookup": return seconds(lookup)
        case "time_connect": return seconds(metrics?.connect == nil ? 0 : connect)
        case "time_appconnect": return seconds(appConnect)
        case "time_pretransfer": return seconds(max(connect, appConnect))
        case "time_starttransfer": return seconds(metrics?.timeToFirstByte?.seconds ?? values.timeStartTransfer ?? 0)
        case "url_effective": return values.urlEffective
        case "url": return values.url
        case "urlnum": return String(values.urlNumber)
        case "method": return values.method
        case "scheme": return URL(string: values.urlEffective)?.scheme?.uppercased() ?? ""
        case "content_type": return values.contentType ?? ""
        case "num_redirects": return String(values.redirects)
        case "redirect_url": return redirectURL(values)
        case "num_headers": return String(values.response?.allHeaderFields.count ?? 0)
        case "num_connects": return String(metrics?.connectionReused == false ? 1 : 0)
        case "http_version": return values.httpVersion ?? "0"
        case "remote_ip": return values.remoteAddress.map(host(of:)) ?? ""
        case "remote_port": return values.remoteAddress.flatMap(port(of:)) ?? ""
        case "filename_effective": return values.filename ?? ""
        case "exitcode": return String(values.exitCode)
        case "errormsg": return values.errorMessage ?? ""
        default: return nil
        }
    }

    /// The `Location` of a 3xx that was not followed, resolved against the URL, as curl gives it.
    static func redirectURL(_ values: Values) -> String {
        guard let response = values.response, (300..<400).contains(response.statusCode),
            let location = response.value(forHTTPHeaderField: "Location"),
            let base = response.url ?? URL(string: values.urlEffective),
            let resolved = URL(string: location, relativeTo: base)
        else { return "" }
        return resolved.absoluteString
    }

    /// `1.1` from `HTTP/1.1`, `2` from `HTTP/2`.
    static func curlVersion(_ httpVersion: String?) -> String? {
        httpVersion.map { $0.hasPrefix("HTTP/") ? String($0.dropFirst(5)) : $0 }
    }

    /// The address without its port: `127.0.0.1` from `127.0.0.1:8080`, `::1` from `[::1]:8080`.
    static func host(of address: String) -> String {
        if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
            return String(address[address.index(after: address.startIndex)..<close])
        }
        if address.filter({ $0 == ":" }).count == 1, let colon = address.lastIndex(of: ":") { return String(address[..<colon]) }
        return address
    }

    /// The port of `127.0.0.1:8080` or `[::1]:8080`.
    static func port(of address: String) -> String? {
        guard let colon = address.lastIndex(of: ":"), !address.hasSuffix("]") else { return nil }
        let port = address[address.index(after: colon)...]
        return port.allSatisfy(\.isNumber) && !port.isEmpty ? String(port) : nil
    }
}
