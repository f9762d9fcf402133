import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Courier's own temporary files: unique names in the session's temporary directory, removed by
/// whoever created them when the request ends.
///
/// The directory is one Courier keeps files in (``KeptFiles``): it must be a directory this
/// process's user owns, or a shared one with the sticky bit (`/tmp`), and is created private
/// (`0700`) when absent. In a directory another user owns, they could swap a download's file for
/// their own before it is moved to its destination, or read it: such a directory fails the
/// request with `.fileSystem`. The names are random and files are created exclusively, so a
/// sticky shared directory leaves nobody else a way to reach them.
package enum TemporaryFiles {
    /// `<system temp>/courier-<user id>`: one per user, since on a shared `/tmp` a directory one
    /// user made private is no use to the next.
    package static let defaultDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(geteuid())", isDirectory: true)

    /// A new, unused path in `directory`, which is created if needed; `.fileSystem` when the
    /// directory is not one Courier may use.
    package static func makeURL(in directory: URL, prefix: String, extension pathExtension: String = "tmp") throws(FileSystemFailure) -> URL {
        try KeptFiles.prepareDirectory(directory, for: "temporary files", sharedSticky: true)
        return directory.appendingPathComponent("\(prefix)-\(UUID().uuidString).\(pathExtension)")
    }

    /// Removes the file at `url` if it is there (its name only: never a link's target, never a
    /// directory); errors are ignored because the file may already be gone.
    package static func remove(_ url: URL?) {
        guard let url else { return }
        KeptFiles.removeName(url.path)
    }
}
