import Foundation

/// Why a file operation of the support code failed. This target cannot name Courier's
/// `CourierError`, so Courier maps this at its boundary to a `.fileSystem` error with the same
/// message, underlying error and URL (`CourierError.init(_:)` in Courier's Model/).
package struct FileSystemFailure: Error, Sendable, Equatable {
    /// The sentence for `CourierError.message`, naming the file and what was wrong with it.
    package let message: String
    /// The system error behind it, when there is one.
    package let underlyingError: POSIXError?
    /// The file or directory concerned.
    package let url: URL

    package init(_ message: String, underlyingError: POSIXError? = nil, url: URL) {
        self.message = message
        self.underlyingError = underlyingError
        self.url = url
    }
}
