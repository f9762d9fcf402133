import CourierSupport
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An upload body made ready to send, once per request: data as it is, regular files by length
/// (``fileBody(_:)`` says which files and how), and
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
            body = try Self.fileBody(url)
            temporaryFile = nil
        case .stream(let stream):
            body = .stream(stream)
            temporaryFile = nil
        case .multipart(let form):
            let length = try form.contentLength
            if length <= MultipartFormData.encodingMemoryThreshold {
                body = .data(try form.encode())
                temporaryFile = nil
            } else {
                let url = try CourierError.mappingFileSystem { () throws(FileSystemFailure) in
                    try TemporaryFiles.makeURL(in: temporaryDirectory, prefix: "multipart")
                }
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

    /// The most a file that reports size 0 (`/proc/self/status` and the like) may hold: such a
    /// file is read whole and sent from memory.
    static let unsizedFileLimit = 4 << 20

    /// The body for an upload of the file at `url`, following symbolic links:
    /// - a regular file is sent with its size as `Content-Length`;
    /// - a regular file that reports size 0 (a `/proc` file) is read into memory, up to
    ///   ``unsizedFileLimit`` bytes, and sent as what it held;
    /// - anything else (a directory, a FIFO, a device, a socket) is refused with `.fileSystem`,
    ///   since its bytes cannot be announced and some never end.
    ///
    /// Nothing here blocks on a FIFO: the file type comes from `stat(2)` and files are opened
    /// with `O_NONBLOCK`.
    static func fileBody(_ url: URL) throws -> TransportBody {
        let path = url.path
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw UploadFile.failure("The upload file \(path) cannot be read", errno: errno, url: url)
        }
        let type = info.st_mode & S_IFMT
        guard type == S_IFREG else {
            let what =
                switch type {
                case S_IFDIR: "a directory"
                case S_IFIFO: "a FIFO"
                case S_IFCHR: "a character device"
                case S_IFBLK: "a block device"
                case S_IFSOCK: "a socket"
                default: "not a regular file"
                }
            throw CourierError(
                .fileSystem, "The upload file \(path) is \(what); only regular files can be uploaded (read it into Data first).", url: url)
        }
        let descriptor = UploadFile.openNonBlocking(path)
        guard descriptor >= 0 else {
            throw UploadFile.failure("The upload file \(path) cannot be read", errno: errno, url: url)
        }
        defer { UploadFile.closeDescriptor(descriptor) }
        if info.st_size > 0 { return .file(url, length: Int64(info.st_size)) }
        return .data(try readUnsized(descriptor, path: path, url: url))
    }

    /// Reads a file that reports size 0 to its end, refusing one larger than ``unsizedFileLimit``.
    private static func readUnsized(_ descriptor: Int32, path: String, url: URL) throws -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            var count: Int
            repeat {
                count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            } while count < 0 && errno == EINTR
            if count < 0 { throw UploadFile.failure("The upload file \(path) cannot be read", errno: errno, url: url) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= unsizedFileLimit else {
                throw CourierError(
                    .fileSystem, "The upload file \(path) reports size 0 but holds more than \(unsizedFileLimit) bytes; it is not uploaded.", url: url
                )
            }
        }
    }
}

extension RequestEngine {
    /// Whether this exchange sends the upload body: the request has one and no redirect dropped it
    /// (301/302 after POST and 303 turn the method into GET without a body).
    var sendsUpload: Bool { source.upload != nil && !machine.redirectDroppedBody }

    /// The upload body for an exchange, preparing it on first use; `nil` for requests without one
    /// and for redirects that turned the method into GET.
    func preparedUploadBody(for request: URLRequest) throws -> TransportBody? {
        guard let upload = source.upload, sendsUpload else { return nil }
        if source.fullDuplex, session.transportName == "urlSession" {
            throw CourierError(
                .invalidConfiguration,
                "The URLSession transport cannot stream a response while the request body is still being sent "
                    + "(FoundationNetworking delivers the response after the whole body); use the curl transport for "
                    + "full-duplex streams.", url: request.url)
        }
        if let prepared = preparedUpload { return prepared.body }
        let prepared = try PreparedUpload(upload, temporaryDirectory: session.configuration.temporaryDirectory)
        preparedUpload = prepared
        return prepared.body
    }
}
