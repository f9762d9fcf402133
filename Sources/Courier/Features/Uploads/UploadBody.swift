import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An upload body made ready to send, once per request: data as it is, files by length, and
/// multipart encoded in memory or, above ``MultipartFormData/encodingMemoryThreshold``, to a
/// temporary file that ``discard()`` removes.
final class PreparedUpload {
    let body: TransportBody
    private let temporaryFile: URL?

    init(_ source: UploadSource, temporaryDirectory: URL) throws {
        switch source {
        case .data(let data):
            body = .data(data)
            temporaryFile = nil
        case .file(let url):
            body = .file(url, length: try Self.length(of: url))
            temporaryFile = nil
        case .multipart(let form):
            let length = try form.contentLength
            if length <= MultipartFormData.encodingMemoryThreshold {
                body = .data(try form.encode())
                temporaryFile = nil
            } else {
                let url = TemporaryFiles.makeURL(in: temporaryDirectory, prefix: "multipart")
                do {
                    try form.writeEncodedData(to: url)
                } catch {
                    TemporaryFiles.remove(url)
                    throw error
                }
                body = .file(url, length: length)
                temporaryFile = url
            }
        }
    }

    /// Removes the temporary file, if one was written.
    func discard() {
        TemporaryFiles.remove(temporaryFile)
    }

    /// The size of a regular file; `.fileSystem` if it is missing, unreadable or a directory.
    static func length(of url: URL) throws -> Int64 {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            throw CourierError(.fileSystem, "The upload file \(url.path) does not exist or is a directory.", url: url)
        }
        guard FileManager.default.isReadableFile(atPath: url.path),
              let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber else {
            throw CourierError(.fileSystem, "The upload file \(url.path) cannot be read.", url: url)
        }
        return size.int64Value
    }
}

extension RequestEngine {
    /// Whether this exchange sends the upload body: the request has one and no redirect dropped it
    /// (301/302 after POST and 303 turn the method into GET without a body).
    var sendsUpload: Bool { source.upload != nil && !redirectDroppedBody }

    /// The upload body for an exchange, preparing it on first use; `nil` for requests without one
    /// and for redirects that turned the method into GET.
    func preparedUploadBody(for request: URLRequest) throws -> TransportBody? {
        guard let upload = source.upload, sendsUpload else { return nil }
        if let prepared = preparedUpload { return prepared.body }
        let prepared = try PreparedUpload(upload, temporaryDirectory: session.configuration.temporaryDirectory)
        preparedUpload = prepared
        return prepared.body
    }
}
