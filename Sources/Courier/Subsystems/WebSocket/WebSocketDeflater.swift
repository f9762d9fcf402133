import CCodecs
import CourierLocking
import Foundation

/// Compresses Courier's outgoing messages for permessage-deflate (RFC 7692 §7.2.1) with the
/// run-time-loaded zlib: each message deflated and sync-flushed, the final 00 00 FF FF removed.
///
/// `@unchecked Sendable`: `lock` protects every use of `deflater` (the C stream). As with
/// ``WebSocketInflater``, copies of the owning state machine share it; the transport keeps one.
final class WebSocketDeflater: @unchecked Sendable {
    /// Whether this process has zlib's compressor.
    static var isAvailable: Bool { ccodecs_deflater_available() == 1 }

    private static let chunkSize = 64 * 1024
    private let lock = Locked(())
    private let deflater: OpaquePointer
    /// Forget the window after each message (`client_no_context_takeover`).
    private let resetsPerMessage: Bool

    /// Nil when zlib's compressor is unavailable, `windowBits` is outside 9...15 (zlib cannot
    /// write a 256-byte window: with `client_max_window_bits=8` messages go uncompressed) or
    /// memory ran out.
    init?(windowBits: Int, resetsPerMessage: Bool) {
        guard (9...15).contains(windowBits), let deflater = ccodecs_deflater_create(Int32(windowBits)) else { return nil }
        self.deflater = deflater
        self.resetsPerMessage = resetsPerMessage
    }

    deinit {
        ccodecs_deflater_destroy(deflater)
    }

    /// The compressed payload of one message; nil if zlib failed (the caller then sends it as is).
    func deflate(_ message: Data) -> Data? {
        lock.withLock { _ in
            var output = Data()
            var failed = false
            message.withUnsafeBytes { (input: UnsafeRawBufferPointer) in
                var offset = 0
                var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
                while true {
                    var consumed = 0, produced = 0
                    let status = chunk.withUnsafeMutableBytes { out in
                        ccodecs_deflater_run(
                            deflater, input.baseAddress.map { $0 + offset }, input.count - offset, &consumed,
                            out.baseAddress, out.count, &produced)
                    }
                    offset += consumed
                    output.append(contentsOf: chunk[0..<produced])
                    if status != 0 {
                        failed = true
                        return
                    }
                    // Done once the input is used up and the flush fit (room left, zlib's contract).
                    if offset == input.count && produced < chunk.count { return }
                }
            }
            if resetsPerMessage { failed = ccodecs_deflater_reset(deflater) != 0 || failed }
            guard !failed else { return nil }
            // §7.2.1: the sync flush's empty stored block tail is not sent.
            if output.count >= 4, output.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) { output.removeLast(4) }
            // zlib writes nothing for an empty message right after a flush; §7.2.3.6 sends one
            // empty stored block's first byte, which the receiver's appended tail completes.
            return output.isEmpty ? Data([0x00]) : output
        }
    }
}
