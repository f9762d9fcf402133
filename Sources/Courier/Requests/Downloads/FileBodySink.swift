import CourierSupport
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response body to a Courier temporary file as it arrives, then moves it to its
/// destination when the request succeeds. Memory stays at one chunk: each chunk is written
/// before it is acknowledged to the transport.
final class FileBodySink: ResponseBodySink {
    let destination: DownloadDestination
    let temporaryDirectory: URL
    let integrity: DownloadIntegrity?
    private var writer: FileWriter?
    private var temporaryURL: URL?
    private var finalURL: URL?

    init(destination: DownloadDestination, temporaryDirectory: URL, integrity: DownloadIntegrity? = nil) {
        self.destination = destination
        self.temporaryDirectory = temporaryDirectory
        self.integrity = integrity
    }

    var kind: BodyKind { .file }

    func begin(_ head: ResponseHead, method: HTTPMethod) throws -> BodyDisposition {
        try openTemporaryFile()
        return .store(offset: 0, total: head.hasNoBody(for: method) ? 0 : head.expectedContentLength)
    }

    private func openTemporaryFile() throws {
        writer?.close()
        let url =
            try temporaryURL
            ?? CourierError.mappingFileSystem { () throws(FileSystemFailure) in
                try TemporaryFiles.makeURL(in: temporaryDirectory, prefix: "download")
            }
        temporaryURL = url
        writer = try FileWriter(url: url, truncatingTo: 0, what: "the download's temporary file")
    }

    func append(_ data: Data, from transfer: any TransportTransfer) throws {
        try writer?.write(data)
        transfer.acknowledge(data.count)
    }

    var body: RequestCompletion.Body { .file(finalURL ?? temporaryURL) }
    var cancelledBody: RequestCompletion.Body { .file(nil) }

    func finalize(response: LazyHTTPResponse?) throws -> RequestCompletion.Body {
        if temporaryURL == nil { try openTemporaryFile() }
        writer?.close()
        guard let temporaryURL else { return .file(nil) }
        try integrity?.verify(temporaryURL)
        let (destinationURL, options) = try destination.resolve(
            temporaryURL: temporaryURL, response: response?.httpResponse, requestURL: response?.head.url)
        try moveDownload(temporaryURL, to: destinationURL, options: options)
        self.temporaryURL = nil
        finalURL = destinationURL
        return .file(destinationURL)
    }

    func discard() {
        writer?.close()
        TemporaryFiles.remove(temporaryURL)
        temporaryURL = nil
    }
}
