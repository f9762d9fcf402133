import Foundation

/// The checksums that close a body file (``CacheEntryFormat``): one ``CacheChecksum`` per
/// ``blockSize`` bytes of the body (the last block may be shorter), computed while the body is
/// written and checked block by block while it is read, so a reader never hands out a byte of a
/// block that fails its check, and a range of a large body is checked without reading the rest.
///
/// The head names the body file with the checksum of these checksums (``digest(of:)``), so a body
/// file is valid only for the head that names it: another body of the same length, or a body
/// file of another entry renamed into place, is caught as surely as a flipped bit.
struct CacheBodyChecksums {
    /// The bytes each checksum covers: the replay's piece size, so a replay reads whole blocks.
    static let blockSize = 64 << 10

    /// The checksums of the blocks completed so far.
    private(set) var sums: [UInt64] = []
    /// The bytes of the block being filled (fewer than ``blockSize``).
    private var pending = Data()
    /// Bytes added so far.
    private(set) var length: Int64 = 0

    /// Adds the next bytes of the body.
    mutating func add(_ data: Data) {
        data.withUnsafeBytes { add($0) }
    }

    /// Adds the next bytes of the body.
    mutating func add(_ bytes: UnsafeRawBufferPointer) {
        length += Int64(bytes.count)
        var rest = bytes[...]
        while !rest.isEmpty {
            // Whole blocks straight from the caller's bytes; only a block's ragged edges are copied.
            if pending.isEmpty, rest.count >= Self.blockSize {
                let block = UnsafeRawBufferPointer(rebasing: rest.prefix(Self.blockSize))
                sums.append(CacheChecksum.of(block))
                rest = rest.dropFirst(Self.blockSize)
                continue
            }
            let taken = rest.prefix(Self.blockSize - pending.count)
            pending.append(contentsOf: taken)
            rest = rest.dropFirst(taken.count)
            if pending.count == Self.blockSize {
                sums.append(pending.withUnsafeBytes { CacheChecksum.of($0) })
                pending.removeAll(keepingCapacity: true)
            }
        }
    }

    /// Ends the body: the checksums of every block, the last partial one included.
    mutating func finish() -> [UInt64] {
        if !pending.isEmpty {
            sums.append(pending.withUnsafeBytes { CacheChecksum.of($0) })
            pending = Data()
        }
        return sums
    }

    /// The checksums of `data`'s blocks.
    static func of(_ data: Data) -> [UInt64] {
        var checksums = CacheBodyChecksums()
        checksums.add(data)
        return checksums.finish()
    }

    /// How many blocks a body of `length` bytes has.
    static func blockCount(forLength length: Int64) -> Int {
        Int((max(0, length) + Int64(blockSize) - 1) / Int64(blockSize))
    }

    /// The trailer of a body file: each checksum as 8 little-endian bytes.
    static func trailer(_ sums: [UInt64]) -> Data {
        var data = Data(capacity: sums.count * 8)
        for sum in sums { withUnsafeBytes(of: sum.littleEndian) { data.append(contentsOf: $0) } }
        return data
    }

    /// The checksums a trailer holds; `nil` when its length is not a whole number of them.
    static func sums(inTrailer trailer: Data) -> [UInt64]? {
        guard trailer.count % 8 == 0 else { return nil }
        return trailer.withUnsafeBytes { raw in
            stride(from: 0, to: raw.count, by: 8).map { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: $0, as: UInt64.self)) }
        }
    }

    /// What the head stores to name its body: the checksum of the trailer, as 16 hex digits.
    static func digest(of sums: [UInt64]) -> String {
        CacheChecksum.hex(of: trailer(sums))
    }

    /// Whether `block`, the body's block number `index`, matches its checksum.
    static func verify(_ block: UnsafeRawBufferPointer, index: Int, against sums: [UInt64]) -> Bool {
        index >= 0 && index < sums.count && CacheChecksum.of(block) == sums[index]
    }
}
