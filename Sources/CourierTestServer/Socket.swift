#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over the POSIX socket calls the server uses, retrying on `EINTR`.
enum Socket {
    /// What a non-blocking look at a socket's receive side found.
    enum PeekResult {
        case nothing
        case data
        case closed
    }

    #if os(Linux)
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let streamType = SOCK_STREAM
    private static let sendFlags: Int32 = 0
    #endif

    static var lastError: Int32 { errno }

    /// Creates a listening IPv4 socket on 127.0.0.1 and returns it with the port it was bound to.
    static func makeListener(port: Int, backlog: Int32) throws(TestServerError) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { throw .socketFailure("socket", errno: errno) }
        setCloseOnExec(fd)
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        #if !os(Linux)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .socketFailure("bind", errno: code)
        }
        guard listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socketFailure("listen", errno: code)
        }
        guard let boundPort = localPort(of: fd) else {
            let code = errno
            close(fd)
            throw .socketFailure("getsockname", errno: code)
        }
        return (fd, boundPort)
    }

    /// The local port a socket is bound to.
    static func localPort(of fd: Int32) -> Int? {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let result = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Accepts one connection; returns the new descriptor, or nil with `errno` set.
    static func acceptConnection(_ listener: Int32) -> Int32? {
        while true {
            let fd = accept(listener, nil, nil)
            if fd >= 0 {
                setCloseOnExec(fd)
                return fd
            }
            if errno != EINTR { return nil }
        }
    }

    /// Applies TCP_NODELAY (and SO_NOSIGPIPE where it exists) to an accepted socket.
    static func configureAccepted(_ fd: Int32) {
        var yes: Int32 = 1
        let size = socklen_t(MemoryLayout<Int32>.size)
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, size)
        #if !os(Linux)
        _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &yes, size)
        #endif
    }

    /// Connects to 127.0.0.1:port and closes at once; used to wake a blocked `accept` where
    /// shutting the listener down does not.
    static func poke(port: Int) {
        let fd = socket(AF_INET, streamType, 0)
        guard fd >= 0 else { return }
        var address = sockaddr_in()
        #if !os(Linux)
        address.sin_len = UInt8(MemoryLayout<sockaddr_in>.size)
        #endif
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(UInt32(0x7F00_0001).bigEndian)
        _ = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        close(fd)
    }

    /// Reads at most `buffer.count` bytes: >0 bytes read, 0 at end of stream, -1 on error.
    static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let base = buffer.baseAddress else { return -1 }
        while true {
            let count = recv(fd, base, buffer.count, 0)
            if count >= 0 { return count }
            if errno != EINTR { return -1 }
        }
    }

    /// Writes every byte; false if the peer has gone (EPIPE, ECONNRESET, or the socket was shut down).
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var pointer = bytes.baseAddress else { return true }
        var remaining = bytes.count
        while remaining > 0 {
            let written = send(fd, pointer, remaining, sendFlags)
            if written < 0 {
                if errno == EINTR { continue }
                return false
            }
            pointer += written
            remaining -= written
        }
        return true
    }

    /// Writes every byte of an array; false if the peer has gone.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Waits up to `milliseconds` for the socket to become readable (or hung up).
    static func waitReadable(_ fd: Int32, milliseconds: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        let result = poll(&descriptor, 1, milliseconds)
        return result > 0
    }

    /// Looks at the receive side without blocking or consuming anything.
    static func peek(_ fd: Int32) -> PeekResult {
        var byte: UInt8 = 0
        while true {
            let count = recv(fd, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
            if count > 0 { return .data }
            if count == 0 { return .closed }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .nothing }
            return .closed
        }
    }

    /// Discards whatever has already arrived, without blocking.
    static func drainAvailable(_ fd: Int32) {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = scratch.withUnsafeMutableBytes { buffer in
                recv(fd, buffer.baseAddress, buffer.count, Int32(MSG_DONTWAIT))
            }
            if count > 0 { continue }
            if count < 0 && errno == EINTR { continue }
            return
        }
    }

    /// Blocks the calling thread for `milliseconds`.
    static func sleep(milliseconds: Int32) {
        _ = poll(nil, 0, milliseconds)
    }

    /// Shuts down the send side (the peer reads end of stream).
    static func shutdownOutput(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
    }

    /// Shuts down both sides, which wakes any thread blocked on the socket.
    static func shutdownBoth(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Closes a descriptor.
    static func closeNow(_ fd: Int32) {
        _ = close(fd)
    }

    /// Closes so the peer sees a reset (RST) rather than an orderly end of stream.
    static func closeWithReset(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
        closeNow(fd)
    }

    /// Closes after an orderly end of stream, first discarding unread input so the kernel sends
    /// FIN rather than RST.
    static func closeGracefully(_ fd: Int32) {
        shutdownOutput(fd)
        drainAvailable(fd)
        closeNow(fd)
    }

    private static func setCloseOnExec(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFD)
        if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
    }
}
