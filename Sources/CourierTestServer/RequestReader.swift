import Foundation

/// Reads requests from one connection's socket: buffering, head detection, and bodies framed by
/// Content-Length or chunked encoding.
struct RequestReader {
    /// The outcome of reading a request head.
    enum HeadResult {
        case head(ArraySlice<UInt8>)
        /// The client closed (or the server shut down) between requests.
        case idleClose
        /// The connection ended partway through a head.
        case truncated(ArraySlice<UInt8>)
        case tooLarge
    }

    /// A body read completely, or why it could not be.
    struct BodyResult {
        var body = Data()
        var size: Int64 = 0
        var chunkSizes: [Int]?
        var trailers: HeaderFields = [:]
        var error: RequestParseError?
        /// Whether the failure left the connection unusable without an answer (end of stream).
        var connectionLost = false
    }

    private static let readSize = 64 * 1024
    private static let maxLineLength = 8 * 1024

    private let fd: Int32
    private let maxHeadBytes: Int
    private let recordLimit: Int
    /// Received bytes live in `storage[start..<end]`; the array's count is its capacity, so
    /// reading never resizes it in the common case.
    private var storage: [UInt8] = []
    /// Sees each piece of a body as it is read (a full-duplex echo); returning false ends the
    /// body as if the connection closed.
    var observer: ((ArraySlice<UInt8>) -> Bool)?
    private var start = 0
    private var end = 0

    init(fd: Int32, maxHeadBytes: Int, recordLimit: Int) {
        self.fd = fd
        self.maxHeadBytes = maxHeadBytes
        self.recordLimit = recordLimit
    }

    private var available: Int { end - start }

    /// Reads more bytes from the socket; false at end of stream or on error.
    private mutating func fill() -> Bool {
        if start == end {
            start = 0
            end = 0
        }
        if storage.count - end < RequestReader.readSize {
            if start > 0 {
                storage.withUnsafeMutableBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    base.copyMemory(from: base + start, byteCount: end - start)
                }
                end -= start
                start = 0
            }
            if storage.count - end < RequestReader.readSize {
                storage += [UInt8](repeating: 0, count: max(RequestReader.readSize, storage.count))
            }
        }
        let received = storage.withUnsafeMutableBytes { bytes in
            Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[end...]))
        }
        guard received > 0 else { return false }
        end += received
        return true
    }

    /// Reads up to the empty line that ends a request head.
    mutating func readHead() -> HeadResult {
        // Offset from `start` up to which no head end was found; offsets survive `fill()`
        // compacting the storage.
        var scanned = 0
        while true {
            // Tolerate empty lines before the request line (RFC 9112 §2.2).
            while scanned == 0, available > 0,
                storage[start] == UInt8(ascii: "\r") || storage[start] == UInt8(ascii: "\n")
            {
                start += 1
            }
            var index = start + scanned
            while index < end {
                if storage[index] == UInt8(ascii: "\n") {
                    let next = index + 1
                    if next < end, storage[next] == UInt8(ascii: "\n") {
                        return takeHead(bodyStart: next + 1, headEnd: index)
                    }
                    if next + 1 < end, storage[next] == UInt8(ascii: "\r"), storage[next + 1] == UInt8(ascii: "\n") {
                        return takeHead(bodyStart: next + 2, headEnd: index)
                    }
                    if next + 1 >= end { break }
                }
                index += 1
            }
            scanned = index - start
            if available > maxHeadBytes { return .tooLarge }
            guard fill() else {
                return available == 0 ? .idleClose : .truncated(ArraySlice(Array(storage[start..<end])))
            }
        }
    }

    private mutating func takeHead(bodyStart: Int, headEnd: Int) -> HeadResult {
        guard headEnd - start <= maxHeadBytes else { return .tooLarge }
        let head = storage[start..<headEnd]
        start = bodyStart
        return .head(ArraySlice(Array(head)))
    }

    /// Hands over the bytes received but not yet consumed (what a client sent right after a
    /// request that switched protocols).
    mutating func takeBuffered() -> [UInt8] {
        defer { start = end }
        return Array(storage[start..<end])
    }

    /// Reads a body delimited as `framing` says.
    mutating func readBody(_ framing: RequestHead.Framing) -> BodyResult {
        var result = BodyResult()
        switch framing {
        case .none:
            return result
        case .contentLength(let length):
            guard readExactly(length, into: &result) else {
                result.error = RequestParseError(status: 400, message: "connection closed after \(result.size) of \(length) body bytes")
                result.connectionLost = true
                return result
            }
            return result
        case .chunked:
            readChunked(into: &result)
            return result
        }
    }

    private mutating func readExactly(_ length: Int64, into result: inout BodyResult) -> Bool {
        var remaining = length
        while remaining > 0 {
            if available == 0 && !fill() { return false }
            let count = Int(min(Int64(available), remaining))
            if let observer, !observer(storage[start..<(start + count)]) { return false }
            let room = max(0, recordLimit - result.body.count)
            if room > 0 {
                result.body.append(contentsOf: storage[start..<(start + min(count, room))])
            }
            start += count
            remaining -= Int64(count)
            result.size += Int64(count)
        }
        return true
    }

    private mutating func readChunked(into result: inout BodyResult) {
        var sizes: [Int] = []
        defer { result.chunkSizes = sizes }
        while true {
            guard let line = readLine() else {
                result.error = RequestParseError(status: 400, message: "connection closed inside chunked body")
                result.connectionLost = true
                return
            }
            let text = RequestHeadParser.decode(line)
            let sizeText = (text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? "").trimmingOWS
            guard !sizeText.isEmpty, sizeText.count <= 15, let size = Int(sizeText, radix: 16), size >= 0,
                sizeText.allSatisfy(\.isHexDigit)
            else {
                result.error = RequestParseError(status: 400, message: "invalid chunk size line \(text.debugDescription)")
                return
            }
            if size == 0 { break }
            sizes.append(size)
            guard readExactly(Int64(size), into: &result) else {
                result.error = RequestParseError(status: 400, message: "connection closed inside a \(size)-byte chunk")
                result.connectionLost = true
                return
            }
            guard let end = readLine() else {
                result.error = RequestParseError(status: 400, message: "connection closed after chunk data")
                result.connectionLost = true
                return
            }
            guard end.isEmpty else {
                result.error = RequestParseError(status: 400, message: "chunk data longer than its declared size \(size)")
                return
            }
        }
        var trailerBytes = 0
        while true {
            guard let line = readLine() else {
                result.error = RequestParseError(status: 400, message: "connection closed inside chunked trailer section")
                result.connectionLost = true
                return
            }
            if line.isEmpty { return }
            trailerBytes += line.count
            let text = RequestHeadParser.decode(line)
            guard trailerBytes <= maxHeadBytes, let colon = text.firstIndex(of: ":"), colon != text.startIndex else {
                result.error = RequestParseError(status: 400, message: "invalid trailer line \(text.debugDescription)")
                return
            }
            result.trailers.add(String(text[..<colon]), String(text[text.index(after: colon)...].trimmingOWS))
        }
    }

    /// Reads one line (without its CRLF or LF); nil at end of stream or if the line is too long.
    private mutating func readLine() -> ArraySlice<UInt8>? {
        var scanned = 0
        while true {
            if let newline = storage[(start + scanned)..<end].firstIndex(of: UInt8(ascii: "\n")) {
                var line = storage[start..<newline]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                start = newline + 1
                return ArraySlice(Array(line))
            }
            if available > RequestReader.maxLineLength { return nil }
            scanned = available
            guard fill() else { return nil }
        }
    }
}
