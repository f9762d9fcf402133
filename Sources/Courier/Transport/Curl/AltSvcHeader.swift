/// An `Alt-Svc` response header field (RFC 7838 §3), read for its HTTP/3 alternative.
///
/// `Alt-Svc: h3=":443"; ma=86400, h3-29=":443"` says the origin serves HTTP/3 on UDP port 443 of the
/// same host for a day; `Alt-Svc: clear` withdraws every alternative. Only `h3` (RFC 9114) counts:
/// the draft versions (`h3-29`...) and other protocols are skipped.
enum AltSvcHeader: Equatable, Sendable {
    /// `clear`: the origin has no alternative any more.
    case clear
    /// The first `h3` alternative, in the server's order of preference.
    case http3(AltSvcAlternative)
    /// No `h3` alternative (or nothing that parses): what was known stays.
    case none

    /// At most this many alternatives of one field are looked at.
    static let maximumAlternatives = 16

    /// Reads `value` (the field's value, several fields joined with commas).
    init(parsing value: String) {
        let trimmed = value.trimmingWhitespace()
        if trimmed == "clear" {
            self = .clear
            return
        }
        for element in WireSyntax.split(Substring(trimmed), outsideQuotesOn: ",").prefix(Self.maximumAlternatives) {
            if let alternative = AltSvcAlternative(element: element) {
                self = .http3(alternative)
                return
            }
        }
        self = .none
    }
}

/// Where an origin serves HTTP/3, and for how long (an `h3` alternative of `Alt-Svc`).
struct AltSvcAlternative: Equatable, Sendable {
    /// The alternative's host; `nil` for the origin's own host.
    var host: String?
    /// The UDP port.
    var port: Int
    /// How long the advertisement holds (`ma`, 24 hours when absent).
    var maxAge: Duration

    /// The default freshness of an alternative (RFC 7838 §3.1).
    static let defaultMaxAge = Duration.seconds(86_400)

    /// An alternative on `port` of `host` (`nil`: the origin's host), advertised for `maxAge`.
    init(host: String?, port: Int, maxAge: Duration) {
        self.host = host
        self.port = port
        self.maxAge = maxAge
    }

    /// `h3=":443"; ma=3600`; `nil` for another protocol or anything malformed.
    init?(element: Substring) {
        let parts = element.split(separator: ";", omittingEmptySubsequences: false)
        guard let first = parts.first, let equals = first.firstIndex(of: "=") else { return nil }
        guard first[..<equals].trimmingWhitespace() == "h3" else { return nil }
        guard let authority = Self.unquoted(first[first.index(after: equals)...].trimmingWhitespace()),
            let colon = authority.lastIndex(of: ":"),
            let port = Int(authority[authority.index(after: colon)...]), (1...65_535).contains(port)
        else { return nil }
        let host = authority[..<colon]
        if !host.isEmpty {
            guard Self.isHost(host) else { return nil }
            self.host = String(host).lowercased()
        }
        self.port = port
        maxAge = Self.defaultMaxAge
        for parameter in parts.dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard parameter[..<equals].trimmingWhitespace().lowercased() == "ma" else { continue }
            let text = parameter[parameter.index(after: equals)...].trimmingWhitespace()
            let digits = Self.unquoted(text) ?? text
            // delta-seconds: digits only; a value too large for Int is "a very long time".
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
                return nil
            }
            maxAge = .seconds(Int(digits) ?? Int.max)
        }
    }

    /// The contents of a quoted string (backslash escapes undone), or `nil` when `text` is not one.
    private static func unquoted(_ text: Substring) -> Substring? {
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return nil }
        let inner = text.dropFirst().dropLast()
        guard inner.contains("\\") else { return inner }
        var result = ""
        var escaped = false
        for character in inner {
            if !escaped && character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return Substring(result)
    }

    /// A DNS name or IPv4 address of letters, digits, dots and hyphens, or an IPv6 address in
    /// brackets: what can go into CURLOPT_CONNECT_TO as it is.
    private static func isHost(_ host: Substring) -> Bool {
        guard host.utf8.count <= 253 else { return false }
        if host.first == "[" {
            guard host.last == "]", host.count > 2 else { return false }
            return host.dropFirst().dropLast().utf8.allSatisfy { byte in
                byte == UInt8(ascii: ":") || byte == UInt8(ascii: ".") || (byte < 0x80 && Character(Unicode.Scalar(byte)).isHexDigit)
            }
        }
        return host.utf8.allSatisfy { byte in
            byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
                || (byte < 0x80 && (Character(Unicode.Scalar(byte)).isLetter || Character(Unicode.Scalar(byte)).isNumber))
        }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return Substring("")
        }
        return Substring(self[first...last])
    }
}
