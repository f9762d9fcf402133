import Courier
import Foundation

/// How a failed request is reported, the way curl reports it: `courier: (6) Could not resolve
/// host: example.invalid` — the exit status in parentheses, then a sentence. The kind of failure
/// is said in words, never as an enum name; the transport's own text (libcurl's, URLSession's)
/// and the underlying error are shown only with `-v`, on a `courier: details:` line.
struct ErrorReport: Equatable, Sendable {
    /// The exit status.
    let exitCode: ExitCode
    /// The sentence after `courier: (N) `.
    let sentence: String
    /// What `-v` adds: the library's full description of the error.
    let details: String

    init(_ error: CourierError) {
        exitCode = ExitCode.forError(error)
        sentence = Self.sentence(for: error)
        details = error.description
    }

    /// The lines to print: the report, and with `verbose` the details.
    func lines(verbose: Bool) -> [String] {
        let first = exitCode == .usage ? "courier: \(sentence)" : "courier: (\(exitCode.rawValue)) \(sentence)"
        return verbose ? [first, "courier: details: \(details)"] : [first]
    }

    /// The sentence for `error`.
    static func sentence(for error: CourierError) -> String {
        let host = error.url?.host ?? "the server"
        switch error.kind {
        case .cannotFindHost:
            return "Could not resolve host: \(host)"
        case .cannotConnect where error.message.hasPrefix("The proxy refused"):
            // The proxy answered; the sentence names what it refused.
            return withoutTransportText(error.message)
        case .cannotConnect:
            let port = error.url.flatMap { $0.port ?? (["https", "wss"].contains($0.scheme?.lowercased()) ? 443 : 80) }.map { " port \($0)" } ?? ""
            return "Failed to connect to \(host)\(port): the connection was refused or the host is unreachable"
        case .timedOut:
            return "Operation timed out: \(withoutTransportText(error.message))"
        case .connectionLost:
            return "Connection lost: \(withoutTransportText(error.message))"
        case .tooManyRedirects:
            return "Too many redirects: \(withoutTransportText(error.message))"
        case .webSocketHandshakeFailed:
            guard let code = error.responseCode else { return "WebSocket handshake failed: \(withoutTransportText(error.message))" }
            return "Refused WebSocket upgrade: \(HTTPStatusText.line(code))"
        case .webSocketClosed:
            guard let status = error.webSocketCloseStatus else { return "The server closed the WebSocket: \(error.message)" }
            return "The server closed the WebSocket with \(status.code.rawValue)" + (status.reason.isEmpty ? "" : ": \(status.reason)")
        case .webSocketProtocolViolation:
            return "WebSocket protocol violation: \(withoutTransportText(error.message))"
        case _ where error.isSecureConnectionFailure:
            // Courier's TLS sentences already say what failed and with which host.
            return withoutTransportText(error.message)
        default:
            return "\(kindInWords(error.kind).capitalizedFirst): \(withoutTransportText(error.message))"
        }
    }

    /// `cannotFindHost` → `cannot find host`; `serverCertificateHasBadDate` → `server certificate has bad date`.
    static func kindInWords(_ kind: CourierError.Kind) -> String {
        var words = ""
        for character in kind.description {
            if character.isUppercase {
                if !words.isEmpty { words.append(" ") }
                words.append(Character(character.lowercased()))
            } else {
                words.append(character)
            }
        }
        words = words.replacingOccurrences(of: "u r l", with: "URL")
        for acronym in ["http", "tls"] where words == acronym || words.hasPrefix(acronym + " ") {
            words = acronym.uppercased() + words.dropFirst(acronym.count)
        }
        return words
    }

    /// `message` without the transport's own words: a trailing `(libcurl: ...)` goes.
    static func withoutTransportText(_ message: String) -> String {
        guard let range = message.range(of: " (libcurl: ", options: .backwards), message.hasSuffix(")") else { return message }
        var trimmed = String(message[..<range.lowerBound])
        if message.hasSuffix(")."), !trimmed.hasSuffix(".") { trimmed += "." }
        return trimmed
    }
}

extension String {
    /// The string with its first letter upper-cased.
    var capitalizedFirst: String {
        guard let first else { return self }
        return first.uppercased() + dropFirst()
    }
}
