import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Opens a WebSocket connection (RFC 6455) to `url` and returns it at once, connecting.
    ///
    /// `url` is ws, wss, http or https, or a path resolved against the session's base URL
    /// (`https://api.example.com/` + `"v1/live"` is `wss://api.example.com/v1/live`). The handshake
    /// carries the session's default headers and `headers`, then goes through the session's
    /// interceptor (`adapt`), so authentication adapters apply; it uses the session's transport,
    /// TLS settings and proxy. A redirect is not followed: it fails with `.webSocketHandshakeFailed`.
    ///
    /// ```swift
    /// let socket = session.webSocket("v1/live", protocols: ["chat"], headers: ["Authorization": "Bearer \(token)"])
    /// try await socket.send(json: Subscribe(channel: "prices"))
    /// for try await message in socket.messages { try handle(message.decode(Price.self)) }
    /// ```
    ///
    /// On the curl transport (the default on Linux) Courier runs RFC 6455 itself. On a URLSession
    /// transport (every session on Apple platforms) Foundation's `URLSessionWebSocketTask` runs it
    /// behind the same API (see ``WebSocket`` for what differs); on Linux that task cannot open
    /// WebSockets, and the connection fails with `.invalidConfiguration` naming the curl transport.
    public func webSocket(
        _ url: any URLConvertible, protocols: [String] = [], headers: HTTPHeaders = [],
        configuration: WebSocketConfiguration = WebSocketConfiguration()
    ) -> WebSocket {
        webSocket(url, protocols: protocols, headers: headers, configuration: configuration, clock: ContinuousClock())
    }

    /// ``webSocket(_:protocols:headers:configuration:)`` with its timeouts (opening, pings,
    /// keep-alive, close) on `clock`.
    func webSocket(
        _ url: any URLConvertible, protocols: [String] = [], headers: HTTPHeaders = [],
        configuration: WebSocketConfiguration = WebSocketConfiguration(), clock: any Clock<Duration>
    ) -> WebSocket {
        let resolved = Result { () throws -> URL in try resolve(Self.httpEquivalent(of: url.asURL())) }
        let socket = WebSocket(
            session: self, url: (try? resolved.get()).map(Self.webSocketEquivalent) ?? (try? url.asURL()) ?? URL(fileURLWithPath: "/"),
            protocols: protocols, configuration: configuration, clock: clock)
        let timeout = Duration.seconds(self.configuration.requestTimeout)
        Task { [self] in
            do {
                guard !isShutDown else { throw Self.shutDownError(url: try? resolved.get()) }
                let request = try await webSocketHandshake(
                    to: resolved.get(), protocols: protocols, headers: headers,
                    offersCompression: configuration.offersCompression && !socket.usesMessageEngine)
                if let transport = transport as? any WebSocketTaskTransport {
                    // URLSession runs the protocol itself (URLSessionWebSocketTask).
                    let taskRequest = WebSocketTaskTranslation.taskRequest(for: request, timeout: self.configuration.requestTimeout)
                    socket.open(taskRequest, through: transport, timeout: timeout)
                    return
                }
                guard let transport = transport as? any RawConnectionTransport else {
                    throw CourierError(.invalidConfiguration, "WebSockets need the curl or URLSession transport; this session uses \(transportName).")
                }
                socket.open(request, through: transport, timeout: timeout)
            } catch {
                socket.failToOpen(error as? CourierError ?? CourierError(wrapping: error))
            }
        }
        return socket
    }

    /// The handshake request: session headers, the caller's, then the interceptor's adaptation.
    private func webSocketHandshake(
        to url: URL, protocols: [String], headers: HTTPHeaders,
        offersCompression: Bool
    ) async throws -> WebSocketHandshakeRequest {
        var request = URLRequest(url: url)
        var merged = self.headers.merging(headers)
        // The handshake's answer has no body to decode.
        merged.remove(name: "Accept-Encoding")
        request.headers = merged
        request.timeoutInterval = configuration.requestTimeout
        if let interceptor {
            do {
                request = try await interceptor.adapt(request, for: self)
            } catch {
                throw CourierError.adaptationFailure(error, url: url)
            }
        }
        guard let adaptedURL = request.url else { throw CourierError(.invalidURL, "The adapted WebSocket request has no URL.", url: url) }
        // The session's cookies go with the handshake, as with its HTTP requests (a Cookie header
        // set by the caller or an adapter wins). `adaptedURL` is http(s), which the store keys on.
        if let storage = configuration.cookies.storage, !request.headers.contains("Cookie"),
            let cookies = storage.cookies(for: adaptedURL), !cookies.isEmpty
        {
            HTTPCookie.requestHeaderFields(with: cookies).forEach { request.setValue($0.value, forHTTPHeaderField: $0.key) }
        }
        // A `URLRequest` keeps one value per name: repeated lines given by the caller or the
        // session go out apart and in order again wherever the adapter left them unchanged.
        let lines = request.headers.restoringLines(of: merged)
        do {
            return try WebSocketHandshakeRequest(
                url: adaptedURL, protocols: protocols, headers: lines,
                offersCompression: offersCompression && WebSocketInflater.isAvailable)
        } catch {
            throw CourierError(webSocketHandshake: error, response: nil, url: adaptedURL)
        }
    }

    /// `url` with ws/wss as http/https, which the session resolves and the transport connects to.
    static func httpEquivalent(of url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        switch components.scheme?.lowercased() {
        case "ws": components.scheme = "http"
        case "wss": components.scheme = "https"
        default: return url
        }
        return components.url ?? url
    }

    /// `url` with http/https as ws/wss, the way the socket names it.
    static func webSocketEquivalent(of url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        switch components.scheme?.lowercased() {
        case "http": components.scheme = "ws"
        case "https": components.scheme = "wss"
        default: return url
        }
        return components.url ?? url
    }
}
