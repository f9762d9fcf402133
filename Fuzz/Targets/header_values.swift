// Fuzz target: header-value parsers — Content-Type / Accept (MIMEType), Content-Disposition file
// names (SuggestedFileName) and Retry-After / HTTP-date (RetryAfter, HTTPDate).
//
// Properties: nothing traps; a parsed media type is lowercase, non-empty, free of whitespace, `/`
// and `;`, and parses back from its description; parameter names are lowercase and non-empty;
// a suggested file name is non-empty, at most 255 UTF-8 bytes (NAME_MAX), has no path separator,
// colon or control character and does not start with a dot; a Retry-After delay is never
// negative nor beyond the cap, seconds are non-negative, and a parsed date survives format → parse.
import CourierSupport
import Foundation
@testable import Courier

private let now = Date(timeIntervalSince1970: 1_750_000_000)

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    let text = String(decoding: bytes, as: UTF8.self)
    checkMIME(text)
    checkFileName(text)
    checkRetryAfter(text)
    // Header values that are not UTF-8 reach these parsers as ISO-8859-1 (see CurlResponseParser).
    let latin1 = String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    if latin1 != text {
        checkMIME(latin1)
        checkFileName(latin1)
    }
    return 0
}

private func checkMIME(_ text: String) {
    if let type = MIMEType(text) {
        for part in [type.type, type.subtype] {
            precondition(!part.isEmpty && part == part.lowercased(), "bad part \(part)")
            precondition(!part.contains(where: { $0.isWhitespace || $0 == "/" || $0 == ";" }), "bad part \(part)")
        }
        precondition(MIMEType(type.description) == type, "\(type) does not parse back")
        precondition(type.matches(type) && type.matches(.any) && MIMEType.any.matches(type))
    }
    for (name, _) in MIMEType.parameters(in: text) {
        precondition(!name.isEmpty && name == name.lowercased() && !name.contains("="), "bad parameter name \(name)")
    }
    if let charset = MIMEType.charset(inContentType: text) {
        precondition(!charset.isEmpty && charset == charset.lowercased())
    }
    for type in MIMEType.acceptableTypes(fromAcceptHeader: text) {
        precondition(MIMEType(type.description) == type, "accepted \(type) does not parse back")
    }
}

private func checkFileName(_ text: String) {
    for candidate in [SuggestedFileName.fromContentDisposition(text), text] {
        guard let candidate, let name = SuggestedFileName.sanitize(candidate) else { continue }
        precondition(!name.isEmpty)
        precondition(name.utf8.count <= 255, "a file name of \(name.utf8.count) bytes (NAME_MAX is 255)")
        // Scalars, not Characters: ".\u{301}x" does not have the Character prefix "." but is a dot file.
        precondition(name.unicodeScalars.first != ".", "a hidden file name \(name.debugDescription)")
        precondition(!name.unicodeScalars.contains { $0 == "/" || $0 == "\\" || $0 == ":" || $0.value < 0x20 || $0.value == 0x7F },
                     "an unsafe file name \(name.debugDescription)")
    }
}

private func checkRetryAfter(_ text: String) {
    guard let retryAfter = RetryAfter(text, now: now) else { return }
    let delay = retryAfter.delay(from: now)
    precondition(delay >= .zero, "negative delay \(delay)")
    switch retryAfter {
    case .seconds(let seconds):
        precondition(seconds >= 0, "negative seconds \(seconds)")
    case .date(let date):
        precondition(delay <= .seconds(HTTPDate.maximumInterval), "delay \(delay) beyond the cap")
        let formatted = HTTPDate.format(date)
        precondition(HTTPDate.parse(formatted, now: now) == date, "\(date) formats as \(formatted), which does not parse back")
    }
}
