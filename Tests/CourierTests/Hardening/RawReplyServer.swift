import Foundation
import CourierTestSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A one-trick TCP server on 127.0.0.1 for replies no HTTP server would write: every connection
/// gets its request head read, then `reply` written as it is, then is closed (`closesAfterReply`)
/// or held open until ``stop()``.
final class RawReplyServer: Sendable {
    let port: Int
    private let listener: Int32
    private let reply: Data
    private let closesAfterReply: Bool
    private let held = Mutex<[Int32]>([])
    private let accepted = Mutex(0)
    private let done = DispatchSemaphore(value: 0)

    var url: URL {
        // The port is a number this server bound, so the URL always parses.
        URL(string: "http://127.0.0.1:\(port)/raw") ?? URL(fileURLWithPath: "/")
    }

    /// How many connections were accepted.
    var connectionCount: Int { accepted.withLock { $0 } }

    init(reply: Data, closesAfterReply: Bool) throws {
        self.reply = reply
        self.closesAfterReply = closesAfterReply
        let (descriptor, port) = try bindLoopbackSocket()
        guard listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw RawServerError(description: "listen() failed: \(errno)")
        }
        listener = descriptor
        self.port = port
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "RawReplyServer"
        thread.start()
    }

    private func acceptLoop() {
        defer { done.signal() }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            accepted.withLock { $0 += 1 }
            serve(connection)
        }
    }

    private func serve(_ connection: Int32) {
        // Read until the end of the request head (any body is left unread).
        var head = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !head.contains(sequence: [13, 10, 13, 10]) {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { break }
            head.append(contentsOf: buffer[0..<count])
        }
        reply.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { return }
            var offset = 0
            while offset < raw.count {
                let sent = send(connection, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if sent <= 0 { break }
                offset += sent
            }
        }
        if closesAfterReply {
            close(connection)
        } else {
            held.withLock { $0.append(connection) }
        }
    }

    /// Stops accepting and closes every connection held open.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        done.wait()
        close(listener)
        for connection in held.withLock({ $0 }) { close(connection) }
    }
}

struct RawServerError: Error, CustomStringConvertible {
    let description: String
}

extension Array where Element == UInt8 {
    fileprivate func contains(sequence: [UInt8]) -> Bool {
        guard count >= sequence.count else { return false }
        return (0...(count - sequence.count)).contains { Array(self[$0..<($0 + sequence.count)]) == sequence }
    }
}
