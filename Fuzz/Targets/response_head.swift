// Fuzz target: the curl response-head parser (CurlResponseParser) and ResponseHead.
//
// The input is split into lines after each LF, as libcurl's header callback delivers them, and
// fed to the parser followed by one blank line. Properties: nothing traps; at most one head is
// returned and nothing after it; a returned head has a three-digit status in 100...999 that is
// not an interim 1xx (101 aside), an `HTTP/` version, trimmed non-empty field names and trimmed
// values (bar the ", " of joined repeats).
// Separately, the same lines read as `name: value` fields build a ResponseHead whose headers
// equal the plain joining rule (`addJoining` for every field), whose Set-Cookie list holds every
// Set-Cookie field, and whose expected length follows Content-Length / Content-Encoding.
import Foundation
@_spi(Transport) @testable import Courier

private let url = URL(string: "https://example.com/fuzz")!

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    var lines: [[UInt8]] = []
    var current: [UInt8] = []
    for byte in bytes {
        current.append(byte)
        if byte == UInt8(ascii: "\n") { lines.append(current); current = [] }
    }
    if !current.isEmpty { lines.append(current) }
    lines.append(Array("\r\n".utf8))

    var parser = CurlResponseParser()
    var heads: [ResponseHead] = []
    for line in lines {
        let wasComplete = parser.isComplete
        let head = line.withUnsafeBytes { parser.consume($0, url: url) }
        if wasComplete { precondition(head == nil, "a head after the final one") }
        if let head { heads.append(head) }
    }
    precondition(heads.count <= 1, "more than one final head")
    if let head = heads.first {
        precondition(parser.isComplete)
        precondition((100...999).contains(head.statusCode), "status \(head.statusCode) outside 100...999")
        precondition(head.statusCode >= 200 || head.statusCode == 101, "an interim \(head.statusCode) returned as final")
        precondition(head.httpVersion.hasPrefix("HTTP/"), "version \(head.httpVersion)")
        for header in head.headers {
            precondition(!header.name.isEmpty, "an empty field name")
            precondition(header.name.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) == header.name, "untrimmed name \(header.name)")
            // Each field value is trimmed; a repeated field joins its values with ", ", so an empty one
            // leaves a separator at an end (RFC 9110 §5.3 allows empty list elements).
            precondition(header.value.contains(", ") || header.value.trimmingCharacters(in: CharacterSet(charactersIn: " \t")) == header.value,
                         "untrimmed value \(header.value.debugDescription)")
        }
        checkJoining(head)
    }

    // ResponseHead built from fuzzer-chosen fields against the plain joining rule.
    var fields: [(name: String, value: String)] = []
    for line in lines {
        let text = String(decoding: line, as: UTF8.self)
        guard let colon = text.firstIndex(of: ":") else { continue }
        fields.append((String(text[..<colon]), String(text[text.index(after: colon)...])))
    }
    let head = ResponseHead(statusCode: 200, fields: fields, url: url, httpVersion: "HTTP/1.1")
    var plain = HTTPHeaders()
    for field in fields { plain.addJoining(name: field.name, value: field.value) }
    precondition(Array(head.headers).map { [$0.name, $0.value] } == Array(plain).map { [$0.name, $0.value] },
                 "ResponseHead's joining differs from addJoining:\n\(head.headers)\n\(plain)")
    let cookies = fields.filter { $0.name.caseInsensitiveEquals("Set-Cookie") }.map(\.value)
    precondition(head.setCookies == cookies, "Set-Cookie fields lost")
    checkJoining(head)
    return 0
}

/// The expected length follows the plain rule: -1 under a non-identity coding, else a valid Content-Length.
private func checkJoining(_ head: ResponseHead) {
    var expected: Int64 = -1
    let coding = head.headers.value(for: "Content-Encoding")
    if coding == nil || coding!.trimmedASCII.caseInsensitiveEquals("identity"),
       let value = head.headers.value(for: "Content-Length"), let length = Int64(value.trimmedASCII), length >= 0 {
        expected = length
    }
    precondition(head.expectedContentLength == expected, "expectedContentLength \(head.expectedContentLength), expected \(expected)")
}
