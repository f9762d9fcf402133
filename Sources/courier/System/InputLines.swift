import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lines of a descriptor (standard input), read on a thread of their own and handed over one
/// at a time: the thread reads the next line only once the previous one was taken, so a reader
/// that waits (a WebSocket whose `send` is held back) keeps at most one read buffer and one line in
/// memory, however much is piped in.
///
/// A line is delivered without its `\n` (or `\r\n`); a last line without a newline is delivered
/// too. A blocking `read` cannot be interrupted, so the thread is left behind when the command
/// ends before end of input: the process exits with it.
///
/// One task reads the lines (it is not `Sendable`: make it in the task that reads).
struct InputLines {
    private var lines: AsyncStream<Data>.Iterator
    /// Signalled each time a line is taken, letting the thread go on to the next one.
    private let taken = DispatchSemaphore(value: 0)

    /// Starts reading `descriptor` (standard input by default).
    init(descriptor: Int32 = STDIN_FILENO) {
        let (lines, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .unbounded)
        self.lines = lines.makeAsyncIterator()
        let taken = taken
        let thread = Thread {
            Self.readLines(
                descriptor,
                yield: { line in
                    guard case .enqueued = continuation.yield(line) else { return false }
                    taken.wait()
                    return true
                })
            continuation.finish()
        }
        thread.name = "courier.stdin"
        thread.start()
    }

    /// The next line, or nil at the end of input (or when it cannot be read).
    mutating func next() async -> Data? {
        let line = await lines.next()
        if line != nil { taken.signal() }
        return line
    }

    /// Reads `descriptor` to its end, calling `yield` with each line until it returns false.
    static func readLines(_ descriptor: Int32, yield: (Data) -> Bool) {
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var pending = Data()
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            pending.append(contentsOf: buffer[..<count])
            var start = pending.startIndex
            while let newline = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                var end = newline
                if end > start, pending[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                guard yield(Data(pending[start..<end])) else { return }
                start = newline + 1
            }
            pending = Data(pending[start...])
        }
        if !pending.isEmpty { _ = yield(pending) }
    }
}
