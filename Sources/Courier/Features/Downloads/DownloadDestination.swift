import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a finished download goes. The file is written to a Courier temporary file first and
/// moved here only when the request succeeds; on failure or cancel nothing appears here.
public enum DownloadDestination: Sendable {
    /// A new file in the system temporary directory; it is yours to move or delete.
    case temporary
    /// This exact file.
    case file(URL, options: DownloadOptions = [])
    /// This directory, under the server-suggested file name (`Content-Disposition`, else the URL's
    /// last path component), made safe: no path separators, no `..`, no hidden-file prefix.
    case directory(URL, options: DownloadOptions = [])
    /// Decide from the temporary file and the response.
    case custom(@Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse) throws -> (URL, DownloadOptions))

    /// The final URL for a download answered by `response`.
    func resolve(temporaryURL: URL, response: HTTPURLResponse?, requestURL: URL?) throws -> (URL, DownloadOptions) {
        switch self {
        case .temporary:
            let name = SuggestedFileName.make(response: response, requestURL: requestURL)
            let unique = SuggestedFileName.truncated("courier-\(UUID().uuidString)-\(name)", toBytes: SuggestedFileName.maximumNameBytes)
            return (FileManager.default.temporaryDirectory.appendingPathComponent(unique), [])
        case .file(let url, let options):
            return (url, options)
        case .directory(let directory, let options):
            let name = SuggestedFileName.make(response: response, requestURL: requestURL)
            return (directory.appendingPathComponent(name, isDirectory: false), options)
        case .custom(let decide):
            guard let response else {
                throw CourierError(.fileSystem, "A custom download destination needs a response, and there was none.")
            }
            return try decide(temporaryURL, response)
        }
    }
}

/// How a download is moved to its destination.
public struct DownloadOptions: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates options from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Replace a file already at the destination (otherwise that is a `.fileSystem` error).
    public static let removePreviousFile = DownloadOptions(rawValue: 1 << 0)
    /// Create missing directories on the way (otherwise a missing directory is a `.fileSystem` error).
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1 << 1)
}

/// A safe file name for a download, from `Content-Disposition` or the URL.
enum SuggestedFileName {
    static let fallback = "download"

    static func make(response: HTTPURLResponse?, requestURL: URL?) -> String {
        if let disposition = response?.value(forHTTPHeaderField: "Content-Disposition"),
            let name = fromContentDisposition(disposition).flatMap(sanitize)
        {
            return name
        }
        if let last = (response?.url ?? requestURL)?.lastPathComponent, let name = sanitize(last), name != "/" {
            return name
        }
        return fallback
    }

    /// `filename*` (RFC 5987, UTF-8 percent-encoded) wins over `filename` (RFC 6266).
    static func fromContentDisposition(_ value: String) -> String? {
        let parameters = MIMEType.parameters(in: value)
        if let extended = parameters["filename*"] {
            let parts = extended.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
            if parts.count == 3, let decoded = String(parts[2]).removingPercentEncoding { return decoded }
        }
        return parameters["filename"]
    }

    /// Keeps only the last path component and removes anything that could escape a directory or hide the file.
    ///
    /// Works on Unicode scalars, not Characters: a combining mark after `/` or `.` makes one
    /// Character that is neither, yet the file system still sees the separator or the leading dot.
    static func sanitize(_ name: String) -> String? {
        // Split, filter and strip by scalar: a combining mark after "/" or "." forms one Character
        // with it, which a Character-wise filter would keep.
        let separators: Set<Unicode.Scalar> = ["/", "\\"]
        let lastComponent = name.unicodeScalars.split(whereSeparator: separators.contains).last ?? Substring.UnicodeScalarView()
        var scalars = String.UnicodeScalarView(lastComponent.filter { $0.value >= 0x20 && $0.value != 0x7F && $0 != ":" })
        scalars = String(scalars).trimmingCharacters(in: .whitespaces).unicodeScalars
        while scalars.first == "." { scalars.removeFirst() }
        guard !scalars.isEmpty else { return nil }
        return truncated(String(scalars), toBytes: maximumNameBytes)
    }

    /// The longest file name most file systems accept, in bytes (`NAME_MAX`).
    static let maximumNameBytes = 255

    /// `name` cut to at most `limit` UTF-8 bytes, on a character boundary (a name of two-byte
    /// characters or emoji is cut by its bytes, not its characters).
    static func truncated(_ name: String, toBytes limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        var result = ""
        var bytes = 0
        for character in name {
            let size = character.utf8.count
            guard bytes + size <= limit else { break }
            result.append(character)
            bytes += size
        }
        return result
    }
}
