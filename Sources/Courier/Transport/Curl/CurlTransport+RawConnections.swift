import CCurl
import CourierLocking
import Foundation

/// The transport's raw connections (WebSocket): the poller that watches them, started with the first.
final class CurlRawConnections: Sendable {
    private enum State {
        case idle
        case running(CurlPoller)
        case shutDown
    }

    // Guards whether the poller runs.
    private let state = Locked(State.idle)

    /// The poller, started on first use; throws once the transport has shut down.
    func poller() throws(CourierError) -> CurlPoller {
        let result = state.withLock { state -> Result<CurlPoller, CourierError> in
            switch state {
            case .running(let poller):
                return .success(poller)
            case .shutDown:
                return .failure(CourierError(.sessionInvalidated, "The transport was shut down before the connection opened."))
            case .idle:
                do throws(CourierError) {
                    let poller = try CurlPoller()
                    state = .running(poller)
                    return .success(poller)
                } catch {
                    return .failure(error)
                }
            }
        }
        return try result.get()
    }

    /// Stops the poller, which closes every raw connection's watch and tells their owners.
    func shutdown() {
        let running = state.withLock { state -> CurlPoller? in
            defer { state = .shutDown }
            if case .running(let poller) = state { return poller }
            return nil
        }
        running?.shutdown()
    }
}

/// A connect-only attempt in progress: cancelling shuts its socket down (`ccurl_connect_guard`).
final class CurlConnectGuard: RawConnectAttempt {
    /// The C guard's address (a plain integer, so the value is Sendable); the guard is thread-safe
    /// and lives until this object goes.
    private let address: UInt
    var pointer: OpaquePointer? { OpaquePointer(bitPattern: address) }

    init?() {
        guard let created = ccurl_connect_guard_create() else { return nil }
        address = UInt(bitPattern: UnsafeRawPointer(created))
    }

    deinit { ccurl_connect_guard_destroy(pointer) }

    func cancel() { ccurl_connect_guard_cancel(pointer) }

    /// The attempt's connect has returned; whether it was cancelled before.
    func finish() -> Bool { ccurl_connect_guard_finish(pointer) != 0 }
}

extension CurlTransport: RawConnectionTransport {
    /// Connects on a thread of its own (`curl_easy_perform` in connect-only mode blocks until TCP,
    /// the proxy tunnel and TLS are up), then hands the connection to the poller.
    func openRawConnection(
        to url: URL, timeout: Duration, observer: any RawConnectionObserver,
        completion: @escaping @Sendable (Result<any RawConnection, CourierError>) -> Void
    ) -> any RawConnectAttempt {
        let poller: CurlPoller
        let easy: CurlEasyHandle
        let attempt: CurlConnectGuard
        do throws(CourierError) {
            poller = try rawConnections.poller()
            guard let handle = CurlEasyHandle(), let created = CurlConnectGuard() else {
                throw CourierError(.transportFailed, "libcurl could not allocate a handle.", url: url)
            }
            easy = handle
            attempt = created
            try configureConnectOnly(easy, attempt: attempt, url: url, timeout: timeout)
        } catch {
            completion(.failure(error.with(url: url)))
            return InertConnectAttempt()
        }
        // Not Sendable, and need not be: the handle moves to the new thread, and this one never touches it again.
        let connect = {
            let code = ccurl_easy_perform(easy.pointer)
            let cancelled = attempt.finish()
            if cancelled {
                completion(.failure(CourierError(.cancelled, "The connection attempt was cancelled.", url: url)))
            } else if code != CCURLE_OK {
                completion(.failure(CourierError(curl: code, detail: easy.errorDetail, url: url)))
            } else if let connection = CurlRawConnection.take(easy, poller: poller, observer: observer, url: url) {
                completion(.success(connection))
            } else {
                completion(.failure(CourierError(.transportFailed, "The connection's socket could not be watched.", url: url)))
            }
        }
        do {
            try CurlThread.start(name: "courier-ws-open", connect).detach()
        } catch {
            completion(.failure(CourierError(.transportFailed, "No thread could be started to connect (error \(error.code)).", url: url)))
        }
        return attempt
    }

    /// Sets `easy` up to connect to `url` and stop there, with this transport's proxy, TLS and share.
    private func configureConnectOnly(_ easy: CurlEasyHandle, attempt: CurlConnectGuard, url: URL, timeout: Duration) throws(CourierError) {
        let handle = easy.pointer
        let urlString = url.absoluteString
        let urlResult = urlString.withCString { ccurl_easy_setopt_ptr(handle, CCURLOPT_URL, $0) }
        guard urlResult == CCURLE_OK else {
            throw CourierError(.invalidURL, "libcurl rejected the URL: \(CurlError(code: urlResult).text)", url: url)
        }
        try easy.set(.protocols, Int(CCURLPROTO_HTTP | CCURLPROTO_HTTPS))
        try easy.set(.connectOnly, 1)
        try easy.set(.noSignal, 1)
        try easy.set(.tcpNoDelay, 1)
        try easy.set(.errorBuffer, pointer: easy.errorBuffer)
        let proxy = defaults.proxies.proxy(for: urlString)
        try easy.set(.proxy, string: proxy)
        try easy.set(.noProxy, string: defaults.proxies.noProxy ?? "")
        // Through an HTTP proxy, the WebSocket handshake goes inside a CONNECT tunnel.
        if !proxy.isEmpty { try easy.set(.httpProxyTunnel, 1) }
        try easy.set(.suppressConnectHeaders, 1)
        if let share = defaults.share { try easy.check(.share, ccurl_easy_setopt_share(handle, share.pointer)) }
        if url.scheme?.lowercased() == "https" { try defaults.tls.apply(to: easy, for: url) }
        // ALPN offers HTTP/1.1 only: the Upgrade handshake does not exist in HTTP/2.
        try easy.set(.httpVersion, Int(CCURL_HTTP_VERSION_1_1))
        let (seconds, attoseconds) = timeout.components
        try easy.set(.connectTimeoutMilliseconds, max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)))
        let installed = ccurl_connect_guard_install(attempt.pointer, UnsafeMutableRawPointer(handle))
        guard installed == CCURLE_OK else { throw CourierError(refusedOption: "CURLOPT_SOCKOPTFUNCTION", code: installed) }
        // Released after curl_easy_cleanup, which the connection may run after this transport is
        // gone: the guard (its close callback), the share and the trust store it points into.
        easy.callbackOwner = CurlRawConnectionResources(guard: attempt, share: defaults.share, trust: defaults.tls.sharedTrust)
    }
}

/// What a raw connection's easy handle points into, kept alive until the handle is cleaned up.
private final class CurlRawConnectionResources {
    let guardObject: CurlConnectGuard
    let share: CurlShare?
    let trust: CurlSharedTrust?

    init(guard: CurlConnectGuard, share: CurlShare?, trust: CurlSharedTrust?) {
        guardObject = `guard`
        self.share = share
        self.trust = trust
    }
}

/// An attempt that already ended.
struct InertConnectAttempt: RawConnectAttempt {
    func cancel() {}
}
