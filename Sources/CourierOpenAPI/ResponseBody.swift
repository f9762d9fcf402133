#if OpenAPI
import Courier
import Foundation
import OpenAPIRuntime

/// Reads a Courier stream for an `HTTPBody`: the first chunk (read by the transport to settle
/// the response) and then the rest, one at a time as the body's consumer asks.
actor ResponseBodyReader {
    private var chunks: DataStream.Iterator
    private var first: Data?
    private var ended = false

    init(_ stream: DataStream) {
        chunks = stream.makeAsyncIterator()
    }

    /// Reads the first chunk (or the end), throwing the request's error.
    func start() async throws(CourierError) {
        if let chunk = try await nextChunk() { first = chunk } else { ended = true }
    }

    /// The next piece of the body, `nil` at its end.
    func next() async throws(CourierError) -> ArraySlice<UInt8>? {
        if let chunk = first {
            first = nil
            return ArraySlice(chunk)
        }
        guard !ended else { return nil }
        guard let chunk = try await nextChunk() else {
            ended = true
            return nil
        }
        return ArraySlice(chunk)
    }

    // (A copy, since a mutating async call cannot take the actor's property in place; one
    // consumer reads at a time, as an HTTPBody iterated once has.)
    private func nextChunk() async throws(CourierError) -> Data? {
        var iterator = chunks
        defer { chunks = iterator }
        return try await iterator.next(isolation: self)
    }
}

/// The response body as the `AsyncSequence` an `HTTPBody` iterates (once).
struct ResponseBody: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    let reader: ResponseBodyReader

    func makeAsyncIterator() -> Iterator { Iterator(reader: reader) }

    struct Iterator: AsyncIteratorProtocol {
        let reader: ResponseBodyReader
        mutating func next() async throws -> ArraySlice<UInt8>? { try await reader.next() }
    }
}
#endif
