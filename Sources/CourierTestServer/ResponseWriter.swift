import Foundation

/// Writes one scripted response to a socket: gate, delays, head, body framing and coding,
/// throttling, and socket effects at their points.
struct ResponseWriter {
    /// How writing a response ended.
    enum Outcome {
        /// Sent completely; `closeAfter` says whether the connection must now close.
        case completed(closeAfter: Bool)
        /// A scripted socket effect fired; the connection ends with it.
        case effect(SocketEffect)
        /// The client went away (a write failed, or it closed while the response was held).
        case clientGone
        /// The server is shutting down.
        case shutdown
    }

    private enum Pause {
        case ready
        case clientGone
        case shutdown
    }

    private static let blockSize = 64 * 1024

    private let core: ServerCore
    private let fd: Int32
    private let request: RecordedRequest
    /// Whether polling the socket still tells us anything: once the client has sent more data
    /// (a pipelined request) the socket stays readable, so we stop looking.
    private var watchesSocket = true

    init(core: ServerCore, fd: Int32, request: RecordedRequest) {
        self.core = core
        self.fd = fd
        self.request = request
    }

    /// Sends `response`; for a HEAD request only the head is sent.
    mutating func write(_ response: MockResponse, isHead: Bool, requestWantsClose: Bool) -> Outcome {
        let behavior = response.behavior
        if let gate = behavior.gate, !gate.isOpen {
            core.noteGate(gate)
            gate.enter()
            let outcome = pause(until: nil, gate: gate)
            gate.leave()
            if let ended = ended(outcome) { return ended }
        }
        if let delay = behavior.headersDelay, let ended = ended(pause(until: .now + delay, gate: nil)) {
            return ended
        }
        if let effect = behavior.effect(at: .afterRequest) { return .effect(effect) }

        let length = EncodedBodyReader.encodedCount(of: response.body.count, coding: behavior.coding)
        let noBodyStatus = (100..<200).contains(response.status) || response.status == 204 || response.status == 304
        let sendsBody = !isHead && !(noBodyStatus && length == 0 && response.body.count == 0)
        let closeAfter = requestWantsClose || behavior.closesConnection || behavior.framing == .closeDelimited
        let head = makeHead(response, length: length, noBodyStatus: noBodyStatus, closeAfter: closeAfter)
        guard Socket.writeAll(fd, head) else { return .clientGone }
        if let effect = behavior.effect(at: .responseStart) { return .effect(effect) }

        if sendsBody {
            if let delay = behavior.bodyDelay, let ended = ended(pause(until: .now + delay, gate: nil)) {
                return ended
            }
            if let ended = writeBody(response, behavior: behavior) { return ended }
        }
        if let effect = behavior.effect(at: .responseEnd) { return .effect(effect) }
        return .completed(closeAfter: closeAfter)
    }

    private func ended(_ pause: Pause) -> Outcome? {
        switch pause {
        case .ready: return nil
        case .clientGone: return .clientGone
        case .shutdown: return .shutdown
        }
    }

    private func makeHead(_ response: MockResponse, length: Int64, noBodyStatus: Bool, closeAfter: Bool) -> [UInt8] {
        var head = "HTTP/1.1 \(response.status) \(response.reasonPhrase)\r\n"
        for (name, value) in response.headers {
            head += "\(name): \(value)\r\n"
        }
        let headers = response.headers
        if core.configuration.sendsDateHeader, !headers.contains("Date") {
            head += "Date: \(HTTPDate.format(Date()))\r\n"
        }
        switch response.behavior.framing {
        case .contentLength:
            // 1xx and 204 never carry Content-Length (RFC 9110 §8.6); an empty 304 needs none.
            let omitted =
                response.behavior.omitsContentLength || headers.contains("Content-Length")
                || (noBodyStatus && response.status != 304) || (response.status == 304 && length == 0)
            if !omitted { head += "Content-Length: \(length)\r\n" }
        case .chunked:
            if !headers.contains("Transfer-Encoding") { head += "Transfer-Encoding: chunked\r\n" }
        case .closeDelimited:
            break
        }
        if closeAfter, !headers.contains("Connection") { head += "Connection: close\r\n" }
        head += "\r\n"
        return Array(head.utf8)
    }

    /// Writes the body; returns nil when it was sent completely.
    private mutating func writeBody(_ response: MockResponse, behavior: ResponseBehavior) -> Outcome? {
        var encoder = EncodedBodyReader(response.body, coding: behavior.coding)
        let total = encoder.count
        let trigger = behavior.bodyEffect
        var chunkSize: Int?
        if case .chunked(let size) = behavior.framing { chunkSize = size }
        var chunkRemaining = 0
        var sent: Int64 = 0
        var periodRemaining = behavior.throttle?.bytes ?? Int.max
        var periodIndex = 0
        let paceStart = ContinuousClock.now
        var output: [UInt8] = []

        var paceIndex = 0
        while sent < total {
            if let trigger, sent >= trigger.afterBytes { return .effect(trigger.effect) }
            while paceIndex < behavior.paces.count, behavior.paces[paceIndex].offset <= sent {
                let delay = behavior.paces[paceIndex].delay
                paceIndex += 1
                if let ended = ended(pause(until: .now + delay, gate: nil)) { return ended }
            }
            if let hold = behavior.bodyPause, sent >= hold.afterBytes, !hold.gate.isOpen {
                core.noteGate(hold.gate)
                hold.gate.enter()
                let outcome = pause(until: nil, gate: hold.gate)
                hold.gate.leave()
                if let ended = ended(outcome) { return ended }
            }
            var want = Int(min(Int64(ResponseWriter.blockSize), total - sent))
            if let trigger { want = Int(min(Int64(want), trigger.afterBytes - sent)) }
            if let hold = behavior.bodyPause, sent < hold.afterBytes, !hold.gate.isOpen {
                want = Int(min(Int64(want), hold.afterBytes - sent))
            }
            if paceIndex < behavior.paces.count { want = Int(min(Int64(want), behavior.paces[paceIndex].offset - sent)) }
            want = min(want, periodRemaining)
            let bytes = encoder.read(maxCount: want)
            if bytes.isEmpty { break }
            output.removeAll(keepingCapacity: true)
            if let chunkSize {
                var index = 0
                while index < bytes.count {
                    if chunkRemaining == 0 {
                        chunkRemaining = Int(min(Int64(chunkSize), total - sent - Int64(index)))
                        output.append(contentsOf: Array(String(chunkRemaining, radix: 16).utf8) + [13, 10])
                    }
                    let count = min(chunkRemaining, bytes.count - index)
                    output.append(contentsOf: bytes[index..<(index + count)])
                    index += count
                    chunkRemaining -= count
                    if chunkRemaining == 0 { output.append(contentsOf: [13, 10]) }
                }
            } else {
                output = bytes
            }
            // Counted before the write so a client that has read the bytes sees them counted.
            core.addBytesSent(bytes.count, path: request.path)
            guard Socket.writeAll(fd, output) else { return .clientGone }
            sent += Int64(bytes.count)
            if let throttle = behavior.throttle {
                periodRemaining -= bytes.count
                if periodRemaining == 0 {
                    periodRemaining = throttle.bytes
                    periodIndex += 1
                    if sent < total, let ended = ended(pause(until: paceStart + throttle.period * periodIndex, gate: nil)) {
                        return ended
                    }
                }
            }
        }
        if let trigger, sent >= trigger.afterBytes { return .effect(trigger.effect) }
        let lastChunk = "0\r\n" + behavior.trailers.map { $0 + "\r\n" }.joined() + "\r\n"
        if chunkSize != nil, !Socket.writeAll(fd, Array(lastChunk.utf8)) { return .clientGone }
        return nil
    }

    /// Waits until `deadline` has passed and `gate` (if any) is open, in slices of at most 10 ms,
    /// watching for shutdown and for the client closing the connection.
    private mutating func pause(until deadline: ContinuousClock.Instant?, gate: Gate?) -> Pause {
        while true {
            if core.isStopping { return .shutdown }
            let gateOpen = gate?.isOpen ?? true
            let now = ContinuousClock.now
            if gateOpen, deadline.map({ now >= $0 }) ?? true { return .ready }
            var slice: Int32 = 10
            if gateOpen, let deadline { slice = max(1, min(10, (deadline - now).millisecondsRoundedUp)) }
            if watchesSocket {
                guard Socket.waitReadable(fd, milliseconds: slice) else { continue }
                switch Socket.peek(fd) {
                case .nothing:
                    continue
                case .data:
                    watchesSocket = false
                case .closed:
                    if core.isStopping { return .shutdown }
                    return .clientGone
                }
            } else {
                Socket.sleep(milliseconds: slice)
            }
        }
    }
}
