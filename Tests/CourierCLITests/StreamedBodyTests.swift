@testable import courier
import Foundation
import Testing
import CourierTestSupport

/// Issue 25, bug 5, at unit level: ``StreamedBody`` appends chunks in place while collecting (the
/// bytes moved grow linearly with the body, not with chunks × body), writes each chunk as it
/// arrives when passing through, and never splits or re-decodes UTF-8.
@Suite struct StreamedBodyTests {
    /// Chunks of `size` bytes, `count` of them, each filled with its index.
    private static func chunks(_ count: Int, size: Int) -> [Data] {
        (0..<count).map { Data(repeating: UInt8(truncatingIfNeeded: $0), count: size) }
    }

    /// 16 MiB in 16 KiB chunks: the buffer moves only when it grows (geometrically), so the bytes
    /// moved stay within a few times the body (8 times allows any growth factor from 8/7); copying it
    /// per chunk would move about 8 GiB, 512 times the body.
    @Test func collectingMovesTheBufferOnlyWhenItGrows() {
        let chunkSize = 16 << 10
        let count = BodyPrinter.formattingLimit / chunkSize
        var body = StreamedBody(collecting: true, limit: BodyPrinter.formattingLimit) { _ in
            Issue.record("nothing is written while the body fits the limit")
            return true
        }
        var moved = 0
        var moves = 0
        var address = body.collectedStorageAddress
        var held = 0
        for (index, chunk) in Self.chunks(count, size: chunkSize).enumerated() {
            let accepted = body.consume(chunk)
            #expect(accepted)
            let now = body.collectedStorageAddress
            if index > 0, now != address {
                moved += held
                moves += 1
            }
            address = now
            held = body.collected.count
        }
        let total = count * chunkSize
        TestEnvironment.note("[streamed-body] collecting \(total) bytes in \(count) chunks: buffer moved \(moves) times, \(moved) bytes")
        #expect(moved <= 8 * total, "bytes moved \(moved) for a \(total)-byte body in \(count) chunks")
        #expect(moves < count / 8, "the buffer moved \(moves) times in \(count) appends")
        let collected = body.finish()
        #expect(collected?.count == total)
        #expect(collected?.last == UInt8(truncatingIfNeeded: count - 1))
    }

    /// Passing through, every chunk is written once, as it arrives, and nothing is kept.
    @Test func passingThroughWritesEachChunkAndKeepsNothing() {
        let written = WrittenChunks()
        var body = StreamedBody(collecting: false, limit: 1 << 20) { written.append($0) }
        let chunks = Self.chunks(64, size: 4096)
        for (index, chunk) in chunks.enumerated() {
            let accepted = body.consume(chunk)
            #expect(accepted)
            #expect(written.chunks.count == index + 1, "chunk \(index) was written as it arrived")
            #expect(body.collected.isEmpty)
        }
        #expect(written.chunks == chunks)
        let finished = body.finish()
        #expect(finished == nil)
    }

    /// Past the limit, what was collected goes out once and the rest passes through.
    @Test func overflowingTheLimitWritesWhatWasCollectedThenPassesThrough() {
        let written = WrittenChunks()
        var body = StreamedBody(collecting: true, limit: 100) { written.append($0) }
        let chunks = [Data(repeating: 1, count: 60), Data(repeating: 2, count: 30), Data(repeating: 3, count: 20), Data(repeating: 4, count: 5)]
        let first = body.consume(chunks[0]), second = body.consume(chunks[1])
        #expect(first && second)
        #expect(written.chunks.isEmpty && body.isCollecting)
        let third = body.consume(chunks[2])
        #expect(third)
        #expect(!body.isCollecting && body.collected.isEmpty)
        #expect(written.chunks == [chunks[0] + chunks[1], chunks[2]])
        let fourth = body.consume(chunks[3])
        #expect(fourth)
        #expect(written.chunks.last == chunks[3])
        let finished = body.finish()
        #expect(finished == nil)
    }

    /// A failed write (a closed pipe) is reported, and nothing more is written.
    @Test func aFailedWriteStopsWriting() {
        let written = WrittenChunks(failing: true)
        var body = StreamedBody(collecting: false, limit: 100) { written.append($0) }
        let first = body.consume(Data([1]))
        #expect(!first)
        #expect(body.writeFailed)
        let second = body.consume(Data([2]))
        #expect(!second)
        #expect(written.chunks == [Data([1])])
    }

    /// Multi-byte characters cut at every possible place come out whole, both ways.
    @Test func utf8SplitAcrossChunksIsNotCorrupted() {
        let text = "héllo wörld — 日本語のテキスト 🎉👩‍💻 ça va\n"
        let bytes = Array(text.utf8)
        for size in 1...7 {
            let chunks = stride(from: 0, to: bytes.count, by: size).map { Data(bytes[$0..<min($0 + size, bytes.count)]) }
            let written = WrittenChunks()
            var through = StreamedBody(collecting: false, limit: 1 << 20) { written.append($0) }
            var collecting = StreamedBody(collecting: true, limit: 1 << 20) { _ in true }
            for chunk in chunks {
                through.consume(chunk)
                collecting.consume(chunk)
            }
            #expect(String(decoding: written.chunks.reduce(Data(), +), as: UTF8.self) == text, "chunks of \(size)")
            let collected = collecting.finish()
            #expect(collected.map { String(decoding: $0, as: UTF8.self) } == text, "chunks of \(size)")
        }
    }

    /// The formatter gets the whole body, so a string split between chunks is formatted intact.
    @Test func jsonWithSplitCharactersFormatsIntact() throws {
        let json = #"{"name":"Zoë","city":"東京","mood":"🎉"}"#
        var body = StreamedBody(collecting: true, limit: 1 << 20) { _ in true }
        for byte in json.utf8 { body.consume(Data([byte])) }
        let finished = body.finish()
        let collected = try #require(finished)
        let formatted = try #require(JSONColouring.formattedBytes(collected))
        #expect(String(decoding: formatted, as: UTF8.self) == "{\n  \"name\": \"Zoë\",\n  \"city\": \"東京\",\n  \"mood\": \"🎉\"\n}\n")
    }
}

/// Records what a ``StreamedBody`` writes (the closure runs synchronously on the test's task).
private final class WrittenChunks {
    private(set) var chunks: [Data] = []
    private let failing: Bool

    init(failing: Bool = false) { self.failing = failing }

    func append(_ chunk: Data) -> Bool {
        chunks.append(chunk)
        return !failing
    }
}
