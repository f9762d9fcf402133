import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `httpBodyStream` a URLSession task reads a ``BodyStream`` through: `read` waits for the
/// stream's reader thread (URLSession has no way to be told "later"; answering "no bytes" would
/// end the body early), and a failed stream answers -1, which makes URLSession abort the upload.
final class URLSessionBodyInputStream: InputStream {
    private let body: BodyStream
    private var status: Stream.Status = .notOpen

    init(_ body: BodyStream) {
        self.body = body
        super.init(data: Data())
    }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { body.failure }

    override func open() { status = .open }

    override func close() { status = .closed }

    /// True until the end or a failure was read: URLSession takes "no bytes available" as the end.
    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        let count = body.readBlocking(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
        if count == 0 { status = .atEnd }
        if count < 0 { status = .error }
        return count
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
        length: UnsafeMutablePointer<Int>
    ) -> Bool { false }
}
