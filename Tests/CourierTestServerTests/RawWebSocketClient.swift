import CourierTestServer
import Foundation

/// A frame as the raw client read it off the wire.
struct RawFrame: Equatable {
    var fin: Bool
    var rsv: UInt8
    var opcode: UInt8
    var maskingKey: [UInt8]?
    var payload: [UInt8]

    /// The close code of a close frame, if it has one.
    var closeCode: UInt16? {
        opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
    }
}

/// The WebSocket client side on top of ``RawClient``: a handshake, and frames written and read
/// byte by byte, so the tests control (and see) every bit.
extension RawClient {
    /// The example key of RFC 6455 §1.3, whose accept value is `s3pPLMBiTxaQ9kYGzzhZRbK+xOo=`.
    static let exampleKey = "dGhlIHNhbXBsZSBub25jZQ=="

    /// The handshake request's bytes for `path`.
    static func handshake(_ path: String, key: String = exampleKey, headers: [String] = []) -> [UInt8] {
        var text = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        text += "Sec-WebSocket-Key: \(key)\r\nSec-WebSocket-Version: 13\r\n"
        for header in headers { text += header + "\r\n" }
        return Array((text + "\r\n").utf8)
    }

    /// Sends a handshake for `path` and reads the answer's head.
    func webSocketHandshake(
        _ path: String = "/ws", key: String = exampleKey,
        headers: [String] = []
    ) throws -> (status: Int, reason: String, headers: HeaderFields) {
        try send(Self.handshake(path, key: key, headers: headers))
        return try readHead()
    }

    /// The bytes of a client frame (masked with `key` unless it is nil).
    static func frame(
        _ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true, rsv: UInt8 = 0,
        key: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D], declaredLength: UInt64? = nil
    ) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv << 4) | opcode]
        let maskBit: UInt8 = key == nil ? 0 : 0x80
        let length = declaredLength ?? UInt64(payload.count)
        if length < 126 {
            bytes.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            bytes.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
        }
        guard let key else { return bytes + payload }
        return bytes + key + payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
    }

    /// Sends one client frame.
    func sendFrame(
        _ opcode: UInt8, _ payload: [UInt8] = [], fin: Bool = true, rsv: UInt8 = 0,
        key: [UInt8]? = [0x37, 0xFA, 0x21, 0x3D]
    ) throws {
        try send(Self.frame(opcode, payload, fin: fin, rsv: rsv, key: key))
    }

    /// Sends a close frame with `code` and `reason`.
    func sendClose(_ code: UInt16, _ reason: String = "") throws {
        try sendFrame(8, [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
    }

    /// Reads one frame.
    func readFrame() throws -> RawFrame {
        let head = try readExactly(2)
        var length = UInt64(head[1] & 0x7F)
        if length == 126 {
            length = try readExactly(2).reduce(0) { $0 << 8 | UInt64($1) }
        } else if length == 127 {
            length = try readExactly(8).reduce(0) { $0 << 8 | UInt64($1) }
        }
        let key = head[1] & 0x80 != 0 ? try readExactly(4) : nil
        var payload = try readExactly(Int(length))
        if let key { payload = payload.enumerated().map { $0.element ^ key[$0.offset % 4] } }
        return RawFrame(fin: head[0] & 0x80 != 0, rsv: (head[0] >> 4) & 7, opcode: head[0] & 0x0F, maskingKey: key, payload: payload)
    }
}
