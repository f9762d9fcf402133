import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A TCP port on 127.0.0.1 that is bound but not listening: connecting to it is refused, and no
/// other test can take it while this object lives (releasing it gives a port that was free a moment ago).
public final class ClosedPort: Sendable {
    /// The port number.
    public let port: Int
    private let descriptor: Int32

    /// Binds a socket to a free port without listening on it.
    public init() throws {
        (descriptor, port) = try bindLoopbackSocket()
    }

    deinit {
        close(descriptor)
    }
}

/// A socket call of the test harness failed.
public struct SocketError: Error, CustomStringConvertible {
    /// Which call failed, with `errno`.
    public let description: String
}

/// A TCP socket bound to a free port on 127.0.0.1, not listening yet, and that port.
public func bindLoopbackSocket() throws -> (descriptor: Int32, port: Int) {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard descriptor >= 0 else { throw SocketError(description: "socket() failed: \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    guard bound == 0 else {
        close(descriptor)
        throw SocketError(description: "bind() failed: \(errno)")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    return (descriptor, Int(UInt16(bigEndian: address.sin_port)))
}
