import Foundation

/// Reads the server's answer to the opening handshake from bytes fed in chunks: the status line
/// and header fields up to the blank line, strictly (HTTP/1.x, three-digit status, `name: value`
/// fields, CRLF or LF line ends), within a size limit. The bytes after the head are the first
/// WebSocket frames and are handed back untouched.
struct WebSocketResponseHeadReader: Sendable {
    /// The default limit on the head: 64 KiB, far more than any real handshake answer.
    static let defaultMaximumSize = 64 * 1024

    /// What the head turned out to be, with the bytes read past it.
    struct Result: Sendable {
        var head: ResponseHead
        /// Bytes after the blank line: the start of the WebSocket stream.
        var remainder: Data
    }

    let url: URL
    let maximumSize: Int
    private var buffer: [UInt8] = []
    /// Where the next line starts in `buffer`.
    private var lineStart = 0
    private var statusCode: Int?
    private var httpVersion = ""
    private var fields: [(name: String, value: String)] = []
    private var finished = false

    init(url: URL, maximumSize: Int = Self.defaultMaximumSize) {
        self.url = url
        self.maximumSize = maximumSize
    }

    /// Feeds `bytes`; returns the head once its blank line has arrived, nil while more is needed.
    /// Throws once the head is malformed or longer than the limit. Call no more after a result.
    mutating func read(_ bytes: Data) throws(WebSocketHandshakeFailure) -> Result? {
        guard !finished else { return nil }
        var searchFrom = buffer.count
        buffer.append(contentsOf: bytes)
        while let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            let lineEnd = newline > lineStart && buffer[newline - 1] == UInt8(ascii: "\r") ? newline - 1 : newline
            let line = buffer[lineStart..<lineEnd]
            lineStart = newline + 1
            searchFrom = lineStart
            guard newline < maximumSize else { throw WebSocketHandshakeFailure.responseHeadTooLarge(limit: maximumSize) }
            if statusCode == nil {
                try readStatusLine(line)
            } else if line.isEmpty {
                finished = true
                let remainder = Data(buffer[lineStart...])
                buffer = []
                return Result(
                    head: ResponseHead(statusCode: statusCode ?? 0, fields: fields, url: url, httpVersion: httpVersion), remainder: remainder)
            } else {
                try readField(line)
            }
        }
        guard buffer.count <= maximumSize else { throw WebSocketHandshakeFailure.responseHeadTooLarge(limit: maximumSize) }
        return nil
    }

    /// `HTTP/1.1 101 Switching Protocols`: version, a space, three digits, then a space and a
    /// reason or nothing (RFC 9112 §4).
    private mutating func readStatusLine(_ line: ArraySlice<UInt8>) throws(WebSocketHandshakeFailure) {
        let bytes = Array(line)
        let prefix = Array("HTTP/1.".utf8)
        guard bytes.count >= 12, Array(bytes[0..<7]) == prefix, bytes[7] == UInt8(ascii: "1") || bytes[7] == UInt8(ascii: "0"),
            bytes[8] == UInt8(ascii: " "), bytes.count == 12 || bytes[12] == UInt8(ascii: " ")
        else {
            throw WebSocketHandshakeFailure.malformedResponse("the status line is not HTTP/1.x with a status code")
        }
        var code = 0
        for byte in bytes[9..<12] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else {
                throw WebSocketHandshakeFailure.malformedResponse("the status code is not three digits")
            }
            code = code * 10 + Int(byte - UInt8(ascii: "0"))
        }
        guard code >= 100 else { throw WebSocketHandshakeFailure.malformedResponse("the status code is below 100") }
        statusCode = code
        httpVersion = String(decoding: bytes[0..<8], as: UTF8.self)
    }

    /// `Name: value`; folded lines and names that are not tokens are refused (RFC 9112 §5).
    private mutating func readField(_ line: ArraySlice<UInt8>) throws(WebSocketHandshakeFailure) {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex,
            line[line.startIndex..<colon].allSatisfy(WireSyntax.isTokenByte)
        else {
            throw WebSocketHandshakeFailure.malformedResponse("a header line is not \"name: value\"")
        }
        let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
        var value = line[(colon + 1)...]
        while let first = value.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { value = value.dropFirst() }
        while let last = value.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { value = value.dropLast() }
        guard !value.contains(0) && !value.contains(UInt8(ascii: "\r")) else {
            throw WebSocketHandshakeFailure.malformedResponse("the value of \(WireSyntax.quoted(name)) contains CR or NUL")
        }
        fields.append((name, String(decoding: value, as: UTF8.self)))
    }
}
