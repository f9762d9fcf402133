import Testing
import Foundation
#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer
import CourierTestSupport
import CourierLocking

/// The curl transport's raw connections (what WebSockets run on): connect-only, bytes both ways
/// through `curl_easy_send`/`curl_easy_recv`, readiness from the poller, cancellation of a
/// connect in progress, and the transport's shutdown reaching the owner.
@Suite struct CurlRawConnectionTests {
    /// Records readiness and shutdown, and lets a test wait for the next one.
    final class Observer: RawConnectionObserver {
        private let signals = Locked((count: 0, shutDown: false, waiters: [CheckedContinuation<Void, Never>]()))

        func connectionIsReady(readable: Bool, writable: Bool) { signal { $0.count += 1 } }
        func transportDidShutDown() { signal { $0.shutDown = true } }

        var wasShutDown: Bool { signals.withLock { $0.shutDown } }

        private func signal(_ change: (inout (count: Int, shutDown: Bool, waiters: [CheckedContinuation<Void, Never>])) -> Void) {
            let waiters = signals.withLock { state in
                change(&state)
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }

        /// Waits until the observer hears something after `seen` signals; returns the new count.
        func next(after seen: Int) async -> Int {
            await withCheckedContinuation { continuation in
                signals.withLock { state in
                    if state.count > seen || state.shutDown { continuation.resume() } else { state.waiters.append(continuation) }
                }
            }
            return signals.withLock { $0.count }
        }
    }

    static func open(
        _ url: URL, on transport: CurlTransport, observer: Observer,
        timeout: Duration = .seconds(10)
    ) async -> (Result<any RawConnection, CourierError>, any RawConnectAttempt) {
        let attempt = Locked<(any RawConnectAttempt)?>(nil)
        // The result goes through a lock, as the WebSocket takes it: the connection was made on the
        // connecting thread, and the lock is what orders that thread's writes before this one's reads.
        let outcome = Locked<Result<any RawConnection, CourierError>?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let started = transport.openRawConnection(to: url, timeout: timeout, observer: observer) { result in
                outcome.withLock { $0 = result }
                continuation.resume()
            }
            attempt.withLock { $0 = started }
        }
        let result = outcome.withLock { $0 } ?? .failure(CourierError(.transportFailed, "no result"))
        return (result, attempt.withLock { $0 } ?? InertConnectAttempt())
    }

    /// Reads until `predicate` holds for what arrived or the connection ends.
    static func read(_ connection: any RawConnection, observer: Observer, until predicate: (Data) -> Bool) async -> (Data, ended: Bool) {
        var received = Data()
        var seen = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            switch buffer.withUnsafeMutableBytes({ connection.receive(into: $0) }) {
            case .transferred(let count):
                received.append(contentsOf: buffer[0..<count])
                if predicate(received) { return (received, false) }
            case .wouldBlock:
                seen = await observer.next(after: seen)
            case .ended, .failed:
                return (received, true)
            }
        }
    }

    @Test func bytesGoBothWaysOnAConnectOnlyConnection() async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("hello"))
            let transport = try CurlTestSupport.transport()
            defer { transport.shutdown() }
            let observer = Observer()
            let (result, _) = await Self.open(server.baseURL, on: transport, observer: observer)
            let connection = try result.get()
            connection.watch(reading: true, writing: false)
            let request = Data("GET /raw HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
            let sent = request.withUnsafeBytes { connection.send($0) }
            guard case .transferred(let count) = sent else {
                Issue.record("send: \(sent)")
                return
            }
            #expect(count == request.count)
            let (response, ended) = await Self.read(connection, observer: observer) { _ in false }
            #expect(ended, "the server closes after the response: the read reports the end")
            let text = String(decoding: response, as: UTF8.self)
            #expect(text.hasPrefix("HTTP/1.1 200"))
            #expect(text.hasSuffix("\r\n\r\nhello"))
            connection.close()
            connection.close()
            #expect(server.recordedRequests.first?.target == "/raw")
        }
    }

    /// With a connect timeout far longer than the test's time limit, only the cancel can end it.
    @Test(.hangLimit(.seconds(300)))
    func aConnectThatHangsIsCancelledAndItsSocketClosed() async throws {
        // A listener that never answers: TCP connects, the TLS handshake waits forever.
        let (listener, port) = try bindLoopbackSocket()
        defer { close(listener) }
        #expect(listen(listener, 16) == 0)
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        let observer = Observer()
        let serverSide = Locked<Int32>(-1)
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<any RawConnection, CourierError>, Never>) in
            let attempt = transport.openRawConnection(
                to: URL(string: "https://127.0.0.1:\(port)/")!, timeout: .seconds(600),
                observer: observer
            ) { continuation.resume(returning: $0) }
            // A thread of its own: it blocks in poll(2), which must not hold a cooperative thread.
            Thread.detachNewThread {
                // Cancel once the TLS handshake is under way: the ClientHello reached the server's side.
                var listening = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
                _ = poll(&listening, 1, -1)
                let accepted = accept(listener, nil, nil)
                serverSide.withLock { $0 = accepted }
                var hello = [pollfd(fd: accepted, events: Int16(POLLIN), revents: 0)]
                _ = poll(&hello, 1, -1)
                attempt.cancel()
            }
        }
        guard case .failure(let error) = outcome else {
            Issue.record("connected to a server that never answers")
            return
        }
        #expect(error.kind == .cancelled)
        // Our end is closed: the server's side reads the ClientHello, then the end of the stream.
        let accepted = serverSide.withLock { $0 }
        #expect(accepted >= 0)
        defer { close(accepted) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var total = 0
        while true {
            let count = recv(accepted, &buffer, buffer.count, 0)
            if count <= 0 {
                #expect(count == 0 || errno == ECONNRESET, "the client's socket was closed")
                break
            }
            total += count
        }
        #expect(total > 0, "the TLS handshake had started")
    }

    @Test func theTransportsShutdownReachesTheOwnerAndClosesTheConnection() async throws {
        try await withServer { server async throws in
            let transport = try CurlTestSupport.transport()
            let observer = Observer()
            let (result, _) = await Self.open(server.baseURL, on: transport, observer: observer)
            let connection = try result.get()
            connection.watch(reading: true, writing: false)
            transport.shutdown()
            #expect(observer.wasShutDown)
            // A connection opened after the shutdown fails at once.
            let (late, _) = await Self.open(server.baseURL, on: transport, observer: Observer())
            if case .failure(let error) = late { #expect(error.kind == .sessionInvalidated) } else { Issue.record("opened after shutdown") }
            connection.close()
        }
    }
}
