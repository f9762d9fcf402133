import Foundation

/// How a stream of JSON records separates them.
public enum RecordFraming: Sendable, Hashable {
    /// JSON Lines / NDJSON: one record per line (`\n`, a trailing `\r` dropped); blank lines skipped.
    case lines
    /// JSON text sequences (RFC 7464, `application/json-seq`): each record starts with the record
    /// separator (0x1E); whitespace around a record is ignored.
    case jsonSequence
}

/// What a record stream does with a record that does not decode.
public enum MalformedRecordPolicy: Sendable, Hashable {
    /// End the stream with `.serializationFailed`, naming the record's number (and cancel the request).
    case fail
    /// Skip it and go on with the next record.
    case skip
}

extension DataStreamRequest {
    /// The default bound on one record of ``streamingDecodable(of:framing:decoder:maximumRecordSize:malformedRecords:automaticallyCancelling:)``: 8 MiB.
    public static let defaultMaximumRecordSize = 8 << 20

    /// The body as a stream of JSON records (JSON Lines or RFC 7464 JSON text sequences), each
    /// decoded as `type` as soon as it is complete, with backpressure.
    ///
    /// A record that does not decode ends the stream with `.serializationFailed` naming its number
    /// (1 for the first), unless `malformedRecords` is `.skip`; a record longer than
    /// `maximumRecordSize` bytes ends it with `.responseTooLarge`. Either way the request is cancelled.
    ///
    /// ```swift
    /// struct Entry: Decodable, Sendable { let level: String; let message: String }
    /// for try await entry in session.streamRequest("logs").streamingDecodable(of: Entry.self, framing: .lines) {
    ///     print(entry.level, entry.message)
    /// }
    /// ```
    public nonisolated func streamingDecodable<T: Decodable & Sendable>(
        of type: T.Type = T.self, framing: RecordFraming = .lines, decoder: any DataDecoder = JSONDecoder(),
        maximumRecordSize: Int = defaultMaximumRecordSize, malformedRecords: MalformedRecordPolicy = .fail,
        automaticallyCancelling: Bool = true
    ) -> DataStreamValues<T> {
        DataStreamValues(base: streamingData(automaticallyCancelling: automaticallyCancelling)) {
            RecordValues<T>(framing: framing, maximumRecordSize: maximumRecordSize, malformed: malformedRecords, decoder: decoder)
        }
    }
}

/// Splits a body into JSON records and decodes each; counts records so errors can name them.
struct RecordValues<T: Decodable>: StreamValueDecoder {
    let framing: RecordFraming
    let maximumRecordSize: Int
    let malformed: MalformedRecordPolicy
    let decoder: any DataDecoder
    private var partial = Data()
    private var recordNumber = 0

    init(framing: RecordFraming, maximumRecordSize: Int, malformed: MalformedRecordPolicy, decoder: any DataDecoder) {
        self.framing = framing
        self.maximumRecordSize = max(1, maximumRecordSize)
        self.malformed = malformed
        self.decoder = decoder
    }

    private var separator: UInt8 { framing == .lines ? 0x0A : 0x1E }

    mutating func feed(_ chunk: Data) -> (values: [T], failure: CourierError?) {
        var values: [T] = []
        var rest = chunk[...]
        do throws(CourierError) {
            while let end = rest.firstIndex(of: separator) {
                partial.append(contentsOf: rest[rest.startIndex..<end])
                try checkSize()
                let record = partial
                partial.removeAll(keepingCapacity: true)
                if let value = try decode(record) { values.append(value) }
                rest = rest[(end + 1)...]
            }
            partial.append(contentsOf: rest)
            try checkSize()
        } catch {
            return (values, error)
        }
        return (values, nil)
    }

    mutating func finish() -> (values: [T], failure: CourierError?) {
        let record = partial
        partial = Data()
        do throws(CourierError) {
            return ((try decode(record)).map { [$0] } ?? [], nil)
        } catch {
            return ([], error)
        }
    }

    private func checkSize() throws(CourierError) {
        guard partial.count > maximumRecordSize else { return }
        throw CourierError(
            .responseTooLarge,
            "Record \(recordNumber + 1) of the stream is longer than the limit of "
                + "\(maximumRecordSize) bytes (maximumRecordSize); \(partial.count) bytes had arrived without its end.")
    }

    /// The record decoded; `nil` for a blank record or a skipped malformed one.
    private mutating func decode(_ record: Data) throws(CourierError) -> T? {
        guard record.contains(where: { !Self.isWhitespace($0) }) else { return nil }
        recordNumber += 1
        do {
            return try decoder.decode(T.self, from: record)
        } catch {
            if malformed == .skip { return nil }
            throw CourierError(
                .serializationFailed, "Record \(recordNumber) of the stream could not be decoded as \(T.self): \(error)",
                underlyingError: error)
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
