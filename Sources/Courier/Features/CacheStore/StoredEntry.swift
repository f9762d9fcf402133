import CourierLocking
import Foundation

/// One stored response as both cache policies see it: the TTL cache (`cached(for:version:)`, whose
/// entries carry a `version` and have `head.responseTime` = when they were stored) and the HTTP
/// cache (RFC 9111, whose entries carry what the rules need in `head`).
struct StoredEntry: Sendable {
    /// The key it is stored under.
    var key: ResponseCacheKey
    /// Status, headers and the times and request facts the HTTP rules need.
    var head: CacheEntryHead
    /// The URL that answered, when known.
    var url: URL?
    /// The data version of a TTL entry (`cached(for:version:)`); `nil` otherwise.
    var version: Int?
    /// The body, in memory or in an open file.
    var body: StoredBody
    /// The `HTTPURLResponse` last built for a replay of this entry, shared by its copies (the
    /// memory tier's among them), so that hits within the same second share one.
    let responseMemo = HTTPResponseMemo()

    /// The entry as the TTL API's value; `nil` when a file body cannot be read.
    var cachedResponse: CachedResponse? {
        guard let data = body.readAll() else { return nil }
        return CachedResponse(
            statusCode: head.statusCode, headers: head.headers, data: data,
            storedAt: head.responseTime, version: version)
    }

    /// A TTL entry made from `response`.
    init(_ response: CachedResponse, key: ResponseCacheKey) {
        self.init(
            key: key,
            head: CacheEntryHead(
                statusCode: response.statusCode, headers: response.headers,
                requestTime: response.storedAt, responseTime: response.storedAt,
                varyingRequestHeaders: nil, requestHadAuthorization: false),
            url: nil, version: response.version, body: .data(response.data))
    }

    init(key: ResponseCacheKey, head: CacheEntryHead, url: URL?, version: Int?, body: StoredBody) {
        self.key = key
        self.head = head
        self.url = url
        self.version = version
        self.body = body
    }
}

/// A stored body: bytes in memory (small entries) or an open body file of the disk store.
///
/// A file body holds its file open, so it stays readable, whole and unchanged, even when the
/// entry is replaced, evicted or removed meanwhile (by this cache, another one on the same
/// directory or another process): body files are immutable once published and removal only
/// unlinks them.
enum StoredBody: Sendable {
    /// The whole body in memory.
    case data(Data)
    /// A body file of the disk store, open for reading.
    case file(StoredBodyFile)

    /// The body length in bytes.
    var length: Int64 {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(let file): file.length
        }
    }

    /// The whole body; `nil` if a file cannot be read back whole. Meant for small bodies: a file
    /// body is loaded entirely into memory.
    func readAll() -> Data? {
        switch self {
        case .data(let data): data
        case .file(let file): file.read(at: 0, count: Int(clamping: file.length)).flatMap { $0.count == Int(file.length) ? $0 : nil }
        }
    }

    /// Up to `count` bytes from `offset` (fewer only at the end); `nil` when the file cannot be read.
    func read(at offset: Int64, count: Int) -> Data? {
        switch self {
        case .data(let data):
            let start = Int(clamping: max(0, min(offset, Int64(data.count))))
            let end = min(data.count, start + max(0, count))
            return data.subdata(in: (data.startIndex + start)..<(data.startIndex + end))
        case .file(let file):
            return file.read(at: offset, count: count)
        }
    }

    /// The body in pieces of at most `size` bytes, read as the sequence is iterated (a file body is
    /// never loaded whole). If a read fails the sequence ends early: compare the bytes seen with
    /// ``length`` to tell.
    func chunks(size: Int = 64 << 10) -> StoredBodyChunks {
        StoredBodyChunks(body: self, size: max(1, size))
    }
}

/// The pieces of a ``StoredBody``; see ``StoredBody/chunks(size:)``.
struct StoredBodyChunks: Sequence, Sendable {
    let body: StoredBody
    let size: Int

    struct Iterator: IteratorProtocol {
        let body: StoredBody
        let size: Int
        var offset: Int64 = 0

        mutating func next() -> Data? {
            guard offset < body.length,
                let piece = body.read(at: offset, count: Int(Swift.min(Int64(size), body.length - offset))),
                !piece.isEmpty
            else { return nil }
            offset += Int64(piece.count)
            return piece
        }
    }

    func makeIterator() -> Iterator {
        Iterator(body: body, size: size)
    }
}

/// An open, published body file of the disk store. Reads are positional (`pread`), so any number
/// of threads may read one file at once; the descriptor closes when the last reference goes.
///
/// Every read covers whole blocks and checks each against its checksum (``CacheBodyChecksums``)
/// before handing out any of its bytes. A block that fails makes the read fail and the file
/// ``isDamaged``, and calls the store's `onDamage` once (it removes the entry, so the next request
/// goes to the network).
final class StoredBodyFile: Sendable {
    /// Where the file was when it was opened (it may have been removed since; the bytes stay readable).
    let url: URL
    /// The body length (the file's size minus its header and checksums).
    let length: Int64
    /// Where the body starts in the file (after the format header).
    private let bodyOffset: Int64
    private let descriptor: Int32
    /// One checksum per ``CacheBodyChecksums/blockSize`` bytes of the body.
    private let blockSums: [UInt64]
    private let onDamage: @Sendable () -> Void
    /// Guards whether a block failed its checksum.
    private let damaged = Locked(false)

    /// Takes ownership of `descriptor`.
    init(
        descriptor: Int32, url: URL, bodyOffset: Int64, length: Int64, blockSums: [UInt64],
        onDamage: @escaping @Sendable () -> Void = {}
    ) {
        self.descriptor = descriptor
        self.url = url
        self.bodyOffset = bodyOffset
        self.length = length
        self.blockSums = blockSums
        self.onDamage = onDamage
    }

    /// Whether a read found a block that does not match its checksum.
    var isDamaged: Bool { damaged.withLock { $0 } }

    /// Up to `count` body bytes from `offset`, every block they touch checked; `nil` when the file
    /// cannot be read or a block is damaged (``isDamaged`` tells which).
    func read(at offset: Int64, count: Int) -> Data? {
        guard offset >= 0 else { return nil }
        let count = Int(clamping: max(0, min(Int64(count), length - offset)))
        guard count > 0 else { return Data() }
        let block = Int64(CacheBodyChecksums.blockSize)
        let first = offset / block
        let start = first * block
        let end = min(length, (offset + Int64(count) + block - 1) / block * block)
        guard let raw = CacheFileIO.read(descriptor, at: bodyOffset + start, count: Int(end - start)), raw.count == Int(end - start) else {
            return nil
        }
        let intact = raw.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count, by: Int(block)).allSatisfy { blockStart in
                let piece = UnsafeRawBufferPointer(rebasing: bytes[blockStart..<min(bytes.count, blockStart + Int(block))])
                return CacheBodyChecksums.verify(piece, index: Int(first) + blockStart / Int(block), against: blockSums)
            }
        }
        guard intact else {
            let first = damaged.withLock { damaged -> Bool in
                defer { damaged = true }
                return !damaged
            }
            if first { onDamage() }
            return nil
        }
        if start == offset, raw.count == count { return raw }
        let from = Int(offset - start)
        return raw.subdata(in: (raw.startIndex + from)..<(raw.startIndex + from + count))
    }

    deinit {
        CacheFileIO.close(descriptor)
    }
}
