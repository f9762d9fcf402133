import CourierSupport
import Foundation

/// HTTP Digest authentication (RFC 7616) for one challenge: `MD5`, `MD5-sess`, `SHA-256` and
/// `SHA-256-sess`, with `qop=auth` or (RFC 2069) no qop. `auth-int` and `userhash` are not
/// offered; a challenge that requires them is not answered.
struct DigestChallenge: Equatable {
    enum Algorithm: String, CaseIterable {
        case md5 = "MD5"
        case md5Session = "MD5-sess"
        case sha256 = "SHA-256"
        case sha256Session = "SHA-256-sess"

        /// Stronger algorithms first, for choosing among several challenges.
        var strength: Int {
            switch self {
            case .sha256, .sha256Session: 2
            case .md5, .md5Session: 1
            }
        }

        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hex(_ text: String) -> String {
            let bytes = Array(text.utf8)
            let digest =
                switch self {
                case .md5, .md5Session: MD5.hash(bytes)
                case .sha256, .sha256Session: SHA256.hash(Data(bytes))
                }
            return digest.map { String(format: "%02x", $0) }.joined()
        }
    }

    let realm: String
    let nonce: String
    let opaque: String?
    let algorithm: Algorithm
    /// Whether `qop=auth` is used (the challenge offered it); false for RFC 2069 challenges without qop.
    let usesQOP: Bool
    /// The server says the nonce expired but the credentials were right: answer again at once.
    let stale: Bool

    /// The challenge's digest parameters, or nil when Courier cannot answer it (an unknown
    /// algorithm, only `auth-int`, `userhash=true`, no nonce).
    init?(_ challenge: HTTPChallenge) {
        guard challenge.scheme == "digest", let nonce = challenge.parameters["nonce"] else { return nil }
        let algorithmName = challenge.parameters["algorithm"] ?? "MD5"
        guard let algorithm = Algorithm.allCases.first(where: { $0.rawValue.caseInsensitiveEquals(algorithmName) }) else { return nil }
        if let qop = challenge.parameters["qop"] {
            let offered = qop.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard offered.contains("auth") else { return nil }
            usesQOP = true
        } else {
            usesQOP = false
        }
        guard challenge.parameters["userhash"]?.lowercased() != "true" else { return nil }
        self.realm = challenge.parameters["realm"] ?? ""
        self.nonce = nonce
        self.opaque = challenge.parameters["opaque"]
        self.algorithm = algorithm
        self.stale = challenge.parameters["stale"]?.lowercased() == "true"
    }

    /// The `response` value: RFC 7616 §3.4.1.
    func response(username: String, password: String, method: String, uri: String, nonceCount: Int, clientNonce: String) -> String {
        var ha1 = algorithm.hex("\(username):\(realm):\(password)")
        if algorithm.isSession { ha1 = algorithm.hex("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = algorithm.hex("\(method):\(uri)")
        guard usesQOP else { return algorithm.hex("\(ha1):\(nonce):\(ha2)") }
        return algorithm.hex("\(ha1):\(nonce):\(Self.format(nonceCount)):\(clientNonce):auth:\(ha2)")
    }

    /// The whole `Authorization` field value.
    func authorization(
        username: String, password: String, method: String, uri: String, nonceCount: Int,
        clientNonce: String
    ) -> String {
        let digest = response(
            username: username, password: password, method: method, uri: uri, nonceCount: nonceCount,
            clientNonce: clientNonce)
        var parts: [String] = []
        // RFC 7616 §3.4.4: a user name that is not ASCII (or cannot be quoted) goes in username*.
        if username.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) {
            parts.append("username=\(Self.quoted(username))")
        } else {
            parts.append("username*=UTF-8''\(Self.extendedValue(username))")
        }
        parts.append("realm=\(Self.quoted(realm))")
        parts.append("nonce=\(Self.quoted(nonce))")
        parts.append("uri=\(Self.quoted(uri))")
        parts.append("algorithm=\(algorithm.rawValue)")
        parts.append("response=\(Self.quoted(digest))")
        if let opaque { parts.append("opaque=\(Self.quoted(opaque))") }
        if usesQOP {
            parts.append("qop=auth")
            parts.append("nc=\(Self.format(nonceCount))")
            parts.append("cnonce=\(Self.quoted(clientNonce))")
        }
        return "Digest " + parts.joined(separator: ", ")
    }

    /// The nonce count as eight hex digits.
    static func format(_ count: Int) -> String {
        let hex = String(count, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex
    }

    /// A fresh client nonce: 16 random bytes, hex.
    static func makeClientNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    private static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// RFC 8187 value characters, the rest percent-encoded.
    private static func extendedValue(_ value: String) -> String {
        value.utf8.map { byte -> String in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "+"), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                String(UnicodeScalar(byte))
            default:
                String(format: "%%%02X", byte)
            }
        }.joined()
    }
}
