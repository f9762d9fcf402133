/// Produces the bytes of a ``MockResponse/Body`` in order, a block at a time, without
/// materialising a pattern body.
struct BodyReader {
    private let body: MockResponse.Body
    private(set) var position: Int64 = 0

    /// The total number of bytes the reader will produce.
    var count: Int64 { body.count }

    init(_ body: MockResponse.Body) {
        self.body = body
    }

    /// The next bytes, at most `maxCount`; empty once the body is exhausted.
    mutating func read(maxCount: Int) -> [UInt8] {
        let length = Int(min(Int64(maxCount), count - position))
        guard length > 0 else { return [] }
        let bytes = body.bytes(from: position, count: length)
        position += Int64(length)
        return bytes
    }
}

/// Wraps a ``BodyReader`` in a content coding: identity, or a gzip (RFC 1952) or zlib (RFC 1950)
/// stream made of stored (uncompressed) deflate blocks, so no compressor is needed.
struct EncodedBodyReader {
    private static let maxStoredBlock = 65_535

    private enum Phase {
        case header
        case blocks
        case trailer
        case done
    }

    private var reader: BodyReader
    private let coding: ContentCoding
    private var phase: Phase = .header
    private var pending: [UInt8] = []
    private var pendingIndex = 0
    private var crc = CRC32()
    private var adler = Adler32()

    /// The total number of encoded bytes the reader will produce.
    let count: Int64

    init(_ body: MockResponse.Body, coding: ContentCoding) {
        self.reader = BodyReader(body)
        self.coding = coding
        self.count = EncodedBodyReader.encodedCount(of: body.count, coding: coding)
    }

    /// The length of `rawCount` bytes once encoded with `coding`.
    static func encodedCount(of rawCount: Int64, coding: ContentCoding) -> Int64 {
        let blocks = max(1, (rawCount + Int64(maxStoredBlock) - 1) / Int64(maxStoredBlock))
        let deflated = rawCount + 5 * blocks
        switch coding {
        case .identity: return rawCount
        case .gzip: return 10 + deflated + 8
        case .deflate: return 2 + deflated + 4
        }
    }

    /// The next encoded bytes, at most `maxCount`; empty once the stream is complete.
    mutating func read(maxCount: Int) -> [UInt8] {
        if coding == .identity { return reader.read(maxCount: maxCount) }
        while pendingIndex >= pending.count {
            guard produce() else { return [] }
        }
        let end = min(pending.count, pendingIndex + maxCount)
        let bytes = Array(pending[pendingIndex..<end])
        pendingIndex = end
        return bytes
    }

    /// Queues the next piece of the stream; false once everything has been produced.
    private mutating func produce() -> Bool {
        pendingIndex = 0
        switch phase {
        case .header:
            // gzip: magic, CM=8 (deflate), no flags, MTIME 0, XFL 0, OS 255 (unknown).
            // zlib: CMF 0x78 (deflate, 32 KiB window), FLG 0x01 (check bits, no dictionary).
            pending = coding == .gzip ? [0x1F, 0x8B, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xFF] : [0x78, 0x01]
            phase = .blocks
        case .blocks:
            let raw = reader.read(maxCount: EncodedBodyReader.maxStoredBlock)
            raw.withUnsafeBytes { bytes in
                if coding == .gzip { crc.update(bytes) } else { adler.update(bytes) }
            }
            let isFinal = reader.position >= reader.count
            let length = UInt16(raw.count)
            pending = [
                isFinal ? 0x01 : 0x00,
                UInt8(length & 0xFF), UInt8(length >> 8),
                UInt8(~length & 0xFF), UInt8(~length >> 8),
            ]
            pending.append(contentsOf: raw)
            if isFinal { phase = .trailer }
        case .trailer:
            if coding == .gzip {
                let size = UInt32(truncatingIfNeeded: reader.count)
                pending = littleEndianBytes(crc.checksum) + littleEndianBytes(size)
            } else {
                let sum = adler.checksum
                pending = [UInt8(sum >> 24), UInt8((sum >> 16) & 0xFF), UInt8((sum >> 8) & 0xFF), UInt8(sum & 0xFF)]
            }
            phase = .done
        case .done:
            pending = []
            return false
        }
        return true
    }

    private func littleEndianBytes(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8((value >> 8) & 0xFF), UInt8((value >> 16) & 0xFF), UInt8(value >> 24)]
    }
}

/// The content coding a response body is sent with.
enum ContentCoding: Sendable, Equatable {
    case identity
    case gzip
    case deflate
}
