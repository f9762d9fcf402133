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
    /// This directory, under the server-suggested file name (`Content-Disposition`'s `filename*`,
    /// then its `filename`, then the URL's last path component, else `download`), made safe: no path
    /// separators, no `..`, no hidden-file prefix, no control characters, at most 255 bytes, never
    /// empty (see <doc:UploadsAndDownloads>).
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

    /// Replace a file already at the destination (otherwise that is a `.fileSystem` error): a
    /// regular file, a link (never what it points to) or a FIFO is removed and the download takes
    /// its name. A directory, a device (`/dev/null`) or a socket is never replaced: `.fileSystem`.
    public static let removePreviousFile = DownloadOptions(rawValue: 1 << 0)
    /// Create missing directories on the way (otherwise a missing directory is a `.fileSystem` error).
    public static let createIntermediateDirectories = DownloadOptions(rawValue: 1 << 1)
}
