import Foundation

/// Builds the final ``ResponseHead`` from the header lines libcurl hands to its header callback.
///
/// libcurl passes every line of every head it reads, CRLF included: interim 1xx heads (such as
/// `100 Continue`), the final head, and after the body any chunked trailers. The parser starts
/// over at each status line, skips 1xx heads at their blank line, returns the final head once,
/// and ignores everything after it (``trailerField(_:)`` reads the trailer lines).
struct CurlResponseParser {
    private var statusCode: Int?
    private var httpVersion = ""
    private var fields: [(name: String, value: String)] = []
    /// Whether the final head has been returned.
    private(set) var isComplete = false
    /// Whether any status line has been read (an interim or the final head).
    var hasStarted: Bool { isComplete || statusCode != nil }

    /// Whether a status line has been read and its head has not ended yet.
    var isReadingHead: Bool { statusCode != nil && !isComplete }

    /// Feeds one header line; returns the head when this line (the blank line) completes a final head.
    mutating func consume(_ line: UnsafeRawBufferPointer, url: URL) -> ResponseHead? {
        guard !isComplete else { return nil }
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let content = UnsafeRawBufferPointer(rebasing: line[0..<end])

        if content.isEmpty {
            guard let statusCode else { return nil }
            if (100..<200).contains(statusCode) && statusCode != 101 {
                self.statusCode = nil
                fields.removeAll(keepingCapacity: true)
                return nil
            }
            isComplete = true
            return ResponseHead(statusCode: statusCode, fields: fields, url: url, httpVersion: httpVersion)
        }
        if Self.isStatusLine(content) {
            parseStatusLine(content)
        } else if statusCode != nil {
            parseField(content)
        }
        return nil
    }

    /// Whether a line libcurl hands over after the final head (a chunked body's trailer section)
    /// is a field (`Name: value`), the blank line that ends the section, or a status line.
    static func isTrailerField(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        guard end > 0 else { return true }
        let content = UnsafeRawBufferPointer(rebasing: line[0..<end])
        if isStatusLine(content) { return true }
        guard let colon = content.firstIndex(of: UInt8(ascii: ":")) else { return false }
        return colon > 0
    }

    /// The field of one trailer line (`Name: value`, the value trimmed), or `nil` for the blank
    /// line that ends the section, a status line, or a line that is not a field.
    static func trailerField(_ line: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let content = UnsafeRawBufferPointer(rebasing: line[0..<end])
        guard !content.isEmpty, !isStatusLine(content), let colon = content.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            return nil
        }
        let name = text(trimmed(UnsafeRawBufferPointer(rebasing: content[0..<colon])))
        let value = text(trimmed(UnsafeRawBufferPointer(rebasing: content[(colon + 1)...])))
        return (name, value)
    }

    /// Whether `line` starts with `HTTP/`.
    private static func isStatusLine(_ line: UnsafeRawBufferPointer) -> Bool {
        line.count >= 5 && line[0] == UInt8(ascii: "H") && line[1] == UInt8(ascii: "T") && line[2] == UInt8(ascii: "T")
            && line[3] == UInt8(ascii: "P") && line[4] == UInt8(ascii: "/")
    }

    /// `HTTP/1.1 200 OK` or `HTTP/2 200`: starts a new head.
    private mutating func parseStatusLine(_ line: UnsafeRawBufferPointer) {
        fields.removeAll(keepingCapacity: true)
        // One allocation for a typical head instead of four growths.
        fields.reserveCapacity(16)
        let space = line.firstIndex(of: UInt8(ascii: " ")) ?? line.count
        httpVersion = Self.text(UnsafeRawBufferPointer(rebasing: line[0..<space]))
        var code = 0
        var digits = 0
        var index = space + 1
        while index < line.count, digits < 3, let digit = Self.digit(line[index]) {
            code = code * 10 + digit
            digits += 1
            index += 1
        }
        // Three digits from 100 up (RFC 9110 §15): `HTTP/1.1 050` is no status line.
        statusCode = digits == 3 && code >= 100 ? code : nil
    }

    /// `Name: value`, or a continuation line (obsolete folding) that extends the previous value.
    private mutating func parseField(_ line: UnsafeRawBufferPointer) {
        if line[0] == UInt8(ascii: " ") || line[0] == UInt8(ascii: "\t") {
            guard let last = fields.indices.last else { return }
            let more = Self.text(Self.trimmed(line))
            if !more.isEmpty { fields[last].value += fields[last].value.isEmpty ? more : " " + more }
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return }
        let name = Self.text(Self.trimmed(UnsafeRawBufferPointer(rebasing: line[0..<colon])))
        let value = Self.text(Self.trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...])))
        fields.append((name, value))
    }

    private static func digit(_ byte: UInt8) -> Int? {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") ? Int(byte - UInt8(ascii: "0")) : nil
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        func isSpace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var start = 0
        var end = bytes.count
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[start..<end])
    }

    /// Whether every byte is below 0x80, checked eight bytes at a time.
    private static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var highBits: UInt64 = 0
        var index = 0
        while index + 8 <= bytes.count {
            highBits |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            index += 8
        }
        while index < bytes.count {
            highBits |= UInt64(bytes[index])
            index += 1
        }
        return highBits & 0x8080_8080_8080_8080 == 0
    }

    /// Header bytes as text: UTF-8 when valid, otherwise ISO-8859-1 (RFC 9110 obs-text).
    private static func text(_ bytes: UnsafeRawBufferPointer) -> String {
        // ASCII first: `String(validating:)` is generic and costs a metadata lookup per call.
        if isASCII(bytes) { return String(decoding: bytes, as: UTF8.self) }
        if let utf8 = String(validating: bytes, as: UTF8.self) { return utf8 }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }
}
