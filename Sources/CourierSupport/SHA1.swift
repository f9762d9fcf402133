import CourierWebSocketWire

/// SHA-1 for the handshake's `Sec-WebSocket-Accept`; the implementation lives in the
/// package-only `CourierWebSocketWire` target, which CourierTestServer shares.
package typealias SHA1 = WebSocketSHA1
