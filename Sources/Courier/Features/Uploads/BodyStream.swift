import Foundation

/// A request body read from an `InputStream` of unknown length, for one send only.
///
/// A reader thread of its own reads the stream (an `InputStream` may block in `read`) into a
/// buffer of at most ``capacity`` bytes, so memory stays bounded whatever the stream's size.
/// Transports take the bytes without blocking (``read(into:)``, curl) or waiting for them
/// (``readBlocking(into:)``, URLSession). A stream that fails, or a second send (a retry, a
/// 307/308 redirect), ends the body with ``failure`` instead of bytes: the body is exactly the
/// stream's bytes or the transfer fails, never a truncated body that looks complete.
@_spi(Transport) public final class BodyStream: @unchecked Sendable, Hashable {
    // `@unchecked`: `condition` guards every field of `state`, including the InputStream until the
    // reader thread takes it (after that, only the reader thread touches the stream).

    /// What a non-blocking read found.
    public enum ReadResult: Sendable, Equatable {
        /// This many bytes were copied.
        case bytes(Int)
        /// The stream ended; every byte was handed out.
        case end
        /// Nothing is buffered yet; the waker runs once bytes (or the end, or a failure) arrive.
        case wait
        /// The stream failed (see ``BodyStream/failure``).
        case failed
    }

    private struct State {
        var source: InputStream?
        var claimed = false
        var started = false
        var buffer = Data()
        var ended = false
        var stopped = false
        var failure: CourierError?
        var waker: (@Sendable () -> Void)?
        var consumerWaiting = false
        var handedOut: Int64 = 0
    }

    /// The most bytes buffered ahead of the transport.
    static let capacity = 256 << 10
    /// The most bytes read from the stream at once.
    static let chunkSize = 64 << 10

    private let condition = NSCondition()
    private var state: State

    /// Wraps `stream`, which must not have been opened; Courier opens, reads and closes it.
    init(_ stream: InputStream) {
        state = State(source: stream)
    }

    /// Why the body could not be read, once it could not.
    public var failure: CourierError? { locked { $0.failure } }

    /// Bytes handed to the transport so far.
    public var bytesRead: Int64 { locked { $0.handedOut } }

    /// Bytes read from the stream and not handed out yet.
    var bufferedByteCount: Int { locked { $0.buffer.count } }

    /// Marks the body as being sent; a second send fails with `.bodyStreamFailed`.
    public func claim(url: URL?) throws(CourierError) {
        let first = locked { state -> Bool in
            defer { state.claimed = true }
            return !state.claimed
        }
        guard first else {
            throw CourierError(
                .bodyStreamFailed,
                "The request body comes from an InputStream, which can be read only once: it cannot be "
                    + "sent again for a retry or a redirect.", url: url)
        }
    }

    /// Runs `waker` (on the reader thread) when bytes arrive after a read that found none.
    public func setWaker(_ waker: (@Sendable () -> Void)?) {
        locked { $0.waker = waker }
    }

    /// Copies buffered bytes without blocking.
    public func read(into target: UnsafeMutableRawBufferPointer) -> ReadResult {
        startReaderIfNeeded()
        return locked { state in
            if state.failure != nil { return .failed }
            if state.buffer.isEmpty {
                if state.ended { return .end }
                state.consumerWaiting = true
                return .wait
            }
            return .bytes(take(into: target, from: &state))
        }
    }

    /// Copies buffered bytes, waiting until there are some: the count, 0 at the end, -1 after a failure.
    public func readBlocking(into target: UnsafeMutableRawBufferPointer) -> Int {
        startReaderIfNeeded()
        condition.lock()
        defer { condition.unlock() }
        while state.buffer.isEmpty, !state.ended, state.failure == nil, !state.stopped { condition.wait() }
        if state.failure != nil || (state.stopped && state.buffer.isEmpty && !state.ended) { return -1 }
        if state.buffer.isEmpty { return 0 }
        return take(into: target, from: &state)
    }

    /// Stops reading (the transfer ended): the reader thread closes the stream after its current read.
    public func stop() {
        locked { state in
            state.stopped = true
            state.waker = nil
        }
    }

    /// The same object.
    public static func == (lhs: BodyStream, rhs: BodyStream) -> Bool { lhs === rhs }

    /// Hashes the identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - Inside

    private func locked<T>(_ body: (inout State) -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return body(&state)
    }

    private func take(into target: UnsafeMutableRawBufferPointer, from state: inout State) -> Int {
        let count = min(target.count, state.buffer.count)
        state.buffer.withUnsafeBytes { bytes in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
        state.buffer.removeFirst(count)
        if state.buffer.isEmpty { state.buffer = Data() }
        state.handedOut += Int64(count)
        return count
    }

    private func startReaderIfNeeded() {
        let source: InputStream? = locked { state in
            guard !state.started else { return nil }
            state.started = true
            defer { state.source = nil }
            return state.source
        }
        guard let source else { return }
        let box = StreamBox(source)
        let thread = Thread { [self] in readAll(box.take()) }
        thread.name = "Courier body stream"
        thread.start()
    }

    /// The reader thread: reads the stream to its end, a failure, or a stop.
    private func readAll(_ stream: InputStream?) {
        guard let stream else { return }
        stream.open()
        defer { stream.close() }
        var chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        while true {
            // Wait for room, or for the transfer to stop.
            condition.lock()
            while state.buffer.count >= Self.capacity, !state.stopped { condition.wait() }
            let stopped = state.stopped
            condition.unlock()
            if stopped { return }

            let count = chunk.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { stream.read($0, maxLength: buffer.count) } ?? -1
            }
            var waker: (@Sendable () -> Void)?
            condition.lock()
            if count > 0 {
                state.buffer.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                state.ended = true
            } else {
                let underlying = stream.streamError
                state.failure = CourierError(
                    .bodyStreamFailed,
                    "Reading the request body's InputStream failed after \(state.handedOut + Int64(state.buffer.count)) bytes"
                        + (underlying.map { ": \($0.localizedDescription)" } ?? "."), underlyingError: underlying)
            }
            if state.consumerWaiting {
                state.consumerWaiting = false
                waker = state.waker
            }
            let done = count <= 0
            condition.broadcast()
            condition.unlock()
            waker?()
            if done { return }
        }
    }
}

/// Carries the `InputStream` (not `Sendable`) to the reader thread, which is its only user from then on.
private final class StreamBox: @unchecked Sendable {
    // `@unchecked`: the lock guards the stream until the reader thread takes it, once.
    private let lock = NSLock()
    private var stream: InputStream?

    init(_ stream: InputStream) { self.stream = stream }

    func take() -> InputStream? {
        lock.lock()
        defer { lock.unlock() }
        defer { stream = nil }
        return stream
    }
}
