import CCodecs
import CourierLocking
import Foundation

/// Decompresses permessage-deflate messages (RFC 7692 §7.2.2) with the run-time-loaded zlib of
/// CCurl's decoders, fragment by fragment, producing no more than the bytes a message may still
/// have: a message that inflates past the limit fails as soon as it does, with 1009.
///
/// `@unchecked Sendable`: `lock` protects every use of `decoder` (the C stream) and `ended`.
/// The state machine that owns it is a value; copies of that value share one inflater, so a copy
/// must not be used once the original has been (the transport keeps exactly one).
final class WebSocketInflater: @unchecked Sendable {
    /// Whether this process has zlib, without which permessage-deflate is not offered.
    static var isAvailable: Bool { ccodecs_decoder_available(CCODECS_CODING_RAW_DEFLATE) == 1 }

    /// The four bytes a sender strips from the end of each compressed message (§7.2.1).
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]
    private static let chunkSize = 64 * 1024

    private let lock = Locked(())
    private var decoder: OpaquePointer?
    /// The stream ended in a final block, so the next message needs a fresh stream.
    private var ended = false
    /// Every message starts with an empty window (`server_no_context_takeover`).
    private let resetsPerMessage: Bool

    /// Nil when zlib is unavailable or memory ran out.
    init?(resetsPerMessage: Bool) {
        guard let decoder = ccodecs_decoder_create(CCODECS_CODING_RAW_DEFLATE) else { return nil }
        self.decoder = decoder
        self.resetsPerMessage = resetsPerMessage
    }

    deinit {
        ccodecs_decoder_destroy(decoder)
    }

    /// Inflates one fragment of a compressed message; `isLast` adds the stripped tail (§7.2.2).
    /// - Parameter limit: how many bytes the message may still produce.
    func inflate(_ fragment: Data, isLast: Bool, limit: Int) throws(WebSocketProtocolViolation) -> Data {
        let result = lock.withLock { _ in
            Result { () throws(WebSocketProtocolViolation) -> Data in
                var input = fragment
                if isLast { input.append(contentsOf: Self.tail) }
                let output = try run(input, limit: limit)
                if isLast && (resetsPerMessage || ended) { try reset() }
                return output
            }
        }
        return try result.get()
    }

    private func reset() throws(WebSocketProtocolViolation) {
        ccodecs_decoder_destroy(decoder)
        decoder = ccodecs_decoder_create(CCODECS_CODING_RAW_DEFLATE)
        ended = false
        guard decoder != nil else { throw WebSocketProtocolViolation(.invalidCompressedData) }
    }

    private func run(_ input: Data, limit: Int) throws(WebSocketProtocolViolation) -> Data {
        guard let decoder else { throw WebSocketProtocolViolation(.invalidCompressedData) }
        var output = Data()
        var failure: WebSocketProtocolViolation?
        input.withUnsafeBytes { (wire: UnsafeRawBufferPointer) in
            var offset = 0
            var chunk = [UInt8](repeating: 0, count: min(Self.chunkSize, limit + 1))
            while true {
                // Room for one byte past the limit, so that going over it is seen.
                let room = min(chunk.count, limit + 1 - output.count)
                var consumed = 0, produced = 0
                let status = chunk.withUnsafeMutableBytes { out in
                    ccodecs_decoder_run(
                        decoder, wire.baseAddress.map { $0 + offset }, wire.count - offset, &consumed,
                        out.baseAddress, room, &produced)
                }
                offset += consumed
                output.append(contentsOf: chunk[0..<produced])
                if output.count > limit {
                    failure = WebSocketProtocolViolation(.messageTooLarge(size: UInt64(output.count), limit: limit))
                    return
                }
                switch status {
                case CCODECS_DECODE_ERROR:
                    failure = WebSocketProtocolViolation(.invalidCompressedData)
                    return
                case CCODECS_DECODE_END:
                    // A final block: what follows (at most the tail) belongs to no stream.
                    ended = true
                    return
                default:
                    // Room left means the input is used up (ccodecs_decoder_run's contract).
                    if produced < room { return }
                }
            }
        }
        if let failure { throw failure }
        return output
    }
}
