import Courier
import Foundation

/// `-w/--write-out FORMAT`: text printed to standard output after the transfer, with curl's
/// `%{variable}` placeholders replaced, `\n`, `\r`, `\t` and `\\` unescaped, and `%%` for `%`.
struct WriteOut: Equatable, Sendable {
    /// The format as given.
    let format: String

    init(_ format: String) {
        self.format = format
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
    }

    /// The variables `-w` knows, for help and for warnings about unknown ones.
    static let variables = [
        "http_code", "response_code", "size_download", "size_upload", "time_total", "time_starttransfer",
        "url_effective", "content_type", "num_redirects", "http_version", "remote_ip", "exitcode",
        "errormsg",
    ]

    /// The text to print, and the names of unknown variables met (to warn about).
    func render(_ values: Values) -> (text: String, unknown: [String]) {
        var output = ""
        var unknown: [String] = []
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
                } else if rest.first == "{", let close = rest.firstIndex(of: "}") {
                    let name = String(rest[rest.index(after: rest.startIndex)..<close])
                    rest = rest[rest.index(after: close)...]
                    if let value = Self.value(of: name, in: values) { output += value } else { unknown.append(name) }
                } else {
                    output.append("%")
                }
            default:
                output.append(character)
            }
        }
        return (output, unknown)
    }

    /// The text of one variable; nil for an unknown name.
    static func value(of name: String, in values: Values) -> String? {
        switch name {
        case "http_code", "response_code": values.statusCode.map { String(format: "%03d", $0) } ?? "000"
        case "size_download": String(values.sizeDownload)
        case "size_upload": String(values.sizeUpload)
        case "time_total": String(format: "%.6f", values.timeTotal)
        case "time_starttransfer": String(format: "%.6f", values.timeStartTransfer ?? 0)
        case "url_effective": values.urlEffective
        case "content_type": values.contentType ?? ""
        case "num_redirects": String(values.redirects)
        case "http_version": values.httpVersion ?? "0"
        case "remote_ip": values.remoteAddress.map(host(of:)) ?? ""
        case "exitcode": String(values.exitCode)
        case "errormsg": values.errorMessage ?? ""
        default: nil
        }
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
}
