// Fuzz target: multipart/form-data encoding (MultipartFormData, MultipartEncoder).
//
// The input describes parts (field name, optional file name, optional MIME type, body bytes) and
// an optional caller boundary. Properties: `contentLength` equals the encoded size; an invalid
// boundary throws `.encodingFailed` and a valid one encodes; the encoded body splits back at the
// boundary into exactly the parts given, each with its body unchanged and a header block of the
// expected lines (Content-Disposition with the escaped name and file name, Content-Type when
// given, with CR and LF removed), so no caller string can inject a header or a part.
import Foundation
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let bytes = start.map { Array(UnsafeRawBufferPointer(start: $0, count: count)) } ?? []
    // Fields separated by 0xFF: boundary, then name, fileName, mimeType, body repeated.
    let fields = bytes.split(separator: 0xFF, omittingEmptySubsequences: false).map { Array($0) }
    let boundaryField = fields.first ?? []
    let callerBoundary = boundaryField.first == UInt8(ascii: "B") ? String(decoding: boundaryField.dropFirst(), as: UTF8.self) : nil
    let form = MultipartFormData(boundary: callerBoundary)

    struct Part { let name: String; let fileName: String?; let mimeType: String?; let body: Data }
    var parts: [Part] = []
    var index = 1
    while index < fields.count {
        func field(_ offset: Int) -> [UInt8]? { index + offset < fields.count ? fields[index + offset] : nil }
        let name = String(decoding: field(0) ?? [], as: UTF8.self)
        let fileName = field(1).flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
        let mimeType = field(2).flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
        let body = Data(field(3) ?? [])
        form.append(body, withName: name, fileName: fileName, mimeType: mimeType)
        parts.append(Part(name: name, fileName: fileName, mimeType: mimeType, body: body))
        index += 4
    }
    precondition(form.partCount == parts.count)

    let encoded: Data
    do {
        encoded = try form.encode()
    } catch {
        precondition(!MultipartFormData.isValidBoundary(form.boundary), "a valid boundary failed to encode: \(error)")
        precondition(error.kind == .encodingFailed, "unexpected error \(error)")
        return 0
    }
    precondition(MultipartFormData.isValidBoundary(form.boundary), "an invalid boundary \(form.boundary.debugDescription) encoded")
    do {
        let length = try form.contentLength
        precondition(length == Int64(encoded.count), "contentLength \(length) differs from the encoded size \(encoded.count)")
    } catch { preconditionFailure("contentLength threw: \(error)") }

    // A caller boundary may occur in caller data; only check the structure for the random one.
    guard callerBoundary == nil else { return 0 }
    let body = Array(encoded)
    let delimiter = Array("--\(form.boundary)".utf8)
    let closing = delimiter + Array("--\r\n".utf8)
    precondition(body.count >= closing.count && Array(body.suffix(closing.count)) == closing, "no closing delimiter")
    var chunks = split(body.dropLast(closing.count), at: Array("\r\n".utf8) + delimiter + Array("\r\n".utf8))
    if parts.isEmpty {
        precondition(body == closing, "an empty form is not just the closing delimiter")
        return 0
    }
    // The first chunk starts with the first delimiter line; the last ends with the CRLF before the closing one.
    let opening = delimiter + Array("\r\n".utf8)
    precondition(Array(chunks[0].prefix(opening.count)) == opening, "the body does not start with the boundary")
    chunks[0].removeFirst(opening.count)
    precondition(Array(chunks[chunks.count - 1].suffix(2)) == Array("\r\n".utf8))
    chunks[chunks.count - 1].removeLast(2)
    precondition(chunks.count == parts.count, "\(parts.count) parts encoded as \(chunks.count)")
    for (chunk, part) in zip(chunks, parts) {
        let separator = Array("\r\n\r\n".utf8)
        guard let headerEnd = firstRange(of: separator, in: chunk) else { preconditionFailure("a part without a header block") }
        let headerLines = String(decoding: chunk[..<headerEnd], as: UTF8.self).components(separatedBy: "\r\n")
        var expected = "Content-Disposition: form-data; name=\"\(MultipartFormData.escapeParameter(part.name))\""
        if let fileName = part.fileName { expected += "; filename=\"\(MultipartFormData.escapeParameter(fileName))\"" }
        precondition(headerLines.first == expected, "header \(headerLines.first ?? "") is not \(expected)")
        let type = part.mimeType ?? part.fileName.map(MIMETypes.mimeType(forFileName:))
        precondition(headerLines.count == (type == nil ? 1 : 2), "\(headerLines.count) header lines: \(headerLines)")
        for line in headerLines { precondition(!line.utf8.contains(13) && !line.utf8.contains(10), "a header line holds CR or LF") }
        precondition(!headerLines[0].dropFirst(expected.count).contains("\""), "an unescaped quote")
        precondition(Data(chunk[(headerEnd + separator.count)...]) == part.body, "a part's body changed")
    }
    return 0
}

private func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
    guard needle.count <= haystack.count else { return nil }
    var position = haystack.startIndex
    while position + needle.count <= haystack.endIndex {
        if haystack[position] == needle[0], Array(haystack[position..<(position + needle.count)]) == needle { return position }
        position += 1
    }
    return nil
}

private func split(_ bytes: ArraySlice<UInt8>, at separator: [UInt8]) -> [ArraySlice<UInt8>] {
    var chunks: [ArraySlice<UInt8>] = []
    var rest = bytes
    while let found = firstRange(of: separator, in: rest) {
        chunks.append(rest[rest.startIndex..<found])
        rest = rest[(found + separator.count)...]
    }
    chunks.append(rest)
    return chunks
}
