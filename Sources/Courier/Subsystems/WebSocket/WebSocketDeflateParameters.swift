/// What permessage-deflate (RFC 7692) was agreed with: the offer the client sends and the
/// parameters of the server's answer, checked as §7.1 requires.
///
/// Courier inflates what the server compresses and compresses its own data messages with the
/// window the server allows (`client_max_window_bits`, offered without a value so the server may
/// choose one); the offer puts no limit on the server.
struct WebSocketDeflateParameters: Sendable, Hashable {
    /// The extension's name.
    static let name = "permessage-deflate"
    /// The `Sec-WebSocket-Extensions` value the client offers.
    static let offer = "permessage-deflate; client_max_window_bits"

    /// The server starts every message with an empty window (`server_no_context_takeover`).
    var serverNoContextTakeover = false
    /// The client must start every message with an empty window (`client_no_context_takeover`).
    var clientNoContextTakeover = false
    /// The server's LZ77 window in bits (8–15), when it named one.
    var serverMaxWindowBits: Int?
    /// The largest window the client may use, when the server named one.
    var clientMaxWindowBits: Int?

    init() {}

    /// Reads the server's `Sec-WebSocket-Extensions` answer to ``offer``: exactly one
    /// permessage-deflate with known parameters, none repeated, window sizes 8–15 (§7.1).
    init(response: String) throws(WebSocketHandshakeFailure) {
        func refuse() -> WebSocketHandshakeFailure { .unexpectedExtension(response) }
        let extensions = response.split(separator: ",", omittingEmptySubsequences: false)
        guard extensions.count == 1 else { throw refuse() }
        let parts = extensions[0].split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == Self.name else { throw refuse() }
        var seen: Set<String> = []
        for parameter in parts.dropFirst() {
            let pieces = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            var value = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : nil
            // A value may be quoted (RFC 7692 §5.2 allows the quoted-string form of the token).
            if let quoted = value, quoted.count >= 2, quoted.hasPrefix("\""), quoted.hasSuffix("\"") {
                value = String(quoted.dropFirst().dropLast())
            }
            guard seen.insert(name).inserted else { throw refuse() }
            switch name {
            case "server_no_context_takeover":
                guard value == nil else { throw refuse() }
                serverNoContextTakeover = true
            case "client_no_context_takeover":
                guard value == nil else { throw refuse() }
                clientNoContextTakeover = true
            case "server_max_window_bits":
                serverMaxWindowBits = try Self.windowBits(value, refuse())
            case "client_max_window_bits":
                clientMaxWindowBits = try Self.windowBits(value, refuse())
            default:
                throw refuse()
            }
        }
    }

    /// 8...15 in decimal without leading zeros (§7.1.2.1).
    private static func windowBits(_ value: String?, _ failure: WebSocketHandshakeFailure) throws(WebSocketHandshakeFailure) -> Int {
        guard let value, let bits = Int(value), (8...15).contains(bits), String(bits) == value else { throw failure }
        return bits
    }
}
