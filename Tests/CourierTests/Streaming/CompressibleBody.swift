import Foundation

/// Bodies made of runs of one byte value, deflated as tightly as deflate allows (about 1:1000), so
/// a test can serve hundreds of MiB of decoded body from a few hundred KiB on the wire and still
/// check every decoded byte and its position.
///
/// One dynamic-Huffman block: length code 285 (258 bytes) has a 1-bit code and the only distance
/// code (distance 1) a 1-bit code, so each 258 bytes of a run cost 2 bits; literals cost 9 or 10 bits.
struct CompressibleBody: Sendable {
    /// The decoded body, as runs of `count` copies of `byte`.
    let runs: [(byte: UInt8, count: Int)]

    /// `segments` runs of `segmentSize` bytes each, the run values differing from one run to the next.
    static func segments(_ segments: Int, of segmentSize: Int) -> CompressibleBody {
        CompressibleBody(runs: (0..<segments).map { (byte: UInt8(truncatingIfNeeded: $0 &* 37 &+ 11), count: segmentSize) })
    }

    /// `data` as runs of equal bytes, so a stream of another coding can be encoded again.
    static func runs(of data: Data) -> CompressibleBody {
        var runs: [(byte: UInt8, count: Int)] = []
        for byte in data {
            if let last = runs.last, last.byte == byte {
                runs[runs.count - 1].count += 1
            } else {
                runs.append((byte, 1))
            }
        }
        return CompressibleBody(runs: runs)
    }

    /// Decoded length.
    var decodedCount: Int { runs.reduce(0) { $0 + $1.count } }

    /// The body as a gzip (RFC 1952) stream.
    var gzip: Data {
        var data = Data([0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 0xFF])
        data.append(contentsOf: deflated())
        var crc = CRC32Runs()
        for run in runs { crc.update(byte: run.byte, count: run.count) }
        Self.appendLittleEndian(crc.value, to: &data)
        Self.appendLittleEndian(UInt32(truncatingIfNeeded: decodedCount), to: &data)
        return data
    }

    /// The body as a zlib (RFC 1950) stream, what `Content-Encoding: deflate` means.
    var zlib: Data {
        var data = Data([0x78, 0x01])
        data.append(contentsOf: deflated())
        let adler = Self.adler32(runs)
        for shift in stride(from: 24, through: 0, by: -8) { data.append(UInt8(truncatingIfNeeded: adler >> UInt32(shift))) }
        return data
    }

    /// The body as raw deflate (RFC 1951) without a zlib header, as some servers send `deflate`.
    var rawDeflate: Data { Data(deflated()) }

    /// The body as one Zstandard (RFC 8878) frame of RLE blocks (128 KiB of one byte in 4 bytes: 1:32768).
    var zstd: Data {
        var data = Data([0x28, 0xB5, 0x2F, 0xFD])
        data.append(0x00)  // Frame_Header_Descriptor: no content size, no checksum, no dictionary
        data.append(7 << 3)  // Window_Descriptor: 2^(10 + 7) = 128 KiB
        let blockLimit = 128 << 10
        var blocks: [(byte: UInt8, count: Int)] = []
        for run in runs {
            var remaining = run.count
            while remaining > 0 {
                let count = min(remaining, blockLimit)
                blocks.append((run.byte, count))
                remaining -= count
            }
        }
        for (index, block) in blocks.enumerated() {
            let last: UInt32 = index == blocks.count - 1 ? 1 : 0
            let header = last | 1 << 1 | UInt32(block.count) << 3  // Block_Type 1: RLE
            data.append(contentsOf: [
                UInt8(truncatingIfNeeded: header), UInt8(truncatingIfNeeded: header >> 8),
                UInt8(truncatingIfNeeded: header >> 16), block.byte,
            ])
        }
        if blocks.isEmpty { data.append(contentsOf: [1, 0, 0]) }  // one empty raw block, the last
        return data
    }

    /// The body as Brotli (RFC 7932) in uncompressed meta-blocks of at most 64 KiB (no compression:
    /// for small bodies).
    var brotli: Data {
        var bytes: [UInt8] = []
        for run in runs { bytes.append(contentsOf: repeatElement(run.byte, count: run.count)) }
        var bits = DeflateBomb.BitWriter()
        bits.write(0, count: 1)  // WBITS = 16
        var offset = 0
        while offset < bytes.count {
            let count = min(1 << 16, bytes.count - offset)
            bits.write(0, count: 1)  // ISLAST
            bits.write(0, count: 2)  // MNIBBLES: 4
            bits.write(UInt32(count - 1), count: 16)  // MLEN - 1
            bits.write(1, count: 1)  // ISUNCOMPRESSED
            bits.alignToByte()
            bits.bytes.append(contentsOf: bytes[offset..<(offset + count)])
            offset += count
        }
        bits.write(1, count: 1)  // ISLAST
        bits.write(1, count: 1)  // ISLASTEMPTY
        return Data(bits.bytes)
    }

    /// Checks decoded bytes that start `offset` bytes into the body; returns the offset of the
    /// first wrong byte, if any.
    func firstMismatch(in chunk: Data, at offset: Int) -> Int? {
        var runIndex = 0, runStart = 0
        while runIndex < runs.count, runStart + runs[runIndex].count <= offset {
            runStart += runs[runIndex].count
            runIndex += 1
        }
        var position = offset
        return chunk.withUnsafeBytes { bytes -> Int? in
            var index = 0
            while index < bytes.count {
                guard runIndex < runs.count else { return position }
                let run = runs[runIndex]
                let take = min(bytes.count - index, runStart + run.count - position)
                // memcmp against a block of the run's byte: a byte-by-byte loop is slow in debug builds.
                let block = [UInt8](repeating: run.byte, count: min(take, 1 << 16))
                var checked = 0
                while checked < take {
                    let count = min(block.count, take - checked)
                    let differs = block.withUnsafeBytes { expected in
                        guard let base = bytes.baseAddress, let expectedBase = expected.baseAddress else { return true }
                        return memcmp(base + index + checked, expectedBase, count) != 0
                    }
                    if differs {
                        for byteIndex in (index + checked)..<(index + checked + count) where bytes[byteIndex] != run.byte {
                            return position + byteIndex - index
                        }
                    }
                    checked += count
                }
                index += take
                position += take
                runStart += run.count
                runIndex += 1
            }
            return nil
        }
    }

    // MARK: - Deflate

    private func deflated() -> [UInt8] {
        // Literal/length code lengths: 285 → 1 bit; literals 0-254 → 9 bits; 255 and 256 (end of block) → 10 bits.
        var literalLengths = [Int](repeating: 0, count: 286)
        for symbol in 0...254 { literalLengths[symbol] = 9 }
        literalLengths[255] = 10
        literalLengths[256] = 10
        literalLengths[285] = 1
        let literalCodes = Self.canonicalCodes(literalLengths)
        // Code-length alphabet: 1, 9, 10 and 18 (a run of 11-138 zeros), 2 bits each.
        var codeLengthLengths = [Int](repeating: 0, count: 19)
        for symbol in [1, 9, 10, 18] { codeLengthLengths[symbol] = 2 }
        let codeLengthCodes = Self.canonicalCodes(codeLengthLengths)
        let order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

        var bits = DeflateBomb.BitWriter()
        bits.write(1, count: 1)  // BFINAL
        bits.write(2, count: 2)  // BTYPE = 10, dynamic Huffman
        bits.write(286 - 257, count: 5)  // HLIT
        bits.write(1 - 1, count: 5)  // HDIST: one distance code
        bits.write(18 - 4, count: 4)  // HCLEN: the first 18 entries of `order` (up to symbol 1)
        for symbol in order.prefix(18) { bits.write(UInt32(codeLengthLengths[symbol]), count: 3) }
        // The 286 literal/length lengths, then the one distance length (1).
        var symbol = 0
        while symbol < 286 {
            let length = literalLengths[symbol]
            if length == 0 {
                var run = 0
                while symbol + run < 286, literalLengths[symbol + run] == 0, run < 138 { run += 1 }
                if run >= 11 {
                    bits.writeHuffman(codeLengthCodes[18], length: 2)
                    bits.write(UInt32(run - 11), count: 7)
                    symbol += run
                    continue
                }
                preconditionFailure("the table has no short zero runs")
            }
            bits.writeHuffman(codeLengthCodes[length], length: 2)
            symbol += 1
        }
        bits.writeHuffman(codeLengthCodes[1], length: 2)

        func literal(_ byte: UInt8) {
            bits.writeHuffman(literalCodes[Int(byte)], length: literalLengths[Int(byte)])
        }
        for run in runs where run.count > 0 {
            literal(run.byte)
            var remaining = run.count - 1
            // Copies of 258 bytes (length code 285, then distance 1) while more than 260 remain, or
            // exactly 258: the rest (3 to 260, or fewer than 258) is written as literals below.
            var copies = remaining >= 258 + 3 ? (remaining - (258 + 3)) / 258 + 1 : 0
            if remaining - copies * 258 == 258 { copies += 1 }
            remaining -= copies * 258
            // Each copy is the two 1-bit codes, written as one 2-bit code whole bytes at a time.
            bits.writeHuffman(literalCodes[285] << 1 | 0, length: 2, times: copies)
            while remaining > 0 {
                literal(run.byte)
                remaining -= 1
            }
        }
        bits.writeHuffman(literalCodes[256], length: literalLengths[256])
        return bits.bytes
    }

    /// RFC 1951 §3.2.2: codes from code lengths.
    private static func canonicalCodes(_ lengths: [Int]) -> [UInt32] {
        let maximum = lengths.max() ?? 0
        var counts = [Int](repeating: 0, count: maximum + 1)
        for length in lengths where length > 0 { counts[length] += 1 }
        var next = [UInt32](repeating: 0, count: maximum + 2)
        var code: UInt32 = 0
        if maximum >= 1 {
            for bits in 1...maximum {
                code = (code + UInt32(counts[bits - 1])) << 1
                next[bits] = code
            }
        }
        var codes = [UInt32](repeating: 0, count: lengths.count)
        for (symbol, length) in lengths.enumerated() where length > 0 {
            codes[symbol] = next[length]
            next[length] += 1
        }
        return codes
    }

    private static func adler32(_ runs: [(byte: UInt8, count: Int)]) -> UInt32 {
        let modulus: UInt64 = 65_521
        var a: UInt64 = 1, b: UInt64 = 0
        for run in runs {
            // After n bytes of value v: a' = a + n v, b' = b + n a + v n(n+1)/2.
            let n = UInt64(run.count), v = UInt64(run.byte)
            b = (b + (n % modulus) * a + v * ((n * (n + 1) / 2) % modulus)) % modulus
            a = (a + (n % modulus) * v) % modulus
        }
        return UInt32(b << 16 | a)
    }

    private static func appendLittleEndian(_ value: UInt32, to data: inout Data) {
        for shift in stride(from: 0, to: 32, by: 8) { data.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}

/// CRC-32 (IEEE) of long runs of one byte value in logarithmic time: one byte is the affine map
/// `crc → M·crc ⊕ table[v]` over GF(2), and a run of n is that map composed n times (by squaring).
struct CRC32Runs {
    private var register: UInt32 = 0xFFFF_FFFF

    var value: UInt32 { register ^ 0xFFFF_FFFF }

    private static let table: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    /// An affine map on 32-bit vectors: `x → matrix·x ⊕ offset`; column j of the matrix is the image of bit j.
    private struct Affine {
        var columns: [UInt32]
        var offset: UInt32

        func apply(_ x: UInt32) -> UInt32 { linear(x) ^ offset }

        func linear(_ x: UInt32) -> UInt32 {
            var result: UInt32 = 0
            for bit in 0..<32 where x >> UInt32(bit) & 1 == 1 { result ^= columns[bit] }
            return result
        }

        /// `self ∘ other`.
        func after(_ other: Affine) -> Affine {
            Affine(columns: other.columns.map(linear), offset: apply(other.offset))
        }
    }

    mutating func update(byte: UInt8, count: Int) {
        // One step: crc → (crc >> 8) ⊕ table[(crc ⊕ v) & 0xFF] = (crc >> 8) ⊕ table[crc & 0xFF] ⊕ table[v].
        let columns = (0..<32).map { bit -> UInt32 in
            let x = UInt32(1) << UInt32(bit)
            return (x >> 8) ^ Self.table[Int(x & 0xFF)]
        }
        var power = Affine(columns: columns, offset: Self.table[Int(byte)])
        var result = Affine(columns: (0..<32).map { UInt32(1) << UInt32($0) }, offset: 0)
        var n = count
        while n > 0 {
            if n & 1 == 1 { result = power.after(result) }
            power = power.after(power)
            n >>= 1
        }
        register = result.apply(register)
    }
}
