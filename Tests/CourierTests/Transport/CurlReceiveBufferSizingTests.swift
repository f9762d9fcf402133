@testable import Courier
import Testing

/// Each transfer's receive buffer: the full size for an origin not seen yet, down to what its
/// responses need only after a run of small ones, and back up at once for a large one.
@Suite("Curl receive buffer sizing")
struct CurlReceiveBufferSizingTests {
    static let full = 64 << 10

    @Test("an origin not seen yet gets the transport's size")
    func unknownOriginGetsTheFullSize() {
        let sizing = CurlReceiveBufferSizing(largest: Self.full)
        #expect(sizing.size(for: "http://127.0.0.1:8080") == Self.full)
    }

    @Test("small responses bring the size down only after a run of them, to the largest they needed")
    func aRunOfSmallResponsesShrinksTheBuffer() {
        var sizing = CurlReceiveBufferSizing(largest: Self.full)
        let origin = "http://a:1"
        // (body bytes of the response just finished, the size the next transfer gets)
        let table: [(Int64, Int)] = [
            (100, Self.full), (100, Self.full), (100, Self.full), (5_000, Self.full),
            (100, Self.full), (100, Self.full), (100, Self.full), (100, 8 << 10),
            (100, 8 << 10), (100, 8 << 10), (100, 8 << 10), (100, 8 << 10),
            (100, 8 << 10), (100, 8 << 10), (100, 8 << 10), (100, 4 << 10),
        ]
        for (step, (body, next)) in table.enumerated() {
            sizing.record(origin: origin, bodyBytes: body)
            #expect(sizing.size(for: origin) == next, "after response \(step + 1) of \(body) bytes")
        }
        #expect(sizing.size(for: "http://b:1") == Self.full, "another origin keeps its own size")
        #expect(sizing.size(for: origin, expectsLargeBody: true) == Self.full, "a download or stream after them gets the full size")
    }

    @Test("a response larger than the current size raises it at once and restarts the run")
    func aLargeResponseRaisesTheSizeAtOnce() {
        var sizing = CurlReceiveBufferSizing(largest: Self.full)
        let origin = "http://a:1"
        for _ in 0..<CurlReceiveBufferSizing.shrinkAfter { sizing.record(origin: origin, bodyBytes: 10) }
        #expect(sizing.size(for: origin) == CurlReceiveBufferSizing.smallest)
        sizing.record(origin: origin, bodyBytes: 20_000)
        #expect(sizing.size(for: origin) == 32 << 10)
        sizing.record(origin: origin, bodyBytes: 10 << 20)
        #expect(sizing.size(for: origin) == Self.full)
        for _ in 0..<(CurlReceiveBufferSizing.shrinkAfter - 1) { sizing.record(origin: origin, bodyBytes: 10) }
        #expect(sizing.size(for: origin) == Self.full, "one response short of the run")
    }

    @Test("sizes stay between the smallest and the transport's size")
    func sizesAreBounded() {
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: 0, largest: Self.full) == CurlReceiveBufferSizing.smallest)
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: 3 << 10, largest: Self.full) == 4 << 10)
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: (3 << 10) + 1, largest: Self.full) == 8 << 10)
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: Int64.max, largest: Self.full) == Self.full)
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: -1, largest: Self.full) == Self.full)
        #expect(CurlReceiveBufferSizing.bufferSize(toHold: 10, largest: 2 << 10) == 2 << 10, "a transport size below the smallest wins")
    }

    @Test("past the remembered origins the table starts afresh")
    func theTableIsBounded() {
        var sizing = CurlReceiveBufferSizing(largest: Self.full)
        for _ in 0..<CurlReceiveBufferSizing.shrinkAfter { sizing.record(origin: "first", bodyBytes: 10) }
        #expect(sizing.size(for: "first") == CurlReceiveBufferSizing.smallest)
        for index in 0..<CurlReceiveBufferSizing.rememberedOrigins { sizing.record(origin: "o\(index)", bodyBytes: 10) }
        #expect(sizing.size(for: "first") == Self.full)
    }
}
