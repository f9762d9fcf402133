import CourierWebSocketWire
import Foundation

/// Runs a ``WebSocketScript`` on an upgraded connection, on the connection's thread: performs the
/// steps, and meanwhile reads, checks and records every client frame as a strict server would
/// (RFC 6455 §5), answering pings and the client's close.
struct WebSocketSession {
    private typealias Opcode = WebSocketScript.Opcode

    /// A frame's header, parsed before its payload has arrived so a frame that is too large is
    /// refused without buffering it.
    private struct Header {
        var fin: Bool
        var rsv: (Bool, Bool, Bool)
        var opcode: Opcode
        var maskingKey: (UInt8, UInt8, UInt8, UInt8)?
        var length: UInt64
        var size: Int
    }

    private static let readSize = 64 * 1024

    private let core: ServerCore
    private let fd: Int32
    private let script: WebSocketScript
    private let recording: WebSocketRecording
    private let recordLimit: Int
    /// Received bytes live in `buffer[start..<end]`; the array's count is its capacity, so
    /// reading never resizes it in the common case.
    private var buffer: [UInt8]
    private var start = 0
    private var end: Int
    private var sentClose = false
    /// The client's close frame arrived.
    private var receivedClientClose = false
    /// A ``WebSocketScript/Step/receiveClose`` step runs: the client's close frame does not end the session.
    private var keepsConnectionAfterClientClose = false
    private var outcome: (ending: Connection.Ending, recorded: WebSocketRecording.Ending)?
    /// How many more messages to echo (`Int.max`: until the client closes); nil when not echoing.
    private var echoRemaining: Int?
    private var messageCount = 0
    /// The opcode and payload of a fragmented message still arriving.
    private var partial: (opcode: Opcode, payload: [UInt8])?

    init(core: ServerCore, fd: Int32, script: WebSocketScript, recording: WebSocketRecording, leftover: [UInt8]) {
        self.core = core
        self.fd = fd
        self.script = script
        self.recording = recording
        self.recordLimit = core.configuration.maxRecordedBodyBytes
        self.buffer = leftover
        self.end = leftover.count
    }

    /// Runs the script; returns how the connection must end.
    mutating func run() -> Connection.Ending {
        for step in script.steps where outcome == nil {
            perform(step)
        }
        // Steps done: stay open until the client closes (or breaks the protocol, or goes away).
        if outcome == nil, receivedClientClose { outcome = (.close, .closeHandshake) }
        if outcome == nil { pump { _ in false } }
        let outcome = outcome ?? (.close, .serverShutdown)
        recording.finish(outcome.recorded)
        if outcome.recorded == .clientDisconnected || outcome.ending == .stall {
            core.markDisconnected(recording.request.sequenceNumber)
        }
        return outcome.ending
    }

    // MARK: Steps

    private mutating func perform(_ step: WebSocketScript.Step) {
        switch step {
        case .send(let message, let fragmentSize):
            send(message, fragmentSize: fragmentSize)
        case .frame(let frame):
            if frame.opcode == .close { noteServerClose(payload: frame.payload) }
            write(frame.wireBytes)
        case .raw(let bytes):
            write(bytes)
        case .ping(let payload):
            write(WebSocketScript.Frame(opcode: .ping, payload: payload).wireBytes)
        case .pong(let payload):
            write(WebSocketScript.Frame(opcode: .pong, payload: payload).wireBytes)
        case .echo(let messages):
            echoRemaining = messages.map { max(0, $0) } ?? .max
            pump { $0.echoRemaining == 0 }
            echoRemaining = nil
        case .receive(let count):
            let target = messageCount + max(0, count)
            pump { $0.messageCount >= target }
        case .delay(let duration):
            pump(until: .now + duration) { _ in false }
        case .wait(let gate):
            core.noteGate(gate)
            gate.enter()
            pump { _ in gate.isOpen }
            gate.leave()
        case .close(let code, let reason):
            let frame = WebSocketScript.Frame.close(code: code, reason: reason)
            noteServerClose(payload: frame.payload)
            write(frame.wireBytes)
            // The client's close frame ends the session (see `receivedClose`).
            pump { _ in false }
        case .receiveClose:
            keepsConnectionAfterClientClose = true
            pump { $0.receivedClientClose }
            keepsConnectionAfterClientClose = false
        case .end(let effect):
            let ending: Connection.Ending
            switch effect {
            case .close: ending = .close
            case .reset: ending = .reset
            case .stall: ending = .stall
            case .shutdownOutput: ending = .shutdownOutput
            }
            outcome = (ending, .scripted(effect))
        }
    }

    private mutating func send(_ message: WebSocketScript.Message, fragmentSize: Int?) {
        let opcode: Opcode
        switch message {
        case .text: opcode = .text
        case .binary: opcode = .binary
        }
        let payload = message.data
        guard let fragmentSize, fragmentSize > 0, payload.count > fragmentSize else {
            write(WebSocketScript.Frame(opcode: opcode, payload: payload).wireBytes)
            return
        }
        var offset = payload.startIndex
        while offset < payload.endIndex, outcome == nil {
            let end = min(offset + fragmentSize, payload.endIndex)
            let frame = WebSocketScript.Frame(
                opcode: offset == payload.startIndex ? opcode : .continuation,
                payload: payload[offset..<end], fin: end == payload.endIndex)
            write(frame.wireBytes)
            offset = end
        }
    }

    private mutating func noteServerClose(payload: Data) {
        sentClose = true
        recording.recordServerClose(Self.close(from: payload))
    }

    private mutating func write(_ bytes: Data) {
        guard outcome == nil else { return }
        let written = bytes.withUnsafeBytes { Socket.writeAll(fd, $0) }
        if !written { outcome = (.close, core.isStopping ? .serverShutdown : .clientDisconnected) }
    }

    // MARK: Reading

    /// Reads and handles client frames until `isDone` says so, the session ends, `deadline`
    /// passes, or the server shuts down; waits in slices of at most 10 ms.
    private mutating func pump(until deadline: ContinuousClock.Instant? = nil, _ isDone: (Self) -> Bool) {
        while outcome == nil {
            handleBufferedFrames()
            if outcome != nil || isDone(self) { return }
            if core.isStopping {
                outcome = (.close, .serverShutdown)
                return
            }
            var slice: Int32 = 10
            if let deadline {
                let now = ContinuousClock.now
                if now >= deadline { return }
                slice = max(1, min(10, (deadline - now).millisecondsRoundedUp))
            }
            guard Socket.waitReadable(fd, milliseconds: slice) else { continue }
            if !fill() {
                outcome = (.close, core.isStopping ? .serverShutdown : .clientDisconnected)
            }
        }
    }

    /// Appends what the socket has; false at end of stream or on error.
    private mutating func fill() -> Bool {
        if start == end {
            start = 0
            end = 0
        }
        if buffer.count - end < Self.readSize {
            if start > 0 {
                let (from, count) = (start, end - start)
                buffer.withUnsafeMutableBytes { bytes in
                    guard let base = bytes.baseAddress else { return }
                    base.copyMemory(from: base + from, byteCount: count)
                }
                end = count
                start = 0
            }
            if buffer.count - end < Self.readSize {
                buffer += [UInt8](repeating: 0, count: max(Self.readSize, buffer.count))
            }
        }
        let received = buffer.withUnsafeMutableBytes { bytes in
            Socket.receive(fd, into: UnsafeMutableRawBufferPointer(rebasing: bytes[end...]))
        }
        guard received > 0 else { return false }
        end += received
        return true
    }

    private mutating func handleBufferedFrames() {
        while outcome == nil, let header = parseHeader() {
            if header.opcode.isControl, header.length > 125 {
                fail(1002, "a \(header.opcode) frame with \(header.length) payload bytes, over 125 (RFC 6455 §5.5)")
                return
            }
            let messageSoFar = header.opcode == .continuation ? (partial?.payload.count ?? 0) : 0
            if header.length > UInt64(script.maximumMessageSize - messageSoFar) {
                fail(
                    1009,
                    "a \(header.length)-byte frame makes a message larger than the server's limit of "
                        + "\(script.maximumMessageSize) bytes (RFC 6455 §7.4.1, 1009)")
                return
            }
            let length = Int(header.length)
            guard end - start >= header.size + length else { return }
            var payload = Array(buffer[(start + header.size)..<(start + header.size + length)])
            start += header.size + length
            if let key = header.maskingKey {
                payload.withUnsafeMutableBytes { WebSocketWire.mask($0, key: key) }
            }
            handle(header, payload: payload)
        }
    }

    /// The header at the front of the buffer, once complete; fails the connection on a length
    /// with the most significant bit set (§5.2).
    private mutating func parseHeader() -> Header? {
        let available = end - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let masked = second & 0x80 != 0
        var size = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            size += 2
            guard available >= size else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
        } else if length == 127 {
            size += 8
            guard available >= size else { return nil }
            length = buffer[(start + 2)..<(start + 10)].reduce(0) { $0 << 8 | UInt64($1) }
            if length >> 63 != 0 {
                fail(1002, "a 64-bit payload length with the most significant bit set (RFC 6455 §5.2)")
                return nil
            }
        }
        var key: (UInt8, UInt8, UInt8, UInt8)?
        if masked {
            guard available >= size + 4 else { return nil }
            key = (buffer[start + size], buffer[start + size + 1], buffer[start + size + 2], buffer[start + size + 3])
            size += 4
        }
        return Header(
            fin: first & 0x80 != 0, rsv: (first & 0x40 != 0, first & 0x20 != 0, first & 0x10 != 0),
            opcode: Opcode(rawValue: first & 0x0F), maskingKey: key, length: length, size: size)
    }

    private mutating func handle(_ header: Header, payload: [UInt8]) {
        let key = header.maskingKey.map { UInt32($0.0) << 24 | UInt32($0.1) << 16 | UInt32($0.2) << 8 | UInt32($0.3) }
        recording.record(
            WebSocketRecording.Frame(
                opcode: header.opcode, fin: header.fin, rsv1: header.rsv.0, rsv2: header.rsv.1, rsv3: header.rsv.2,
                maskingKey: key, payload: Data(payload.prefix(recordLimit)), payloadLength: payload.count))
        guard header.maskingKey != nil else {
            return fail(1002, "an unmasked \(header.opcode) frame from the client (RFC 6455 §5.1)")
        }
        guard !header.rsv.0, !header.rsv.1, !header.rsv.2 else {
            return fail(1002, "RSV bits set with no extension negotiated (RFC 6455 §5.2)")
        }
        guard header.opcode.isDefined else {
            return fail(1002, "the reserved opcode \(header.opcode) (RFC 6455 §5.2)")
        }
        if header.opcode.isControl {
            guard header.fin else { return fail(1002, "a fragmented \(header.opcode) frame (RFC 6455 §5.5)") }
            switch header.opcode {
            case .ping:
                if script.answersPings, !sentClose { write(WebSocketScript.Frame(opcode: .pong, payload: Data(payload)).wireBytes) }
            case .close:
                receivedClose(payload)
            default:
                break  // An unsolicited or answering pong needs nothing (§5.5.3).
            }
            return
        }
        if header.opcode == .continuation {
            guard partial != nil else {
                return fail(1002, "a continuation frame with no fragmented message to continue (RFC 6455 §5.4)")
            }
            partial?.payload += payload
        } else {
            guard partial == nil else {
                return fail(1002, "a new \(header.opcode) message inside a fragmented one (RFC 6455 §5.4)")
            }
            partial = (header.opcode, payload)
        }
        if header.fin, let message = partial {
            partial = nil
            completed(opcode: message.opcode, payload: message.payload)
        }
    }

    private mutating func completed(opcode: Opcode, payload: [UInt8]) {
        let message: WebSocketScript.Message
        if opcode == .text {
            guard let text = String(validating: payload, as: UTF8.self) else {
                return fail(1007, "a text message that is not valid UTF-8 (RFC 6455 §8.1)")
            }
            message = .text(text)
        } else {
            message = .binary(Data(payload))
        }
        recording.record(message)
        messageCount += 1
        if let remaining = echoRemaining, remaining > 0, !sentClose {
            write(WebSocketScript.Frame(opcode: opcode, payload: Data(payload)).wireBytes)
            echoRemaining = remaining == .max ? remaining : remaining - 1
        }
    }

    /// The client's close frame (§5.5.1): checked, recorded, answered with the same code unless
    /// the server closed first, and the end of the session either way.
    private mutating func receivedClose(_ payload: [UInt8]) {
        guard payload.count != 1 else { return fail(1002, "a close frame with a 1-byte payload (RFC 6455 §5.5.1)") }
        let close = Self.close(from: Data(payload))
        recording.recordClientClose(close)
        if let code = close.code, !Self.isValidCloseCode(code) {
            return fail(1002, "the close code \(code), which a peer must not send (RFC 6455 §7.4)")
        }
        if payload.count > 2, String(validating: payload[2...], as: UTF8.self) == nil {
            return fail(1007, "a close reason that is not valid UTF-8 (RFC 6455 §5.5.1)")
        }
        if !sentClose {
            let answer = WebSocketScript.Frame.close(code: close.code)
            noteServerClose(payload: answer.payload)
            write(answer.wireBytes)
        }
        receivedClientClose = true
        // The server closes the TCP connection first (§7.1.1), unless the script goes on.
        if outcome == nil, !keepsConnectionAfterClientClose { outcome = (.close, .closeHandshake) }
    }

    /// Fails the connection (§7.1.7): records the violation, sends a close frame with `code`
    /// unless one was sent already, and drops the connection.
    private mutating func fail(_ code: UInt16, _ violation: String) {
        recording.recordViolation(violation)
        if !sentClose {
            let frame = WebSocketScript.Frame.close(code: code)
            noteServerClose(payload: frame.payload)
            write(frame.wireBytes)
        }
        if outcome == nil { outcome = (.close, .failed(code: code)) }
    }

    /// Codes a peer may send (§7.4.1, §7.4.2, and the IANA registry's 1012–1014).
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }

    static func close(from payload: Data) -> WebSocketRecording.Close {
        guard payload.count >= 2 else { return WebSocketRecording.Close(code: nil) }
        let bytes = [UInt8](payload)
        return WebSocketRecording.Close(
            code: UInt16(bytes[0]) << 8 | UInt16(bytes[1]),
            reason: String(decoding: bytes[2...], as: UTF8.self))
    }
}
