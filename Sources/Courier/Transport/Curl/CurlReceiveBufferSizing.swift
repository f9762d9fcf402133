/// Chooses each transfer's receive buffer (`CURLOPT_BUFFERSIZE`) from what the origin's recent
/// responses needed, between ``smallest`` and the transport's size.
///
/// libcurl before 8.7 allocates the receive buffer at the start of every transfer and frees it at
/// its end, pooled easy handle or not: with a 64 KiB buffer a 100-byte response cost 64 KiB of
/// allocation, four fifths of everything a request allocated. The size only decides how many bytes
/// one socket read may return, so a smaller buffer changes how a response is read, never what is
/// received: a response larger than its buffer takes more reads. An origin first gets the full
/// size; a response that needs more than the current size raises it at once; the size comes down
/// only after ``shrinkAfter`` successful responses in a row fitted a smaller one (to the largest of
/// those), so an origin that mixes small answers with large downloads keeps the large buffer.
/// One per loop, touched only inside its passes; a loop keys its transfers by origin only when the
/// transport runs several loops or the origin may speak HTTP/2, otherwise its origins share one size.
struct CurlReceiveBufferSizing {
    /// The smallest buffer handed to libcurl.
    static let smallest = 4 << 10
    /// Responses in a row that must fit a smaller buffer before the size comes down.
    static let shrinkAfter = 8
    /// What a response head is assumed to take besides the body, when sizing.
    static let headAllowance = 1 << 10
    /// At most this many origins are remembered; past it the table starts afresh.
    static let rememberedOrigins = 256

    /// The transport's receive buffer size: the most any transfer gets.
    let largest: Int

    private struct Hint {
        var size: Int
        /// Successful responses in a row that fitted a buffer smaller than `size`.
        var smallerInARow = 0
        /// The largest buffer those responses needed.
        var largestNeeded = 0
    }

    private var hints: [String: Hint] = [:]

    init(largest: Int) {
        self.largest = max(largest, 1)
    }

    /// The receive buffer size for the next transfer to `origin`: the largest for a body expected to be
    /// large (a download or a stream after small answers from the same origin must not read 4 KiB at a time).
    func size(for origin: String, expectsLargeBody: Bool = false) -> Int {
        expectsLargeBody ? largest : hints[origin]?.size ?? largest
    }

    /// Folds in a successful transfer to `origin` that received `bodyBytes` body bytes.
    mutating func record(origin: String, bodyBytes: Int64) {
        let needed = Self.bufferSize(toHold: bodyBytes, largest: largest)
        var hint: Hint
        if let known = hints[origin] {
            hint = known
        } else {
            if hints.count >= Self.rememberedOrigins { hints.removeAll(keepingCapacity: true) }
            hint = Hint(size: largest)
        }
        if needed >= hint.size {
            hint = Hint(size: needed)
        } else {
            hint.smallerInARow += 1
            hint.largestNeeded = max(hint.largestNeeded, needed)
            if hint.smallerInARow >= Self.shrinkAfter { hint = Hint(size: hint.largestNeeded) }
        }
        hints[origin] = hint
    }

    /// The power of two that holds `bodyBytes` and a head, between ``smallest`` and `largest`.
    static func bufferSize(toHold bodyBytes: Int64, largest: Int) -> Int {
        let floor = min(smallest, largest)
        guard bodyBytes >= 0, bodyBytes < Int64(largest) else { return largest }
        let wanted = Int(bodyBytes) + headAllowance
        var size = floor
        while size < wanted, size < largest { size <<= 1 }
        return min(size, largest)
    }
}
