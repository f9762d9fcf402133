/// The parsed request line and header fields of one request.
struct RequestHead: Sendable {
    var method: String
    var target: String
    var version: String
    var headers: HeaderFields

    /// How the request body is delimited.
    enum Framing: Equatable {
        case none
        case contentLength(Int64)
        case chunked
    }

    /// Whether the client asked for `Expect: 100-continue`.
    var expectsContinue: Bool {
        version == "HTTP/1.1" && headers.values(for: "Expect").contains { $0.equalsIgnoringASCIICase("100-continue") }
    }

    /// Whether the connection must close after this exchange: HTTP/1.0, or `Connection: close`.
    var wantsClose: Bool {
        if version != "HTTP/1.1" { return true }
        return headers.values(for: "Connection").contains { value in
            value.split(separator: ",").contains { $0.trimmingOWS.equalsIgnoringASCIICase("close") }
        }
    }
}

/// Why a request could not be parsed, and the status to answer with.
struct RequestParseError: Error {
    var status: Int
    var message: String
}

/// Parses request heads strictly enough to catch malformed input (RFC 9112 §2-§6).
enum RequestHeadParser {
    /// Parses the bytes of a head (request line and fields, without the final empty line).
    static func parse(_ bytes: ArraySlice<UInt8>) -> (head: RequestHead?, error: RequestParseError?) {
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line -> ArraySlice<UInt8> in
            line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        }
        while lines.last?.isEmpty == true { lines.removeLast() }
        guard let first = lines.first else {
            return (nil, RequestParseError(status: 400, message: "empty request line"))
        }
        let requestLine = decode(first)
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts.contains(where: \.isEmpty) else {
            return (nil, RequestParseError(status: 400, message: "malformed request line: \(requestLine.debugDescription)"))
        }
        var head = RequestHead(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: [:])
        guard isToken(parts[0]) else {
            return (head, RequestParseError(status: 400, message: "invalid method \(parts[0].debugDescription)"))
        }
        guard parts[1].unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
            return (head, RequestParseError(status: 400, message: "invalid request-target"))
        }
        let version = parts[2].utf8
        guard version.count == 8, parts[2].hasPrefix("HTTP/"),
            let major = version.dropFirst(5).first, isDigit(major),
            version.dropFirst(6).first == UInt8(ascii: "."),
            let minor = version.dropFirst(7).first, isDigit(minor)
        else {
            return (head, RequestParseError(status: 400, message: "invalid HTTP version \(parts[2].debugDescription)"))
        }
        guard major == UInt8(ascii: "1") else {
            return (head, RequestParseError(status: 505, message: "unsupported HTTP version \(parts[2])"))
        }
        for line in lines.dropFirst() {
            guard let firstByte = line.first else {
                return (head, RequestParseError(status: 400, message: "empty line inside the header section"))
            }
            if firstByte == UInt8(ascii: " ") || firstByte == UInt8(ascii: "\t") {
                return (head, RequestParseError(status: 400, message: "obsolete line folding in header section"))
            }
            let text = decode(line)
            guard let colon = text.firstIndex(of: ":") else {
                return (head, RequestParseError(status: 400, message: "header line without a colon: \(text.debugDescription)"))
            }
            let name = text[..<colon]
            guard isToken(name) else {
                return (head, RequestParseError(status: 400, message: "invalid header name \(String(name).debugDescription)"))
            }
            let value = text[text.index(after: colon)...].trimmingOWS
            guard !value.unicodeScalars.contains(where: { $0.value == 0 || $0.value == 0x0D || $0.value == 0x0A }) else {
                return (head, RequestParseError(status: 400, message: "invalid character in the value of \(name)"))
            }
            head.headers.add(String(name), String(value))
        }
        return (head, nil)
    }

    /// Works out how the body of `head` is delimited (RFC 9112 §6.3).
    static func framing(of head: RequestHead) -> Result<RequestHead.Framing, RequestParseError> {
        let codings = head.headers.values(for: "Transfer-Encoding")
            .flatMap { $0.split(separator: ",") }
            .map { $0.trimmingOWS }
            .filter { !$0.isEmpty }
        if !codings.isEmpty {
            let chunkedCount = codings.filter { $0.equalsIgnoringASCIICase("chunked") }.count
            guard chunkedCount == 1, let last = codings.last, last.equalsIgnoringASCIICase("chunked") else {
                return .failure(RequestParseError(status: 400, message: "Transfer-Encoding must end with a single chunked"))
            }
            return .success(.chunked)
        }
        let lengths = head.headers.values(for: "Content-Length")
            .flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingOWS }
        guard let firstLength = lengths.first else { return .success(.none) }
        guard lengths.allSatisfy({ $0 == firstLength }), !firstLength.isEmpty,
            firstLength.utf8.allSatisfy(isDigit), let length = Int64(firstLength)
        else {
            return .failure(RequestParseError(status: 400, message: "invalid Content-Length \(lengths.joined(separator: ", ").debugDescription)"))
        }
        return .success(length == 0 ? .none : .contentLength(length))
    }

    /// Decodes a line as UTF-8, falling back to ISO-8859-1 so no byte is ever rejected here.
    static func decode(_ bytes: ArraySlice<UInt8>) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    private static func isToken(_ text: Substring) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingOWS: Substring {
        let isOWS: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        let text = self[...]
        guard let first = text.firstIndex(where: { !isOWS($0) }),
            let last = text.lastIndex(where: { !isOWS($0) })
        else { return Substring() }
        return Substring(text[first...last])
    }
}
