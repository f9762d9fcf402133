import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Measures and writes a snapshot of a form's parts; the file I/O half of ``MultipartFormData``.
struct MultipartEncoder {
    /// How much of a file part is read at a time.
    static let chunkSize = 1 << 20

    let parts: [MultipartBodyPart]
    /// `--boundary--\r\n`.
    let closing: Data

    private static let lineBreak = Data("\r\n".utf8)

    /// The encoded length, with every file part's size looked up (and its readability checked).
    func contentLength() throws(CourierError) -> Int64 {
        try measure().total
    }

    /// The sizes of the file parts, in part order, and the total encoded length.
    func measure() throws(CourierError) -> (fileSizes: [Int64], total: Int64) {
        var total = Int64(closing.count)
        var fileSizes: [Int64] = []
        for part in parts {
            total += Int64(part.headers.count + Self.lineBreak.count)
            switch part.body {
            case .data(let data):
                total += Int64(data.count)
            case .file(let url, let name):
                let file = try OpenFile(url, partName: name)
                file.closeFile()
                fileSizes.append(file.size)
                total += file.size
            }
        }
        return (fileSizes, total)
    }

    /// The whole body in one `Data`.
    func encodeInMemory() throws(CourierError) -> Data {
        let (fileSizes, total) = try measure()
        guard let capacity = Int(exactly: total) else {
            throw CourierError(.encodingFailed, "The multipart body is \(total) bytes, too large to hold in memory.")
        }
        var output = Data(capacity: capacity)
        try emit(fileSizes: fileSizes) { (chunk: UnsafeRawBufferPointer) throws(CourierError) in
            output.append(contentsOf: chunk)
        }
        return output
    }

    /// Streams the body into a new file; on failure the partial file is removed.
    func writeFile(to fileURL: URL) throws(CourierError) {
        let (fileSizes, _) = try measure()
        guard fileURL.isFileURL else {
            throw CourierError(.fileSystem, "Cannot write the multipart body to \(fileURL.absoluteString): it is not a file URL.", url: fileURL)
        }
        let path = fileURL.path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let code = errno
            let reason = code == EEXIST ? "the file already exists" : Self.describe(errno: code)
            throw CourierError(
                .fileSystem, "Cannot create \(path) for the multipart body: \(reason).",
                underlyingError: Self.posixError(code), url: fileURL)
        }
        do throws(CourierError) {
            try emit(fileSizes: fileSizes) { (chunk: UnsafeRawBufferPointer) throws(CourierError) in
                try Self.writeAll(chunk, to: descriptor, path: path)
            }
        } catch {
            _ = close(descriptor)
            unlink(path)
            throw error
        }
        // Closed once whatever it returns: a second close could hit a descriptor another thread
        // has opened since.
        guard close(descriptor) == 0 else {
            let code = errno
            unlink(path)
            throw CourierError(
                .fileSystem, "Could not finish writing \(path): \(Self.describe(errno: code)).",
                underlyingError: Self.posixError(code), url: fileURL)
        }
    }

    /// Produces the encoded bytes in order, reading each file part in chunks into one reused buffer.
    func emit(fileSizes: [Int64], into sink: (UnsafeRawBufferPointer) throws(CourierError) -> Void) throws(CourierError) {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: Self.chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var fileIndex = 0
        for part in parts {
            try Self.emit(part.headers, into: sink)
            switch part.body {
            case .data(let data):
                try Self.emit(data, into: sink)
            case .file(let url, let name):
                try Self.copyFile(url, partName: name, expectedSize: fileSizes[fileIndex], buffer: buffer, into: sink)
                fileIndex += 1
            }
            try Self.emit(Self.lineBreak, into: sink)
        }
        try Self.emit(closing, into: sink)
    }

    private static func emit(_ data: Data, into sink: (UnsafeRawBufferPointer) throws(CourierError) -> Void) throws(CourierError) {
        let result: Result<Void, CourierError> = data.withUnsafeBytes { raw in
            Result { () throws(CourierError) in try sink(raw) }
        }
        try result.get()
    }

    /// Copies exactly `expectedSize` bytes of a file, failing if it turns out shorter or longer.
    private static func copyFile(
        _ url: URL, partName: String, expectedSize: Int64, buffer: UnsafeMutableRawBufferPointer,
        into sink: (UnsafeRawBufferPointer) throws(CourierError) -> Void
    ) throws(CourierError) {
        let file = try OpenFile(url, partName: partName)
        defer { file.closeFile() }
        var copied: Int64 = 0
        while copied < expectedSize {
            let wanted = Int(min(Int64(buffer.count), expectedSize - copied))
            let count = try file.readChunk(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<wanted]))
            if count == 0 {
                throw CourierError(
                    .fileSystem,
                    "The file \(url.path) for multipart part \"\(partName)\" shrank while it was being encoded: expected \(expectedSize) bytes, found \(copied).",
                    url: url)
            }
            try sink(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            copied += Int64(count)
        }
        if try file.readChunk(into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<1])) > 0 {
            throw CourierError(
                .fileSystem,
                "The file \(url.path) for multipart part \"\(partName)\" grew while it was being encoded: expected \(expectedSize) bytes.",
                url: url)
        }
    }

    private static func writeAll(_ chunk: UnsafeRawBufferPointer, to descriptor: Int32, path: String) throws(CourierError) {
        var offset = 0
        while offset < chunk.count {
            let written = write(descriptor, chunk.baseAddress.map { $0 + offset }, chunk.count - offset)
            if written < 0 {
                let code = errno
                if code == EINTR { continue }
                throw CourierError(
                    .fileSystem, "Could not write the multipart body to \(path): \(describe(errno: code)).",
                    underlyingError: posixError(code))
            }
            offset += written
        }
    }

    static func describe(errno code: Int32) -> String {
        String(cString: strerror(code))
    }

    static func posixError(_ code: Int32) -> (any Error)? {
        POSIXErrorCode(rawValue: code).map { POSIXError($0) }
    }
}

/// A file part opened for reading, with its size taken from the open descriptor.
private struct OpenFile {
    let url: URL
    let descriptor: Int32
    let size: Int64

    /// Opens `url` for reading; a missing, unreadable or non-regular file throws `.fileSystem`.
    init(_ url: URL, partName: String) throws(CourierError) {
        let subject = "The file \(url.isFileURL ? url.path : url.absoluteString) for multipart part \"\(partName)\""
        guard url.isFileURL else {
            throw CourierError(.fileSystem, "\(subject) is not a file URL.", url: url)
        }
        // O_NONBLOCK: a FIFO with no writer would block open(2); non-regular files are refused below.
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            let reason =
                switch code {
                case ENOENT: "does not exist"
                case EACCES, EPERM: "cannot be read (permission denied)"
                default: "cannot be opened: \(MultipartEncoder.describe(errno: code))"
                }
            throw CourierError(.fileSystem, "\(subject) \(reason).", underlyingError: MultipartEncoder.posixError(code), url: url)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let code = errno
            _ = close(descriptor)
            throw CourierError(
                .fileSystem, "\(subject) cannot be inspected: \(MultipartEncoder.describe(errno: code)).",
                underlyingError: MultipartEncoder.posixError(code), url: url)
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            _ = close(descriptor)
            let what = info.st_mode & S_IFMT == S_IFDIR ? "is a directory" : "is not a regular file"
            throw CourierError(.fileSystem, "\(subject) \(what).", url: url)
        }
        let flags = fcntl(descriptor, F_GETFL)
        if flags >= 0 { _ = fcntl(descriptor, F_SETFL, flags & ~O_NONBLOCK) }
        self.url = url
        self.descriptor = descriptor
        self.size = Int64(info.st_size)
    }

    /// Reads up to `buffer.count` bytes, retrying on `EINTR`; 0 means end of file.
    func readChunk(into buffer: UnsafeMutableRawBufferPointer) throws(CourierError) -> Int {
        while true {
            let count = read(descriptor, buffer.baseAddress, buffer.count)
            if count >= 0 { return count }
            let code = errno
            if code == EINTR { continue }
            throw CourierError(
                .fileSystem, "Could not read \(url.path): \(MultipartEncoder.describe(errno: code)).",
                underlyingError: MultipartEncoder.posixError(code), url: url)
        }
    }

    func closeFile() {
        _ = close(descriptor)
    }
}
