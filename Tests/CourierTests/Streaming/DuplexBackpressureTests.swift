import CourierLocking
import CourierTestServer
import CourierTestSupport
import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier

/// Full-duplex streams keep memory bounded whichever side stalls (#39): a consumer that reads
/// nothing holds the server back at the stream's window, and a server that reads nothing holds
/// the body's producer back at the 256 KiB send buffer. What the kernel's socket buffers took is
/// read from `/proc/net/tcp` (both ends are in this process) and set apart, so the bounds below are
/// Courier's own, not the machine's socket tuning.
extension DuplexStreamTests {
    /// The documented bounds, written out so that a change to either fails here: a stream's
    /// flow-control window, and the send buffer `streamRequest(...body:...)` documents.
    static let window = 1 << 20, sendBuffer = 256 << 10
    /// How far past its window curl may have read a response: its receive buffer and the piece
    /// in hand when the window filled.
    static let receiveSlack = 1 << 20
    /// How far past the send buffer a body may have been pulled: the element in hand and curl's
    /// upload buffer (64 KiB by default) with its chunk framing.
    static let sendSlack = 512 << 10

    @Test(.hangLimit(.seconds(120)))
    func aStalledConsumerHoldsTheServerBackThenGetsEveryByte() async throws {
        let size = 64 << 20
        try await withServer { server async throws in
            // A handler route: a `Resource` answers GET and HEAD only.
            server.route("/big") { _ in MockResponse(status: 200).body(.pattern(count: Int64(size), seed: 5)) }
            let heads = AsyncStream.makeStream(of: Int.self)
            let stream = makeSession(.curl, server: server).streamRequest("big", body: PatternChunks(total: 1000))
                .onHTTPResponse { heads.continuation.yield($0.statusCode) }
            var replies = stream.streamingData().makeAsyncIterator()
            var statuses = heads.stream.makeAsyncIterator()
            #expect(await statuses.next() == 200)
            // Nothing is read: the server writes until Courier's window and the sockets are full.
            let sent = try await Self.settled { Int(server.bytesSent(path: "/big")) }
            let queued = SocketCensus.queuedBytes(port: server.port)
            let held = sent - queued
            #expect(sent < size, "the server got to write all \(size) bytes")
            #expect(
                held <= Self.window + Self.receiveSlack,
                "Courier holds \(held) bytes (\(sent) written, \(queued) in socket buffers)")
            // Then the consumer reads it all, byte for byte.
            var received = Data()
            while let chunk = try await replies.next() { received += chunk }
            #expect(received.count == size)
            #expect(ExchangeConformanceTests.firstDifference(received, PatternBody.data(offset: 0, count: size, seed: 5)) == nil)
            #expect(await stream.error == nil)
        }
    }

    @Test(.hangLimit(.seconds(120)))
    func aServerThatStopsReadingHoldsTheBodysProducerBack() async throws {
        // The server reads the head, byte by byte, and nothing of the body.
        let server = try ScriptedReplyServer([.readHead, .hold])
        defer { server.stop() }
        let producer = CountingChunks()
        let stream = makeSession(.curl).streamRequest(server.url, body: producer)
        let consumer = Task { () -> CourierError? in
            do throws(CourierError) {
                for try await _ in stream.streamingData() {}
                return nil
            } catch {
                return error
            }
        }
        let pulled = try await Self.settled { producer.pulled }
        let queued = SocketCensus.queuedBytes(port: server.port)
        let ahead = pulled - queued
        #expect(pulled > Self.sendBuffer, "the body started and filled the send buffer")
        #expect(
            ahead <= Self.sendBuffer + Self.sendSlack,
            "Courier holds \(ahead) bytes of the body (\(pulled) pulled, \(queued) in socket buffers)")
        stream.cancel()
        #expect(await consumer.value?.kind == .cancelled)
        await HostileServerMatrixTests.expectNoSocketLeft(toPort: server.port)
    }

    /// Polls `value` until it holds still for five readings 100 ms apart: how these tests see that
    /// a transfer held back stopped moving, which nothing announces. Only decides when to look;
    /// nothing is asserted on the time it takes.
    static func settled(_ value: () -> Int) async throws -> Int {
        var last = value()
        var steady = 0
        while steady < 5 {
            try await Task.sleep(for: .milliseconds(100))
            let now = value()
            steady = now == last ? steady + 1 : 0
            last = now
        }
        return last
    }
}

/// An endless body of 16 KiB elements that counts the bytes pulled from it.
final class CountingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    static let element = Data(repeating: 0x43, count: 16 << 10)
    private let count = Locked(0)

    /// Bytes handed out so far.
    var pulled: Int { count.withLock { $0 } }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: self) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: CountingChunks

        func next() async -> Data? {
            guard !Task.isCancelled else { return nil }
            chunks.count.withLock { $0 += CountingChunks.element.count }
            return CountingChunks.element
        }
    }
}

extension SocketCensus {
    /// Bytes waiting in the kernel on this process's TCP connections to or from 127.0.0.1:`port`
    /// (every queue of both ends: unread on one side, unsent or unacknowledged on the other).
    static func queuedBytes(port: Int) -> Int {
        guard let table = read("/proc/net/tcp") else { return 0 }
        let end = "0100007F:" + String(format: "%04X", port)
        let mine = ownSocketInodes()
        return table.split(separator: "\n").dropFirst().reduce(0) { total, line in
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9, columns[1] == end || columns[2] == end, mine.contains(String(columns[9])) else { return total }
            let queues = columns[4].split(separator: ":").compactMap { Int($0, radix: 16) }
            return total + queues.reduce(0, +)
        }
    }
}
