import Foundation
import Courier

/// One URL of the command line and where its body goes.
///
/// As in curl, the `-o FILE` and `-O` options pair with the URLs in order: the first goes with
/// the first URL, and so on; a URL left without one writes to standard output (or gets `-O` with
/// `--remote-name-all`). `--output-dir DIR` is put in front of a relative name.
struct TransferTarget: Equatable, Sendable {
    /// The URL.
    var url: URL
    /// The file; nil for standard output.
    var output: String?
    /// `-O`: the name came from the URL (with `-J`, the response's `Content-Disposition` may replace it).
    var remoteName = false

    /// The targets of `urls` with the outputs `parsed` gives.
    ///
    /// - Throws: ``UsageError`` when there are more outputs than URLs, or `-O` for a URL without a
    ///   file name (exit 23, curl's "Remote file name has no length").
    static func targets(for urls: [URL], parsed: ParsedArguments, remoteHeaderName: Bool = false) throws(UsageError) -> [TransferTarget] {
        let outputs: [String?] = parsed.options.compactMap { occurrence in
            switch occurrence.id {
            case "output": return .some(occurrence.value)
            case "remote-name": return .some(nil)
            default: return nil
            }
        }
        guard outputs.count <= urls.count else {
            throw UsageError(
                "\(outputs.count) -o/-O options for \(urls.count) URL\(urls.count == 1 ? "" : "s") (each -o or -O goes with one URL, in order)"
            )
        }
        let directory = parsed.value("output-dir")
        if directory?.isEmpty == true { throw UsageError("--output-dir needs a directory") }
        let allRemote = parsed.has("remote-name-all")
        var targets: [TransferTarget] = []
        for (index, url) in urls.enumerated() {
            var target = TransferTarget(url: url)
            let given: String?? = index < outputs.count ? outputs[index] : (allRemote ? .some(nil) : nil)
            switch given {
            case .none:
                break
            case .some(.none):
                target.output = try prefixed(remoteName(of: url), directory: directory)
                target.remoteName = true
            case .some(.some(let path)):
                guard !path.isEmpty else { throw UsageError("-o needs a file name") }
                target.output = path == "-" ? nil : prefixed(path, directory: directory)
            }
            targets.append(target)
        }
        if remoteHeaderName, !targets.contains(where: \.remoteName) {
            throw UsageError("-J/--remote-header-name needs -O (the file's name comes from the response)")
        }
        return targets
    }

    /// `-O`'s file name: the last segment of the URL's path as written (percent-escapes kept, as
    /// curl keeps them, so `%2F` never becomes a separator), made safe by the library's rule for
    /// download names (no separators, control characters or leading dots, at most 255 bytes).
    ///
    /// - Throws: ``UsageError`` (exit 23, curl's "Remote file name has no length") when nothing
    ///   usable is left (`http://host/`, `/..`).
    static func remoteName(of url: URL) throws(UsageError) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        let segment = path.split(separator: "/", omittingEmptySubsequences: false).last.map(String.init) ?? ""
        guard segment != "..", let name = SuggestedFileName.sanitize(segment) else {
            throw UsageError(
                "Remote file name has no length: -O needs a URL ending in a file name (use -o FILE)",
                exitCode: .writeError)
        }
        return name
    }

    private static func prefixed(_ path: String, directory: String?) -> String {
        guard let directory, !path.hasPrefix("/") else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }
}
