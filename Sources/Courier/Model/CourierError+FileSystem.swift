import CourierSupport
import Foundation

extension CourierError {
    /// The `.fileSystem` error for a failed file operation of CourierSupport, with its message,
    /// underlying error and URL.
    init(_ failure: FileSystemFailure) {
        self.init(.fileSystem, failure.message, underlyingError: failure.underlyingError, url: failure.url)
    }

    /// Runs `body`, a file operation of CourierSupport, reporting its failure as `.fileSystem`.
    static func mappingFileSystem<T>(_ body: () throws(FileSystemFailure) -> T) throws(CourierError) -> T {
        do {
            return try body()
        } catch {
            throw CourierError(error)
        }
    }
}
