import Foundation
import CourierLocking

/// A `multipart/form-data` body (RFC 7578) built from data, text and file parts.
///
/// ```swift
/// let form = MultipartFormData()
/// form.append(Data("bob".utf8), withName: "name")
/// form.append(fileURL: avatar, withName: "avatar", fileName: "a.jpg", mimeType: "image/jpeg")
/// request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
/// let body = try form.encode()
/// ```
/// File parts are not read when appended: ``contentLength`` only looks up their sizes, and
/// ``writeEncodedData(to:)`` streams them in 1 MiB chunks, so a large file never sits in memory.
/// A file part that is missing, unreadable or a directory makes ``contentLength``, ``encode()``
/// and ``writeEncodedData(to:)`` throw `.fileSystem` naming the file.
///
/// Safe to use from several tasks at once; parts keep the order in which `append` calls ran.
public final class MultipartFormData: Sendable {
    /// Bodies up to this many bytes are encoded in memory; larger ones go to a temporary file.
    public static let encodingMemoryThreshold: Int64 = 10_000_000

    /// The boundary that separates the parts, without the leading `--`.
    public let boundary: String

    private let parts = Locked<[MultipartBodyPart]>([])

    /// Creates an empty form with `boundary`, or with a random one like `courier.boundary.<32 hex digits>`.
    ///
    /// A caller-chosen boundary must follow RFC 2046 (1–70 characters from letters, digits and
    /// `'()+_,-./:=?` or space, not ending in a space); otherwise encoding throws `.encodingFailed`.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
    }

    /// `multipart/form-data; boundary=…`, for the request's `Content-Type` header.
    public var contentType: String {
        let needsQuotes = boundary.isEmpty || boundary.utf8.contains { !Self.isTokenByte($0) }
        return "multipart/form-data; boundary=" + (needsQuotes ? "\"\(boundary)\"" : boundary)
    }

    // MARK: Adding parts

    /// Appends a part holding `data`.
    ///
    /// With a `fileName` the part is a file upload; its `Content-Type` is `mimeType`, or is
    /// looked up from the file name's extension (`application/octet-stream` when unknown).
    /// Without a file name the part only gets a `Content-Type` when `mimeType` is given.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let type = mimeType ?? fileName.map(MIMETypes.mimeType(forFileName:))
        add(MultipartBodyPart(headers: headers(name: name, fileName: fileName, mimeType: type), body: .data(data)))
    }

    /// Appends a text field, encoded as UTF-8, with no `Content-Type` of its own.
    public func append(_ text: String, withName name: String) {
        append(Data(text.utf8), withName: name)
    }

    /// Appends the contents of a file, read only when the form is encoded.
    ///
    /// `fileName` defaults to the URL's last path component; `mimeType` defaults to the type for
    /// the file name's extension, or `application/octet-stream`.
    public func append(fileURL: URL, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let fileName = fileName ?? fileURL.lastPathComponent
        let type = mimeType ?? MIMETypes.mimeType(forFileName: fileName)
        add(MultipartBodyPart(headers: headers(name: name, fileName: fileName, mimeType: type), body: .file(fileURL, name: name)))
    }

    private func add(_ part: MultipartBodyPart) {
        parts.withLock { $0.append(part) }
    }

    /// The number of parts appended so far.
    public var partCount: Int {
        parts.withLock { $0.count }
    }

    // MARK: Encoding

    /// The exact length of the encoded body in bytes; file parts are measured, not read.
    public var contentLength: Int64 {
        get throws(CourierError) {
            try makeEncoder().contentLength()
        }
    }

    /// The whole encoded body in memory.
    public func encode() throws(CourierError) -> Data {
        try makeEncoder().encodeInMemory()
    }

    /// Writes the encoded body to a new file at `fileURL`, streaming file parts in 1 MiB chunks.
    ///
    /// Throws `.fileSystem` if the destination already exists or cannot be written, or if a file
    /// part changes size while it is read (the written length would no longer match
    /// ``contentLength``); a partly written destination is removed.
    public func writeEncodedData(to fileURL: URL) throws(CourierError) {
        try makeEncoder().writeFile(to: fileURL)
    }

    /// A snapshot of the parts, ready to measure and write; fails on an invalid boundary.
    func makeEncoder() throws(CourierError) -> MultipartEncoder {
        guard Self.isValidBoundary(boundary) else {
            throw CourierError(
                .encodingFailed,
                "The multipart boundary \"\(boundary)\" is not valid: RFC 2046 allows 1–70 characters from letters, digits, space and '()+_,-./:=? and no trailing space."
            )
        }
        return MultipartEncoder(parts: parts.withLock { $0 }, closing: Data("--\(boundary)--\r\n".utf8))
    }

    // MARK: Headers

    private func headers(name: String, fileName: String?, mimeType: String?) -> Data {
        var text = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escapeParameter(name))\""
        if let fileName { text += "; filename=\"\(Self.escapeParameter(fileName))\"" }
        text += "\r\n"
        if let mimeType {
            // A CR or LF would end the header early and let the caller's string inject new headers.
            let safeType = mimeType.filter { $0 != "\r" && $0 != "\n" && $0 != "\r\n" }
            text += "Content-Type: \(safeType)\r\n"
        }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// Escapes a quoted `name` or `filename` value as RFC 7578 and browsers do: `"` `%22`, CR `%0D`, LF `%0A`.
    static func escapeParameter(_ value: String) -> String {
        var result = ""
        result.reserveCapacity(value.utf8.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = [generator.next(), generator.next()].map { (word: UInt64) -> String in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }
        return "courier.boundary." + digits.joined()
    }

    /// Whether `boundary` follows RFC 2046's `boundary` grammar.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                true
            default:
                "'()+_,-./:=? ".utf8.contains(byte)
            }
        }
    }

    /// Whether `byte` may appear in an unquoted header parameter value (an RFC 9110 token).
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}

/// One part of a form: its header block (starting with the boundary line) and its body.
struct MultipartBodyPart: Sendable {
    /// Where a part's bytes come from.
    enum Body: Sendable {
        case data(Data)
        /// A file, with the part's field name for error messages.
        case file(URL, name: String)
    }

    let headers: Data
    let body: Body
}
