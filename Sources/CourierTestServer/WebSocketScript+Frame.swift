import CourierWebSocketWire
import Foundation

extension WebSocketScript {
    /// A frame opcode (RFC 6455 §5.2), any 4-bit value including the reserved 3–7 and 0xB–0xF.
    public struct Opcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The 4-bit value (higher bits are dropped when encoding).
        public let rawValue: UInt8

        /// An opcode from its value.
        public init(rawValue: UInt8) {
            self.rawValue = rawValue
        }

        /// 0x0, a later fragment.
        public static let continuation = Opcode(rawValue: 0x0)
        /// 0x1, text.
        public static let text = Opcode(rawValue: 0x1)
        /// 0x2, binary.
        public static let binary = Opcode(rawValue: 0x2)
        /// 0x8, close.
        public static let close = Opcode(rawValue: 0x8)
        /// 0x9, ping.
        public static let ping = Opcode(rawValue: 0x9)
        /// 0xA, pong.
        public static let pong = Opcode(rawValue: 0xA)

        /// Whether this is a control opcode (high bit set: close, ping, pong and 0xB–0xF).
        public var isControl: Bool { rawValue & 0x8 != 0 }

        /// Whether RFC 6455 defines this opcode.
        public var isDefined: Bool { [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(rawValue) }

        /// The opcode's name, or `reserved(0x3)`.
        public var description: String {
            switch rawValue {
            case 0x0: return "continuation"
            case 0x1: return "text"
            case 0x2: return "binary"
            case 0x8: return "close"
            case 0x9: return "ping"
            case 0xA: return "pong"
            default: return "reserved(0x\(String(rawValue, radix: 16, uppercase: true)))"
            }
        }
    }

    /// One frame the server sends exactly as described, valid or not: reserved bits and opcodes,
    /// fragmented or oversized control frames, invalid UTF-8, a masked server frame, a length
    /// field that lies.
    ///
    /// ```swift
    /// .frame(.init(opcode: .text, payload: Data([0xCE, 0xBA, 0xE1]), fin: false))   // UTF-8 cut short
    /// .frame(.init(opcode: .ping, payload: Data(count: 126)))                        // control frame too long
    /// ```
    public struct Frame: Sendable, Equatable {
        /// The opcode.
        public var opcode: Opcode
        /// The payload (sent unmasked unless ``maskingKey`` is set).
        public var payload: Data
        /// The FIN bit.
        public var fin: Bool
        /// The RSV1 bit (permessage-deflate's "compressed" bit; reserved otherwise).
        public var rsv1: Bool
        /// The RSV2 bit (reserved).
        public var rsv2: Bool
        /// The RSV3 bit (reserved).
        public var rsv3: Bool
        /// A masking key, big-endian (a server must never mask, §5.1); nil sends the frame unmasked.
        public var maskingKey: UInt32?
        /// The value written in the length field instead of the payload's real length (which is
        /// still what is sent): a frame claiming 2^63 bytes, or more than the client's limit.
        public var declaredLength: UInt64?

        /// A frame; by default a final, unmasked frame with the reserved bits clear.
        public init(
            opcode: Opcode, payload: Data = Data(), fin: Bool = true, rsv1: Bool = false, rsv2: Bool = false,
            rsv3: Bool = false, maskingKey: UInt32? = nil, declaredLength: UInt64? = nil
        ) {
            self.opcode = opcode
            self.payload = payload
            self.fin = fin
            self.rsv1 = rsv1
            self.rsv2 = rsv2
            self.rsv3 = rsv3
            self.maskingKey = maskingKey
            self.declaredLength = declaredLength
        }

        /// A text frame of `text`'s UTF-8.
        public static func text(_ text: String, fin: Bool = true) -> Frame {
            Frame(opcode: .text, payload: Data(text.utf8), fin: fin)
        }

        /// A binary frame.
        public static func binary(_ data: Data, fin: Bool = true) -> Frame {
            Frame(opcode: .binary, payload: data, fin: fin)
        }

        /// A continuation frame.
        public static func continuation(_ data: Data, fin: Bool = true) -> Frame {
            Frame(opcode: .continuation, payload: data, fin: fin)
        }

        /// A close frame with `code` (none when nil) and `reason` (§5.5.1); any code, valid or not.
        public static func close(code: UInt16?, reason: String = "") -> Frame {
            Frame(opcode: .close, payload: closePayload(code: code, reason: Data(reason.utf8)))
        }

        /// The payload of a close frame: the code big-endian, then the reason bytes.
        public static func closePayload(code: UInt16?, reason: Data = Data()) -> Data {
            guard let code else { return Data() }
            return Data([UInt8(code >> 8), UInt8(code & 0xFF)]) + reason
        }

        /// The frame's bytes on the wire (§5.2): the length in the shortest of 7, 16 or 64 bits.
        public var wireBytes: Data {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(14 + payload.count)
            bytes.append((fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | (rsv2 ? 0x20 : 0) | (rsv3 ? 0x10 : 0) | (opcode.rawValue & 0x0F))
            let length = declaredLength ?? UInt64(payload.count)
            let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
            if length < 126 {
                bytes.append(maskBit | UInt8(length))
            } else if length <= 0xFFFF {
                bytes += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
            } else {
                bytes.append(maskBit | 127)
                for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: length >> UInt64(shift))) }
            }
            var body = [UInt8](payload)
            if let maskingKey {
                let key = (
                    UInt8(maskingKey >> 24), UInt8(truncatingIfNeeded: maskingKey >> 16),
                    UInt8(truncatingIfNeeded: maskingKey >> 8), UInt8(truncatingIfNeeded: maskingKey)
                )
                bytes += [key.0, key.1, key.2, key.3]
                body.withUnsafeMutableBytes { WebSocketWire.mask($0, key: key) }
            }
            return Data(bytes + body)
        }
    }
}
