import Foundation

/// The WHATWG HTML "server-sent events" parser: bytes in, events out, with no I/O.
///
/// Feed it the body as it arrives, in chunks split anywhere; it gives the same events whatever the
/// split. Lines end in CRLF, LF or CR (a CR ending one chunk and an LF starting the next are one
/// line end); a leading UTF-8 byte-order mark is dropped; each line is decoded as UTF-8 with
/// invalid bytes replaced (U+FFFD). Events are dispatched only at a blank line, an event with no
/// data is not dispatched, and an unterminated final event is never dispatched.
///
/// Memory is bounded: the line being read plus the data of the event being built may not pass
/// ``maximumEventSize`` bytes.
///
/// ```swift
/// var parser = ServerSentEventParser()
/// let events = try parser.parse(Data("data: hello\n\n".utf8))   // [ServerSentEvent(data: "hello")]
/// ```
public struct ServerSentEventParser: Sendable {
    /// The default limit of one event (its data and the line being read): 8 MiB.
    public static let defaultMaximumEventSize = 8 << 20

    /// The most bytes one event may hold (the line being read plus the event's data so far).
    public let maximumEventSize: Int

    /// The last event ID (`id:`) as of the last blank line, carried from event to event; `nil` when
    /// none was set or an empty `id:` reset it. A reconnection sends it as `Last-Event-ID`.
    public private(set) var lastEventID: String?

    /// The reconnection time in milliseconds the stream set last (`retry:`), if it set one.
    public private(set) var reconnectionTime: Int?

    // The bytes of a line not yet ended (only when a line spans chunks).
    private var partialLine: [UInt8] = []
    // The data of the event being built ("\n" after each data line).
    private var dataBuffer: [UInt8] = []
    private var eventType: String?
    private var eventRetry: Int?
    // `id:` as read so far; it becomes `lastEventID` at the next blank line.
    private var idBuffer: String?
    // The byte-order mark is checked only at the very start of the stream.
    private var atStreamStart = true
    // The last byte fed was a CR: an LF first in the next chunk ends no line.
    private var lastWasCR = false

    /// A parser allowing events of up to `maximumEventSize` bytes.
    public init(maximumEventSize: Int = ServerSentEventParser.defaultMaximumEventSize) {
        self.maximumEventSize = max(1, maximumEventSize)
    }

    /// A parser that carries on a stream whose last event ID was `lastEventID` (after a reconnection).
    init(maximumEventSize: Int, lastEventID: String?, reconnectionTime: Int?) {
        self.init(maximumEventSize: maximumEventSize)
        self.lastEventID = lastEventID
        self.idBuffer = lastEventID
        self.reconnectionTime = reconnectionTime
    }

    /// Readies the parser for the stream's next connection: an event not ended by its blank line
    /// (and a line not ended) is discarded, and the next bytes start a new stream (a leading
    /// byte-order mark is dropped again), while ``lastEventID`` and ``reconnectionTime`` carry
    /// over (WHATWG HTML, "Server-sent events": pending data is discarded at the end of a stream).
    mutating func beginNewConnection() {
        self = ServerSentEventParser(maximumEventSize: maximumEventSize, lastEventID: lastEventID, reconnectionTime: reconnectionTime)
    }

    /// Parses the next piece of the stream and returns the events it completed, in order. Throws
    /// `.responseTooLarge` when an event or a line passes ``maximumEventSize``; the parser must not
    /// be used after that.
    public mutating func parse(_ chunk: Data) throws(CourierError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        try parse(chunk) { events.append($0) }
        return events
    }

    /// Parses the next piece of the stream, calling `dispatch` with each event it completes.
    public mutating func parse(_ chunk: Data, dispatch: (consuming ServerSentEvent) -> Void) throws(CourierError) {
        let result: Result<Void, CourierError> = chunk.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(CourierError) {
                try parse(bytes, dispatch: dispatch)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    private mutating func parse(_ bytes: UnsafeBufferPointer<UInt8>, dispatch: (consuming ServerSentEvent) -> Void) throws(CourierError) {
        var start = 0
        let count = bytes.count
        if atStreamStart {
            // The BOM may itself arrive split: hold up to two bytes until it can be told apart.
            let seen = partialLine + Array(bytes.prefix(3 - min(3, partialLine.count)))
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            if seen.count < 3 && bom.starts(with: seen) {
                partialLine = seen
                return
            }
            atStreamStart = false
            if seen.starts(with: bom) {
                start = 3 - partialLine.count
                partialLine.removeAll()
            }
        }
        if lastWasCR, start < count {
            lastWasCR = false
            if bytes[start] == 0x0A { start += 1 }
        }
        var lineStart = start
        var index = start
        while index < count {
            index = Self.lineEnd(in: bytes, from: index)
            guard index < count else { break }
            let byte = bytes[index]
            // A whole line: in the chunk alone, or the held start of it plus this chunk's part.
            if partialLine.isEmpty {
                // The same bound as a line held across chunks, so that where the stream is split never matters.
                try checkSize(index - lineStart)
                try processLine(UnsafeBufferPointer(rebasing: bytes[lineStart..<index]), dispatch: dispatch)
            } else {
                partialLine.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[lineStart..<index]))
                try checkSize(partialLine.count)
                let line = partialLine
                partialLine.removeAll(keepingCapacity: true)
                try line.withUnsafeBufferPointer { line throws(CourierError) in try processLine(line, dispatch: dispatch) }
            }
            index += 1
            if byte == 0x0D {
                if index == count {
                    lastWasCR = true
                } else if bytes[index] == 0x0A {
                    index += 1
                }
            }
            lineStart = index
        }
        if lineStart < count {
            partialLine.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[lineStart..<count]))
            try checkSize(partialLine.count)
        }
    }

    /// The index of the first CR or LF at or after `start`, or `bytes.count`: two `memchr` scans
    /// (vectorised), the second only as far as the first found.
    private static func lineEnd(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = bytes.baseAddress, start < bytes.count else { return bytes.count }
        let remaining = bytes.count - start
        var end = bytes.count
        if let found = memchr(base + start, 0x0A, remaining) {
            end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        if end > start, let found = memchr(base + start, 0x0D, end - start) {
            end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
        }
        return end
    }

    private func checkSize(_ lineBytes: Int) throws(CourierError) {
        if lineBytes + dataBuffer.count > maximumEventSize {
            throw CourierError(
                .responseTooLarge,
                "An event of the stream is larger than the limit of \(maximumEventSize) bytes "
                    + "(maximumEventSize); \(lineBytes + dataBuffer.count) bytes had arrived without an end.")
        }
    }

    private mutating func processLine(_ line: UnsafeBufferPointer<UInt8>, dispatch: (consuming ServerSentEvent) -> Void) throws(CourierError) {
        if line.isEmpty {
            dispatchEvent(dispatch)
            return
        }
        if line[0] == 0x3A { return }  // ":" a comment
        let colon = line.firstIndex(of: 0x3A)
        let name = UnsafeBufferPointer(rebasing: line[..<(colon ?? line.count)])
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count, line[valueStart] == 0x20 { valueStart += 1 }
        let value = UnsafeBufferPointer(rebasing: line[valueStart...])
        switch name.count {
        case 4 where name[0] == 0x64 && name[1] == 0x61 && name[2] == 0x74 && name[3] == 0x61:  // "data"
            try checkSize(value.count + 1)
            dataBuffer.append(contentsOf: value)
            dataBuffer.append(0x0A)
        case 5 where name[0] == 0x65 && name[1] == 0x76 && name[2] == 0x65 && name[3] == 0x6E && name[4] == 0x74:  // "event"
            eventType = String(decoding: value, as: UTF8.self)
        case 2 where name[0] == 0x69 && name[1] == 0x64:  // "id"
            if !value.contains(0) {
                idBuffer = value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
            }
        case 5 where name[0] == 0x72 && name[1] == 0x65 && name[2] == 0x74 && name[3] == 0x72 && name[4] == 0x79:  // "retry"
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
                // Digits only; a value past Int's range is taken as "as long as possible".
                var milliseconds = 0
                for digit in value {
                    let (times, overflow1) = milliseconds.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times.addingReportingOverflow(Int(digit - 0x30))
                    if overflow1 || overflow2 { milliseconds = .max; break }
                    milliseconds = sum
                }
                reconnectionTime = milliseconds
                eventRetry = milliseconds
            }
        default:
            break  // unknown fields are ignored
        }
    }

    private mutating func dispatchEvent(_ dispatch: (consuming ServerSentEvent) -> Void) {
        defer {
            dataBuffer.removeAll(keepingCapacity: dataBuffer.capacity <= 64 << 10)
            eventType = nil
            eventRetry = nil
        }
        lastEventID = idBuffer
        guard !dataBuffer.isEmpty else { return }
        dataBuffer.removeLast()  // the "\n" after the last data line
        let type = eventType.flatMap { $0.isEmpty ? nil : $0 } ?? "message"
        dispatch(ServerSentEvent(id: lastEventID, event: type, data: String(decoding: dataBuffer, as: UTF8.self), retry: eventRetry))
    }
}
