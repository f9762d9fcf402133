import Foundation

/// Where a response body arriving in chunks goes on its way to standard output: straight through,
/// or, while it may still be formatted for a terminal, into one buffer.
///
/// - Passing through (standard output is not a terminal, or the body outgrew the limit), each
///   chunk is written as it arrives and nothing is kept, so memory does not depend on the body's size.
/// - Collecting, chunks are appended in place to one growing buffer (amortised linear: the buffer
///   is never copied per chunk) until the body is complete or passes `limit`; then everything
///   collected is written once, the buffer is released, and the rest passes through.
///
/// Bytes are never decoded here, so a UTF-8 character split between two chunks reaches the output
/// (or the formatter, which sees the whole body) intact.
struct StreamedBody {
    /// Writes bytes to the output; false when the output is broken (for example a closed pipe).
    typealias Write = (Data) -> Bool

    /// The most bytes collected before giving up on formatting and passing the body through.
    let limit: Int
    private let write: Write
    /// The bytes collected so far while collecting; empty once passing through.
    private(set) var collected = Data()
    /// Whether chunks are still being collected (false: they are written as they arrive).
    private(set) var isCollecting: Bool
    /// Set once a write failed; nothing more is written.
    private(set) var writeFailed = false

    /// A body that is collected (up to `limit` bytes) when `collecting`, and written through otherwise.
    init(collecting: Bool, limit: Int, write: @escaping Write) {
        self.isCollecting = collecting
        self.limit = limit
        self.write = write
    }

    /// Takes the next chunk; returns false once writing to the output has failed.
    @discardableResult
    mutating func consume(_ chunk: Data) -> Bool {
        guard !writeFailed else { return false }
        guard isCollecting else { return emit(chunk) }
        guard collected.count + chunk.count <= limit else {
            // Too big to format: what was collected goes out once, then everything as it arrives.
            isCollecting = false
            let soFar = collected
            collected = Data()
            return emit(soFar) && emit(chunk)
        }
        collected.append(chunk)
        return true
    }

    /// Ends the body: the collected bytes when it was collected whole, or nil when it was passed through.
    mutating func finish() -> Data? {
        guard isCollecting else { return nil }
        isCollecting = false
        defer { collected = Data() }
        return collected
    }

    /// For tests: the address of the collected bytes. It changes only when the buffer grows, so
    /// a test can count the bytes moved by reallocation (a copy per chunk would move them all each time).
    var collectedStorageAddress: UInt? {
        collected.withUnsafeBytes { buffer in buffer.baseAddress.map { UInt(bitPattern: $0) } }
    }

    private mutating func emit(_ bytes: Data) -> Bool {
        guard !bytes.isEmpty else { return true }
        if !write(bytes) { writeFailed = true }
        return !writeFailed
    }
}
