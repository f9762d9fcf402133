import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Streamed bodies: chunks in order, backpressure, early validation, cancellation.
@Suite struct DataStreamTests {
    @Test(arguments: TransportUnderTest.available)
    func chunksArriveInOrderAndComplete(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size = 3_000_000
            server.route("/s", Resource(pattern: Int64(size), seed: 12))
            let session = makeSession(transport, server: server)
            var received = Data()
            var chunks = 0
            for try await chunk in session.streamRequest("s").streamingData() {
                received.append(chunk)
                chunks += 1
            }
            #expect(received == PatternBody.data(offset: 0, count: size, seed: 12))
            #expect(chunks > 1)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aSlowConsumerHoldsTheServerBack(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let size: Int64 = 64 << 20
            server.route("/big", Resource(pattern: size, seed: 1))
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("big")
            var iterator = request.streamingData().makeAsyncIterator()
            let first = try await iterator.next()
            #expect(first?.isEmpty == false)
            // The consumer now stops. Give the server time to send whatever it can.
            var previous: Int64 = -1
            while server.bytesSent(path: "/big") != previous {
                previous = server.bytesSent(path: "/big")
                try await Task.sleep(for: .milliseconds(200))
            }
            if transport == .curl {
                // The window (1 MiB), curl's buffer and the kernel's socket buffers, not 64 MiB.
                #expect(server.bytesSent(path: "/big") < 16 << 20)
            } else {
                // URLSession on Linux cannot apply backpressure: it reads on until what waits for the
                // consumer passes maximumStreamBacklog (16 MiB), which fails the stream (see
                // `StreamBacklogTests`); FoundationNetworking still reads for a while after the
                // cancel, dropping what it reads, so the server's count is not bounded here.
                #expect(server.bytesSent(path: "/big") <= size)
            }
            request.cancel()
            do throws(CourierError) {
                while try await iterator.next() != nil {}
                // Only URLSession can have finished first: it read the whole body into memory already.
                #expect(transport == .urlSession, "a cancelled stream must end with an error")
            } catch {
                #expect(error.isCancelled)
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func validationHappensAtTheHead(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.text("missing", status: 404))
            let session = makeSession(transport, server: server)
            var chunks = 0
            var iterator = session.streamRequest("s").validate().streamingData().makeAsyncIterator()
            do throws(CourierError) {
                while try await iterator.next() != nil { chunks += 1 }
                Issue.record("expected a validation error")
            } catch {
                #expect(error.kind == .validationFailed)
                #expect(error.responseCode == 404)
            }
            #expect(chunks == 0)
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func cancellingTheConsumingTaskCancelsTheRequest(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            server.route("/s", Resource(pattern: 1_000_000, seed: 2).pausing(afterBytes: 100_000, until: gate))
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("s")
            let consumer = Task { () -> CourierError? in
                var iterator = request.streamingData().makeAsyncIterator()
                do throws(CourierError) {
                    while try await iterator.next() != nil {}
                    return nil
                } catch {
                    return error
                }
            }
            #expect(await gate.waitUntilWaiting(count: 1))
            consumer.cancel()
            #expect(await consumer.value?.kind == .cancelled)
            #expect(await request.state == .cancelled)
            gate.open()
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func callbacksReceiveEveryChunkThenTheEnd(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.route("/s", Resource(pattern: 500_000, seed: 4))
            let session = makeSession(transport, server: server)
            let received = Collected<Data>()
            let completion: DataStreamCompletion = await withCheckedContinuation { continuation in
                session.streamRequest("s").responseStream { event in
                    switch event {
                    case .chunk(let data): received.append(data)
                    case .complete(let completion): continuation.resume(returning: completion)
                    }
                }
            }
            #expect(completion.error == nil)
            #expect(completion.response?.statusCode == 200)
            #expect(received.all.reduce(Data(), +) == PatternBody.data(offset: 0, count: 500_000, seed: 4))
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aStreamHasOneConsumer(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("once"))
            let session = makeSession(transport, server: server)
            let request = session.streamRequest("s")
            var first = request.streamingData().makeAsyncIterator()
            var second = request.streamingData().makeAsyncIterator()
            do throws(CourierError) {
                _ = try await second.next()
                Issue.record("a second consumer must fail")
            } catch {
                #expect(error.message.contains("already has a consumer"))
            }
            #expect(try await first.next() == Data("once".utf8))
            #expect(try await first.next() == nil)
        }
    }
}
