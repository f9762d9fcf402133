import Foundation

extension Session {
    /// Where resumable downloads keep their partial bytes and journals.
    public var downloadStore: DownloadStore {
        parts.part(DownloadStore.self) { DownloadStore(directory: DownloadStore.defaultDirectory) }
    }
}
