import CCurl
import CCourierSystem
import CourierLocking
import Foundation

/// A connection libcurl opened in connect-only mode (TCP, proxy tunnel, TLS) and Courier now
/// reads and writes with `curl_easy_recv`/`curl_easy_send`; its socket is watched by the
/// transport's ``CurlPoller``.
final class CurlRawConnection: RawConnection, @unchecked Sendable {
    /// The easy handle that holds the connection (nil once closed), and whether its socket is in
    /// the poller's wait set.
    private struct Handles {
        var easy: CurlEasyHandle?
        var inWaitSet = true
    }

    // `@unchecked Sendable`: this lock guards the easy handle (libcurl allows one call at a time
    // on it) and the wait-set flag; everything else is immutable.
    private let handles: Locked<Handles>
    private let socket: Int32
    private let token: UInt64
    private let poller: CurlPoller
    private let url: URL
    let holdsReadBytes: Bool

    /// Takes over `easy`, connected, with its socket registered as `token`.
    private init(easy: CurlEasyHandle, socket: Int32, token: UInt64, poller: CurlPoller, url: URL) {
        handles = Locked(Handles(easy: easy))
        self.socket = socket
        self.token = token
        self.poller = poller
        self.url = url
        holdsReadBytes = url.scheme?.lowercased() == "https"
    }

    /// The connection `easy` made, registered with `poller` for `observer`; `nil` when the
    /// socket cannot be found or watched (the caller then releases the handle).
    static func take(
        _ easy: CurlEasyHandle, poller: CurlPoller, observer: any RawConnectionObserver,
        url: URL
    ) -> CurlRawConnection? {
        var socket: Int32 = -1
        guard ccurl_easy_active_socket(easy.pointer, &socket) == CCURLE_OK, socket >= 0,
            let token = poller.register(socket: socket, observer: observer)
        else { return nil }
        return CurlRawConnection(easy: easy, socket: socket, token: token, poller: poller, url: url)
    }

    deinit { close() }

    func send(_ bytes: UnsafeRawBufferPointer) -> RawConnectionIO {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return .transferred(0) }
        return handles.withLock { handles in
            guard let easy = handles.easy else { return .failed(closedError) }
            var sent = 0
            let code = ccurl_easy_send(easy.pointer, base, bytes.count, &sent)
            return outcome(code, count: sent, easy: easy, reading: false)
        }
    }

    func receive(into buffer: UnsafeMutableRawBufferPointer) -> RawConnectionIO {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return .wouldBlock }
        return handles.withLock { handles in
            guard let easy = handles.easy else { return .failed(closedError) }
            var received = 0
            let code = ccurl_easy_recv(easy.pointer, base, buffer.count, &received)
            return outcome(code, count: received, easy: easy, reading: true)
        }
    }

    func watch(reading: Bool, writing: Bool) {
        handles.withLock { handles in
            guard handles.easy != nil else { return }
            let watching = reading || writing
            if watching {
                poller.watch(socket: socket, token: token, reading: reading, writing: writing, first: !handles.inWaitSet)
            } else if handles.inWaitSet {
                poller.pause(socket: socket)
            }
            handles.inWaitSet = watching
        }
    }

    func awaitReadable(within timeout: Duration) -> Bool {
        let (seconds, attoseconds) = timeout.components
        // Not under the lock: the poller and the owner may use the connection meanwhile.
        return csystem_wait_readable(socket, seconds * 1_000_000_000 + attoseconds / 1_000_000_000) == 1
    }

    func close() {
        handles.withLock { handles in
            guard handles.easy != nil else { return }
            poller.forget(socket: socket, token: token)
            // Its last reference: curl_easy_cleanup closes the socket (through the connect
            // guard's close callback, released after it).
            handles.easy = nil
        }
    }

    private var closedError: CourierError {
        CourierError(.connectionLost, "The connection was closed.", url: url)
    }

    private func outcome(_ code: Int32, count: Int, easy: CurlEasyHandle, reading: Bool) -> RawConnectionIO {
        switch code {
        case CCURLE_OK:
            return count == 0 && reading ? .ended : .transferred(count)
        case CCURLE_AGAIN:
            return .wouldBlock
        default:
            let detail = easy.errorDetail
            let error = CourierError(curl: code, detail: detail, url: url)
            // A reset peer reads as a receive or send error: the connection was lost.
            if code == CCURLE_RECV_ERROR || code == CCURLE_SEND_ERROR {
                return .failed(
                    CourierError(.connectionLost, "The connection was lost: \(error.message)", underlyingError: error.underlyingError, url: url))
            }
            return .failed(error)
        }
    }
}
