import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The one rule every download file name follows, without I/O: ``DownloadDestination/directory(_:options:)``,
/// ``DownloadDestination/temporary``, the download store, and the `courier` tool's `-O`.
///
/// The candidates, in order: `Content-Disposition`'s `filename*` (RFC 8187: UTF-8 or ISO-8859-1,
/// percent-encoded), its `filename`, the last path component of the response's URL, then of the
/// request's URL. The first one that ``sanitize(_:)`` makes usable wins; when none does, the name
/// is ``fallback``. A name is never empty, never leaves the directory, and always fits `NAME_MAX`.
package enum SuggestedFileName {
    /// The name when no candidate gives one.
    package static let fallback = "download"

    /// The longest file name most file systems accept, in bytes (`NAME_MAX`).
    package static let maximumNameBytes = 255

    /// The name for a download answered by `response` to a request for `requestURL`.
    static func make(response: HTTPURLResponse?, requestURL: URL?) -> String {
        make(contentDisposition: response?.value(forHTTPHeaderField: "Content-Disposition"), urls: [response?.url, requestURL])
    }

    /// The first usable candidate among `contentDisposition`'s names and the last path
    /// components of `urls`, else ``fallback`` (what `courier -J` would name a file).
    package static func make(contentDisposition: String?, urls: [URL?]) -> String {
        let fromHeader = contentDisposition.map(namesInContentDisposition) ?? []
        let fromURLs = urls.compactMap { $0?.lastPathComponent }
        for candidate in fromHeader + fromURLs {
            if let name = sanitize(candidate) { return name }
        }
        return fallback
    }

    /// The names a `Content-Disposition` value suggests, best first: `filename*` decoded, then `filename`.
    static func namesInContentDisposition(_ value: String) -> [String] {
        let parameters = MIMEType.parameters(in: value)
        var names: [String] = []
        if let extended = parameters["filename*"].flatMap(decodeExtendedValue) { names.append(extended) }
        if let plain = parameters["filename"] { names.append(plain) }
        return names
    }

    /// The preferred suggested name of a `Content-Disposition` value, before sanitising.
    static func fromContentDisposition(_ value: String) -> String? {
        namesInContentDisposition(value).first
    }

    /// An RFC 8187 value, `charset'language'percent-encoded`, in UTF-8 or ISO-8859-1; nil when
    /// malformed or in another charset.
    static func decodeExtendedValue(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        switch parts[0].lowercased() {
        case "utf-8":
            return String(parts[2]).removingPercentEncoding
        case "iso-8859-1":
            guard let bytes = percentDecodedBytes(parts[2]) else { return nil }
            return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
        default:
            return nil
        }
    }

    private static func percentDecodedBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `name` made safe to create in a directory, or nil when nothing usable is left:
    /// - only what follows the last `/` or `\` is kept;
    /// - control characters (NUL included), `:` and bidirectional controls are removed;
    /// - whitespace at both ends and dots at the start are removed (no hidden file, no `.` or `..`);
    /// - a Windows device name (`CON`, `NUL`, `COM1`, `LPT1`..., with or without an extension) gets
    ///   a `_` in front, so that the file can be copied anywhere;
    /// - a name over ``maximumNameBytes`` bytes of UTF-8 is cut to fit (``truncated(_:toBytes:)``).
    ///
    /// Works on Unicode scalars, not Characters: a combining mark after `/` or `.` makes one
    /// Character that is neither, yet the file system still sees the separator or the leading dot.
    package static func sanitize(_ name: String) -> String? {
        let separators: Set<Unicode.Scalar> = ["/", "\\"]
        let lastComponent = name.unicodeScalars.split(whereSeparator: separators.contains).last ?? Substring.UnicodeScalarView()
        var scalars = String.UnicodeScalarView(lastComponent.filter(isAllowed))
        while let first = scalars.first, first == "." || first.properties.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.properties.isWhitespace { scalars.removeLast() }
        guard !scalars.isEmpty else { return nil }
        var result = String(scalars)
        if isWindowsDeviceName(result) { result = "_" + result }
        result = truncated(result, toBytes: maximumNameBytes)
        return result.isEmpty ? nil : result
    }

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F: false  // C0 (NUL included) and C1 controls, DEL
        case 0x3A: false  // ":" (a path separator to classic Mac OS APIs, a stream name on NTFS)
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: false  // bidi controls: "gpj.exe" shown as "exe.jpg"
        default: true
        }
    }

    /// `CON`, `PRN`, `AUX`, `NUL`, `COM0`–`COM9`, `LPT0`–`LPT9`, `CONIN$`, `CONOUT$`, in any case,
    /// alone or before an extension (`nul.txt`).
    static func isWindowsDeviceName(_ name: String) -> Bool {
        let stem = name.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        let upper = stem.trimmingCharacters(in: .whitespaces).uppercased()
        if ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"].contains(upper) { return true }
        guard upper.count == 4, upper.hasPrefix("COM") || upper.hasPrefix("LPT"), let digit = upper.last else { return false }
        return digit.isASCII && digit.isNumber
    }

    /// `name` cut to at most `limit` bytes of UTF-8, on a character boundary (a name of two-byte
    /// characters or emoji is cut by its bytes, not its characters). When the first character alone
    /// is longer than `limit` (a letter under hundreds of combining marks), it is cut between its
    /// Unicode scalars, so that a non-empty name never becomes empty (for a `limit` of 4 or more);
    /// the result is always whole scalars, valid UTF-8.
    static func truncated(_ name: String, toBytes limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            if bytes + size > limit {
                if result.isEmpty {
                    for scalar in character.unicodeScalars {
                        let width = UTF8.width(scalar)
                        guard bytes + width <= limit else { break }
                        result.unicodeScalars.append(scalar)
                        bytes += width
                    }
                }
                break
            }
            result.append(character)
            bytes += size
        }
        return result
    }
}
