import Foundation

/// Splits a recorded `multipart/form-data` body into its parts without copying their contents.
enum Multipart {
    /// One part: its header block as text, and where its content lies in the body.
    struct Part {
        let headers: String
        let content: Range<Int>
    }

    /// The boundary parameter of a `multipart/form-data; boundary=...` content type.
    static func boundary(of contentType: String?) -> String? {
        guard let contentType, let range = contentType.range(of: "boundary=") else { return nil }
        return String(contentType[range.upperBound...]).trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
    }

    /// The parts of `body`, or nil if it does not end with the closing delimiter.
    static func parts(of body: Data, boundary: String) -> [Part]? {
        let delimiter = Data("--\(boundary)".utf8)
        let separator = Data("\r\n\r\n".utf8)
        var parts: [Part] = []
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        while true {
            let rest = body[cursor...]
            if rest.starts(with: Data("--\r\n".utf8)) { return parts }
            guard rest.starts(with: Data("\r\n".utf8)),
                let headerEnd = body.range(of: separator, in: cursor..<body.endIndex),
                let next = body.range(of: Data("\r\n".utf8) + delimiter, in: headerEnd.upperBound..<body.endIndex)
            else {
                return nil
            }
            let headers = String(decoding: body[(cursor + 2)..<headerEnd.lowerBound], as: UTF8.self)
            parts.append(Part(headers: headers, content: (headerEnd.upperBound - body.startIndex)..<(next.lowerBound - body.startIndex)))
            cursor = next.upperBound
        }
    }
}
