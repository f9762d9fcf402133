import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataStreamRequest {
    /// The default bound on one line of ``streamingLines(maximumLineLength:automaticallyCancelling:)``
    /// and ``streamingDecodables(_:decoder:maximumLineLength:automaticallyCancelling:)``: 1 MiB.
    public static let defaultMaximumLineLength = 1 << 20

    /// The body as UTF-8 text, piece by piece as it arrives. A character split between two
    /// chunks (a multi-byte UTF-8 sequence) is never cut: it comes whole in the later piece.
    /// Invalid bytes become U+FFFD. Leaving the loop early cancels the request, as with
    /// ``streamingData(automaticallyCancelling:)``.
    ///
    /// ```swift
    /// for try await text in session.streamRequest("llm/completion").streamingStrings() {
    ///     print(text, terminator: "")
    /// }
    /// ```
    public nonisolated func streamingStrings(automaticallyCancelling: Bool = true) -> DataStreamValues<String> {
        DataStreamValues(base: streamingData(automaticallyCancelling: automaticallyCancelling)) { UTF8Pieces() }
    }

    /// The body as lines of UTF-8 text (without their `\n` or `\r\n`), each whole however the
    /// chunks split it; a last line without a line break counts too.
    ///
    /// A line longer than `maximumLineLength` bytes ends the stream with `.responseTooLarge` and
    /// cancels the request: memory stays bounded whatever the server sends.
    ///
    /// ```swift
    /// for try await line in session.streamRequest("logs/tail").streamingLines() where line.hasPrefix("ERROR") {
    ///     print(line)
    /// }
    /// ```
    public nonisolated func streamingLines(
        maximumLineLength: Int = defaultMaximumLineLength,
        automaticallyCancelling: Bool = true
    ) -> DataStreamValues<String> {
        DataStreamValues(base: streamingData(automaticallyCancelling: automaticallyCancelling)) {
            LineValues(maximumLineLength: maximumLineLength) { line in String(decoding: line, as: UTF8.self) }
        }
    }

    /// The body as JSON Lines (one JSON value per line, blank lines skipped), each decoded as
    /// `type` as soon as its line is complete.
    ///
    /// A line that does not decode ends the stream with `.serializationFailed` (the decoding error
    /// as `underlyingError`); a line longer than `maximumLineLength` bytes with `.responseTooLarge`.
    /// Either way the request is cancelled.
    ///
    /// ```swift
    /// struct Tick: Decodable, Sendable { let symbol: String; let price: Double }
    /// for try await tick in session.streamRequest("ticks").streamingDecodables(Tick.self) {
    ///     print(tick.symbol, tick.price)
    /// }
    /// ```
    public nonisolated func streamingDecodables<T: Decodable & Sendable>(
        _ type: T.Type = T.self, decoder: any DataDecoder = JSONDecoder(),
        maximumLineLength: Int = defaultMaximumLineLength, automaticallyCancelling: Bool = true
    ) -> DataStreamValues<T> {
        DataStreamValues(base: streamingData(automaticallyCancelling: automaticallyCancelling)) {
            LineValues(maximumLineLength: maximumLineLength) { (line: Data) throws(CourierError) -> T? in
                guard line.contains(where: { !Self.isJSONWhitespace($0) }) else { return nil }
                do {
                    return try decoder.decode(T.self, from: line)
                } catch {
                    throw CourierError(
                        .serializationFailed, "A JSON line could not be decoded as \(T.self): \(error)",
                        underlyingError: error)
                }
            }
        }
    }

    // MARK: Callback style

    /// Calls `handler` on `queue` with the body as UTF-8 text pieces (see ``streamingStrings(automaticallyCancelling:)``),
    /// then once with the end. The next piece is not read until `handler` returns.
    ///
    /// ```swift
    /// session.streamRequest("llm/completion").responseStreamString { event in
    ///     switch event {
    ///     case .value(let text): print(text, terminator: "")
    ///     case .complete(let completion): print(completion.error.map { "\n\($0)" } ?? "\n")
    ///     }
    /// }
    /// ```
    @discardableResult
    public nonisolated func responseStreamString(
        queue: DispatchQueue? = nil,
        _ handler: @escaping @Sendable (DataStreamValueEvent<String>) -> Void
    ) -> Self {
        deliverEvents(
            of: streamingStrings(automaticallyCancelling: false), queue: queue, value: { .value($0) }, end: { .complete($0) },
            to: handler)
    }

    /// Calls `handler` on `queue` with each line of the body (see ``streamingLines(maximumLineLength:automaticallyCancelling:)``),
    /// then once with the end.
    ///
    /// ```swift
    /// session.streamRequest("logs/tail").responseStreamLines { event in
    ///     if case .value(let line) = event { print(line) }
    /// }
    /// ```
    @discardableResult
    public nonisolated func responseStreamLines(
        queue: DispatchQueue? = nil, maximumLineLength: Int = defaultMaximumLineLength,
        _ handler: @escaping @Sendable (DataStreamValueEvent<String>) -> Void
    ) -> Self {
        deliverEvents(
            of: streamingLines(maximumLineLength: maximumLineLength, automaticallyCancelling: false), queue: queue,
            value: { .value($0) }, end: { .complete($0) }, to: handler)
    }

    /// Calls `handler` on `queue` with each JSON line of the body decoded as `type` (see
    /// ``streamingDecodables(_:decoder:maximumLineLength:automaticallyCancelling:)``), then once with the end.
    ///
    /// ```swift
    /// session.streamRequest("ticks").responseStreamDecodable(of: Tick.self) { event in
    ///     switch event {
    ///     case .value(let tick): print(tick.price)
    ///     case .complete(let completion): print("ended", completion.error as Any)
    ///     }
    /// }
    /// ```
    @discardableResult
    public nonisolated func responseStreamDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, queue: DispatchQueue? = nil, decoder: any DataDecoder = JSONDecoder(),
        maximumLineLength: Int = defaultMaximumLineLength, _ handler: @escaping @Sendable (DataStreamValueEvent<T>) -> Void
    ) -> Self {
        deliverEvents(
            of: streamingDecodables(type, decoder: decoder, maximumLineLength: maximumLineLength, automaticallyCancelling: false),
            queue: queue, value: { .value($0) }, end: { .complete($0) }, to: handler)
    }

    private static func isJSONWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// One step of a typed streamed response: a value, or the end.
public enum DataStreamValueEvent<Value: Sendable>: Sendable {
    /// The next value.
    case value(Value)
    /// The end: success when `error` is `nil`.
    case complete(DataStreamCompletion)
}

/// Values made from a ``DataStreamRequest``'s body as it arrives: text pieces, lines or decoded
/// JSON lines. Each value is made as soon as its bytes are in; the next chunk is read only when
/// the values of the previous one are taken, so backpressure holds.
public struct DataStreamValues<Element: Sendable>: AsyncSequence, Sendable {
    /// The error a stream ends with.
    public typealias Failure = CourierError

    let base: DataStream
    let makeDecoder: @Sendable () -> any StreamValueDecoder<Element>

    init(base: DataStream, makeDecoder: @escaping @Sendable () -> any StreamValueDecoder<Element>) {
        self.base = base
        self.makeDecoder = makeDecoder
    }

    /// Starts the request and returns the iterator.
    public func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), decoder: makeDecoder())
    }

    /// Takes values one at a time.
    public struct Iterator: AsyncIteratorProtocol {
        var base: DataStream.Iterator
        var decoder: any StreamValueDecoder<Element>
        var ready: [Element] = []
        var readyIndex = 0
        var ended = false
        /// What stopped the decoder, thrown once the values before it were taken.
        var failure: CourierError?

        /// The next value, or `nil` at the end of the body.
        public mutating func next() async throws(CourierError) -> Element? {
            while true {
                if readyIndex < ready.count {
                    defer { readyIndex += 1 }
                    return ready[readyIndex]
                }
                if let failure {
                    // The stream cannot be read past a value that does not decode.
                    self.failure = nil
                    ended = true
                    base.request.cancel()
                    throw failure
                }
                if ended { return nil }
                let chunk = try await base.next()
                let decoded = chunk.map { decoder.feed($0) } ?? decoder.finish()
                (ready, failure) = (decoded.values, decoded.failure)
                readyIndex = 0
                if chunk == nil { ended = true }
            }
        }
    }
}

/// Turns a stream's chunks into values, keeping what an incomplete value needs between chunks.
protocol StreamValueDecoder<Element> {
    associatedtype Element
    /// The values completed by `chunk`, then what stopped decoding, if anything did.
    mutating func feed(_ chunk: Data) -> (values: [Element], failure: CourierError?)
    /// The values left at the end of the body, then what stopped decoding, if anything did.
    mutating func finish() -> (values: [Element], failure: CourierError?)
}

/// UTF-8 text in pieces that never split a character: up to three bytes of an incomplete
/// sequence wait for the next chunk.
struct UTF8Pieces: StreamValueDecoder {
    private var pending = Data()

    mutating func feed(_ chunk: Data) -> (values: [String], failure: CourierError?) {
        if pending.isEmpty { pending = chunk } else { pending.append(chunk) }
        let cut = Self.completePrefixLength(of: pending)
        guard cut > 0 else { return ([], nil) }
        let text = String(decoding: pending.prefix(cut), as: UTF8.self)
        pending = Data(pending.dropFirst(cut))
        return ([text], nil)
    }

    mutating func finish() -> (values: [String], failure: CourierError?) {
        defer { pending = Data() }
        return (pending.isEmpty ? [] : [String(decoding: pending, as: UTF8.self)], nil)
    }

    /// The length of `bytes` without a trailing sequence that a later byte could still complete.
    static func completePrefixLength(of bytes: Data) -> Int {
        let count = bytes.count
        let start = bytes.startIndex
        // Look back at most three bytes for the lead byte of the last sequence.
        var back = 1
        while back <= min(3, count) {
            let byte = bytes[start + count - back]
            if byte & 0xC0 != 0x80 {
                let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
                // Complete, or not a lead byte at all (ASCII, or invalid: decoded as U+FFFD now).
                return needed > back && byte >= 0xC0 && byte < 0xF8 ? count - back : count
            }
            back += 1
        }
        return count
    }
}

/// Lines (split at `\n`, a trailing `\r` removed), each made into a value by `make` (`nil`
/// skips the line); a line longer than the limit is an error, not a growing buffer.
struct LineValues<Element>: StreamValueDecoder {
    let maximumLineLength: Int
    let make: (Data) throws(CourierError) -> Element?
    private var partial = Data()

    init(maximumLineLength: Int, make: @escaping (Data) throws(CourierError) -> Element?) {
        self.maximumLineLength = max(1, maximumLineLength)
        self.make = make
    }

    mutating func feed(_ chunk: Data) -> (values: [Element], failure: CourierError?) {
        var values: [Element] = []
        var rest = chunk[...]
        do throws(CourierError) {
            while let newline = rest.firstIndex(of: 0x0A) {
                partial.append(contentsOf: rest[rest.startIndex..<newline])
                try checkLength()
                if let value = try make(Self.trimmingCarriageReturn(partial)) { values.append(value) }
                partial = Data()
                rest = rest[rest.index(after: newline)...]
            }
            partial.append(contentsOf: rest)
            try checkLength()
            return (values, nil)
        } catch {
            partial = Data()
            return (values, error)
        }
    }

    mutating func finish() -> (values: [Element], failure: CourierError?) {
        guard !partial.isEmpty else { return ([], nil) }
        defer { partial = Data() }
        do throws(CourierError) {
            return (try make(Self.trimmingCarriageReturn(partial)).map { [$0] } ?? [], nil)
        } catch {
            return ([], error)
        }
    }

    private func checkLength() throws(CourierError) {
        // The line break is not part of the line: a `\r` waiting for its `\n` does not count.
        let length = partial.last == 0x0D ? partial.count - 1 : partial.count
        guard length > maximumLineLength else { return }
        throw CourierError(
            .responseTooLarge,
            "A line of the stream is longer than the limit of \(maximumLineLength) bytes "
                + "(maximumLineLength); the stream was stopped.")
    }

    private static func trimmingCarriageReturn(_ line: Data) -> Data {
        line.last == 0x0D ? line.dropLast() : line
    }
}
