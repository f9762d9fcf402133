#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CourierTestServer
import Foundation

/// A minimal blocking HTTP/1.1 client over a raw socket, so the self-tests see exactly what the
/// server put on the wire (and how the connection ended).
final class RawClient {
    /// How a read ended when it produced no bytes.
    enum ReadEnd: Error, Equatable, CustomStringConvertible {
        case eof
        case reset
        case timeout
        case error(Int32)

        var description: String {
            switch self {
            case .eof: return "EOF"
            case .reset: return "ECONNRESET"
            case .timeout: return "timeout"
            case .error(let code): return "errno \(code)"
            }
        }
    }

    struct ClientError: Error, CustomStringConvertible {
        var description: String
    }

    /// A parsed response.
    struct Response {
        var status: Int
        var reason: String
        var headers: HeaderFields
        var body: [UInt8]
        /// Sizes of the data chunks, if the body was chunked.
        var chunkSizes: [Int]?
        /// Why the body ended before its framing said it should; nil for a complete body.
        var earlyEnd: ReadEnd?

        var text: String { String(decoding: body, as: UTF8.self) }
    }

    let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects to 127.0.0.1:`port`; `receiveTimeout` sets SO_RCVTIMEO. The default is a hang guard
    /// (a minute: a loaded machine can hold the server's thread back for many seconds); a test that
    /// checks that nothing arrives sets a short one for that read only.
    init(port: Int, receiveTimeout: Duration? = .seconds(60)) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw ClientError(description: "socket failed: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            // No close here: every stored property is set, so a throwing init still runs deinit,
            // which closes `fd`. Closing it here as well closed the number a second time, after
            // another test could have been given it (a test server's listener, which then refused
            // every connection: the rare "Couldn't connect" failures of clean-clone runs).
            throw ClientError(description: "connect failed: \(errno)")
        }
        var yes: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        if let receiveTimeout { setReceiveTimeout(receiveTimeout) }
    }

    deinit {
        posixClose(fd)
    }

    /// The local port of the client socket.
    var localPort: Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    func setReceiveTimeout(_ timeout: Duration) {
        let (seconds, attoseconds) = timeout.components
        var value = timeval(tv_sec: .init(seconds), tv_usec: .init(attoseconds / 1_000_000_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) throws {
        try send(Array(text.utf8))
    }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { posixSend(fd, $0) }
            if written < 0 {
                if errno == EINTR { continue }
                throw ClientError(description: "send failed: \(errno)")
            }
            offset += written
        }
    }

    /// Sends a simple request with `Host` and optional extra header lines.
    func sendRequest(_ method: String = "GET", _ target: String, headers: [String] = [], body: String? = nil) throws {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for header in headers { text += header + "\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        try send(text)
    }

    /// Half-closes the sending side.
    func shutdownWrite() {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Reads whatever arrives next (from the buffer first).
    func readSome(max: Int = 64 * 1024) -> Result<[UInt8], ReadEnd> {
        if !buffer.isEmpty {
            let count = min(max, buffer.count)
            defer { buffer.removeFirst(count) }
            return .success(Array(buffer[..<count]))
        }
        return receive(max: max)
    }

    /// Reads from the socket only, bypassing the buffer.
    private func receive(max: Int = 64 * 1024) -> Result<[UInt8], ReadEnd> {
        var scratch = [UInt8](repeating: 0, count: max)
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count > 0 { return .success(Array(scratch[..<count])) }
            if count == 0 { return .failure(.eof) }
            switch errno {
            case EINTR: continue
            case ECONNRESET: return .failure(.reset)
            case EAGAIN, EWOULDBLOCK: return .failure(.timeout)
            default: return .failure(.error(errno))
            }
        }
    }

    /// Reads until the connection ends; returns the bytes and how it ended.
    func readToEnd() -> (bytes: [UInt8], end: ReadEnd) {
        var bytes: [UInt8] = []
        while true {
            switch readSome() {
            case .success(let chunk): bytes += chunk
            case .failure(let end): return (bytes, end)
            }
        }
    }

    /// Reads and discards until the connection ends; returns the byte count and how it ended.
    func countToEnd() -> (count: Int, end: ReadEnd) {
        var count = 0
        while true {
            switch readSome() {
            case .success(let chunk): count += chunk.count
            case .failure(let end): return (count, end)
            }
        }
    }

    private func fillBuffer() throws(ReadEnd) {
        switch receive() {
        case .success(let chunk): buffer += chunk
        case .failure(let end): throw end
        }
    }

    private func readLine() throws(ReadEnd) -> String {
        while true {
            if let newline = buffer.firstIndex(of: 10) {
                var line = buffer[..<newline]
                if line.last == 13 { line = line.dropLast() }
                defer { buffer.removeFirst(newline + 1) }
                return String(decoding: line, as: UTF8.self)
            }
            try fillBuffer()
        }
    }

    func readExactly(_ count: Int) throws(ReadEnd) -> [UInt8] {
        while buffer.count < count { try fillBuffer() }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }

    /// Reads only a response head (status line and fields).
    func readHead() throws -> (status: Int, reason: String, headers: HeaderFields) {
        do {
            let statusLine = try readLine()
            let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]) else {
                throw ClientError(description: "bad status line \(statusLine.debugDescription)")
            }
            var headers: HeaderFields = [:]
            while true {
                let line = try readLine()
                if line.isEmpty { break }
                guard let colon = line.firstIndex(of: ":") else { throw ClientError(description: "bad header \(line)") }
                headers.add(String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
            }
            return (status, parts.count > 2 ? String(parts[2]) : "", headers)
        } catch let end as ReadEnd {
            throw ClientError(description: "connection ended in response head: \(end)")
        }
    }

    /// Reads one response; `isHead` for a response to HEAD (no body).
    func readResponse(isHead: Bool = false) throws -> Response {
        let head = try readHead()
        var response = Response(status: head.status, reason: head.reason, headers: head.headers, body: [])
        if isHead || (100..<200).contains(head.status) || head.status == 204 || head.status == 304 { return response }
        do {
            if head.headers["Transfer-Encoding"]?.lowercased() == "chunked" {
                var sizes: [Int] = []
                defer { response.chunkSizes = sizes }
                while true {
                    let line = try readLine()
                    guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else {
                        throw ClientError(description: "bad chunk line \(line)")
                    }
                    if size == 0 {
                        while try !readLine().isEmpty {}
                        break
                    }
                    sizes.append(size)
                    response.body += try readExactly(size)
                    guard try readLine().isEmpty else { throw ClientError(description: "chunk overran") }
                }
            } else if let lengthText = head.headers["Content-Length"], let length = Int(lengthText) {
                while response.body.count < length {
                    if buffer.isEmpty { try fillBuffer() }
                    let take = min(length - response.body.count, buffer.count)
                    response.body += buffer[..<take]
                    buffer.removeFirst(take)
                }
            } else {
                response.body = buffer
                buffer = []
                let rest = readToEnd()
                response.body += rest.bytes
                if rest.end != .eof { response.earlyEnd = rest.end }
            }
        } catch let end as ReadEnd {
            response.body += buffer
            buffer = []
            response.earlyEnd = end
        }
        return response
    }

    /// Sends a GET and reads its response.
    func get(_ target: String, headers: [String] = []) throws -> Response {
        try sendRequest("GET", target, headers: headers)
        return try readResponse()
    }
}

private func posixClose(_ fd: Int32) {
    _ = close(fd)
}

private func posixSend(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
    #if canImport(Glibc)
    return send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL))
    #else
    return send(fd, bytes.baseAddress, bytes.count, 0)
    #endif
}
