import Foundation

/// A request body read from an `InputStream` or an `AsyncSequence`, for one send only.
///
/// A reader thread of its own reads an `InputStream` (it may block in `read`); a task of its own,
/// on a serial queue of its own rather than Swift's global pool, iterates an `AsyncSequence`
/// (awaiting room). Either fills a buffer of at most ``capacity`` bytes, so memory stays bounded
/// whatever the body's size.
/// Transports take the bytes without blocking (``read(into:)``, curl) or waiting for them
/// (``readBlocking(into:)``, URLSession). A stream that fails, or a second send (a retry, a
/// 307/308 redirect), ends the body with ``failure`` instead of bytes: the body is exactly the
/// stream's bytes or the transfer fails, never a truncated body that looks complete. A body of
/// declared ``declaredLength`` holds back its last byte until its source has ended with exactly
/// that many, so a source that is shorter or longer fails the transfer instead of being sent short
/// or cut.
@_spi(Transport) public final class BodyStream: @unchecked Sendable, Hashable {
    // `@unchecked`: `condition` guards every field of `state`, including the InputStream until the
    // reader thread takes it (after that, only the reader thread touches the stream), the producer
    // task and the continuation it waits on for room.

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

    /// Where the bytes come from.
    private enum Source {
        case inputStream(InputStream)
        /// Iterates a sequence, appending each element through ``append(_:)``.
        case sequence(@Sendable (BodyStream) async -> Void)
    }

    private struct State {
        var source: Source?
        var producer: Task<Void, Never>?
        var roomWaiter: CheckedContinuation<Void, Never>?
        var produced: Int64 = 0
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

    /// The body's length, when its source declared one (sent as `Content-Length`).
    public let declaredLength: Int64?

    /// Wraps `stream`, which must not have been opened; Courier opens, reads and closes it.
    init(_ stream: InputStream) {
        state = State(source: .inputStream(stream))
        declaredLength = nil
    }

    /// Iterates `sequence` on a task of its own once the transport first reads, appending each
    /// element when the buffer has room; `length`, when given, is the exact byte count it must yield.
    init<Body: AsyncSequence & Sendable>(_ sequence: Body, length: Int64?) where Body.Element: Sequence<UInt8> {
        guard (length ?? 0) >= 0 else {
            declaredLength = nil
            state = State(
                source: nil,
                failure: CourierError(.bodyStreamFailed, "The request body's declared length is negative (\(length ?? 0)); nothing is sent."))
            return
        }
        declaredLength = length
        state = State(
            source: .sequence({ body in
                do {
                    var elements = sequence.makeAsyncIterator()
                    // Room first, then the next element: the buffer and one element are all that is held.
                    while await body.waitForRoom() {
                        guard let element = try await elements.next() else { return body.finish(failure: nil) }
                        body.append(element)
                    }
                } catch {
                    body.finish(failure: error)
                }
            }))
    }

    /// Why the body could not be read, once it could not.
    public var failure: CourierError? { locked { $0.failure } }

    /// Bytes handed to the transport so far.
    public var bytesRead: Int64 { locked { $0.handedOut } }

    /// Bytes read from the stream and not handed out yet.
    var bufferedByteCount: Int { locked { $0.buffer.count } }

    /// Bytes taken from the source so far (handed out or buffered).
    var producedByteCount: Int64 { locked { $0.produced } }

    /// Marks the body as being sent; a second send fails with `.bodyStreamFailed`.
    public func claim(url: URL?) throws(CourierError) {
        let first = locked { state -> Bool in
            defer { state.claimed = true }
            return !state.claimed
        }
        guard first else {
            throw CourierError(
                .bodyStreamFailed,
                "The request body comes from a stream (an InputStream or an AsyncSequence), which can be read only "
                    + "once: it cannot be sent again for a retry or a redirect.", url: url)
        }
    }

    /// Runs `waker` when bytes arrive after a read that found none, on the thread that brought
    /// them: an `InputStream`'s reader thread, or an `AsyncSequence`'s producer queue.
    public func setWaker(_ waker: (@Sendable () -> Void)?) {
        locked { $0.waker = waker }
    }

    /// Copies buffered bytes without blocking.
    public func read(into target: UnsafeMutableRawBufferPointer) -> ReadResult {
        startReaderIfNeeded()
        return locked { state in
            if state.failure != nil { return .failed }
            if available(in: state) == 0 {
                if state.ended, state.buffer.isEmpty { return .end }
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
        while available(in: state) == 0, !(state.ended && state.buffer.isEmpty), state.failure == nil, !state.stopped { condition.wait() }
        if state.failure != nil || (state.stopped && available(in: state) == 0 && !state.ended) { return -1 }
        if state.buffer.isEmpty { return 0 }
        return take(into: target, from: &state)
    }

    /// Stops reading (the transfer ended): the reader thread closes the stream after its current
    /// read; a sequence's task is cancelled.
    public func stop() {
        let (producer, waiter) = locked { state in
            state.stopped = true
            state.waker = nil
            defer { state.roomWaiter = nil }
            return (state.producer, state.roomWaiter)
        }
        producer?.cancel()
        waiter?.resume()
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

    /// Bytes that may be handed out now: all that are buffered, but a body of declared length
    /// keeps its last byte until the source has ended (a source that turns out longer or
    /// shorter then fails the transfer before the body is complete).
    private func available(in state: State) -> Int {
        guard let declaredLength, !state.ended else { return state.buffer.count }
        return Int(max(0, min(Int64(state.buffer.count), declaredLength - 1 - state.handedOut)))
    }

    private func take(into target: UnsafeMutableRawBufferPointer, from state: inout State) -> Int {
        let count = min(target.count, available(in: state))
        state.buffer.withUnsafeBytes { bytes in
            target.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        }
        state.buffer.removeFirst(count)
        if state.buffer.isEmpty { state.buffer = Data() }
        state.handedOut += Int64(count)
        if state.buffer.count < Self.capacity, let waiter = state.roomWaiter {
            state.roomWaiter = nil
            waiter.resume()
        }
        return count
    }

    private func startReaderIfNeeded() {
        let source: Source? = locked { state in
            guard !state.started else { return nil }
            state.started = true
            defer { state.source = nil }
            return state.source
        }
        switch source {
        case nil:
            return
        case .sequence(let produce):
            // Off Swift's global pool: URLSession waits for these bytes on FoundationNetworking's
            // queue, which every URLSession of the process shares, and the pool's few threads may
            // all be busy or waiting for that same queue (user code can call FoundationNetworking
            // directly), so the producer must not need one.
            let task = Task(executorPreference: SerialQueueTaskExecutor(label: "courier.body-stream")) { [self] in await produce(self) }
            let stopped = locked { state in
                state.producer = task
                return state.stopped
            }
            if stopped { task.cancel() }
        case .inputStream(let stream):
            startReaderThread(stream)
        }
    }

    private func startReaderThread(_ source: InputStream) {
        let box = StreamBox(source)
        let thread = Thread { [self] in readAll(box.take()) }
        thread.name = "Courier body stream"
        thread.start()
    }

    // MARK: - The sequence's task

    /// Waits until the buffer has room; false once the transfer stopped (the task then ends).
    fileprivate func waitForRoom() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = locked { state -> Bool in
                if state.stopped || state.buffer.count < Self.capacity { return true }
                state.roomWaiter = continuation
                return false
            }
            if ready { continuation.resume() }
        }
        return locked { !$0.stopped && $0.failure == nil }
    }

    /// Buffers one element of the sequence; more bytes than the declared length fail the body.
    fileprivate func append(_ element: some Sequence<UInt8>) {
        let waker = locked { state -> (@Sendable () -> Void)? in
            guard !state.stopped, state.failure == nil else { return nil }
            let before = state.buffer.count
            state.buffer.append(contentsOf: element)
            state.produced += Int64(state.buffer.count - before)
            if let declaredLength, state.produced > declaredLength {
                state.failure = CourierError(
                    .bodyStreamFailed,
                    "The request body's sequence yielded more than the \(declaredLength) bytes it declared; nothing past them is sent.")
            }
            return wake(&state)
        }
        waker?()
    }

    /// Ends the body: the sequence finished, or threw `error`; fewer bytes than declared fail it.
    fileprivate func finish(failure error: (any Error)?) {
        let waker = locked { state -> (@Sendable () -> Void)? in
            guard !state.stopped, state.failure == nil else { return nil }
            if let error {
                state.failure = CourierError(
                    .bodyStreamFailed,
                    "The request body's sequence failed after \(state.produced) bytes: \(error.localizedDescription)",
                    underlyingError: error)
            } else if let declaredLength, state.produced != declaredLength {
                state.failure = CourierError(
                    .bodyStreamFailed,
                    "The request body's sequence ended after \(state.produced) of the \(declaredLength) bytes it declared; the body is not sent short."
                )
            } else {
                state.ended = true
            }
            return wake(&state)
        }
        waker?()
    }

    private func wake(_ state: inout State) -> (@Sendable () -> Void)? {
        guard state.consumerWaiting else { return nil }
        state.consumerWaiting = false
        return state.waker
    }

    // MARK: - The InputStream's thread

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

/// Runs a task's jobs on a serial dispatch queue of its own instead of Swift's global pool, whose
/// threads may all be blocked in code that waits for the task.
private final class SerialQueueTaskExecutor: TaskExecutor {
    private let queue: DispatchQueue

    init(label: String) { queue = DispatchQueue(label: label) }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
