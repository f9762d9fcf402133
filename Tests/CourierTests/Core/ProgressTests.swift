import Testing
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Courier
import CourierTestServer

/// Download progress: monotonic, never above 1.0, exactly 1.0 at the end of a success.
@Suite struct ProgressTests {
    /// The body pauses half way until the hook and the stream have both seen a value short of the
    /// end: on a loaded machine the whole throttled body once arrived before the stream's consumer
    /// ran, which then saw only the last value (a count of 1, where the test asks for 2).
    @Test(arguments: TransportUnderTest.available, [false, true])
    func progressIsMonotonicAndEndsAtOne(transport: TransportUnderTest, chunked: Bool) async throws {
        try await withServer { server async throws in
            let gate = Gate()
            defer { gate.open() }
            var response = MockResponse(status: 200).body(.pattern(count: 2_000_000, seed: 9)).throttle(bytes: 200_000, every: .milliseconds(5))
                .pausing(afterBytes: 1_000_000, until: gate)
            if chunked { response = response.chunked(chunkSize: 16_384) }
            server.enqueue(response)
            let session = makeSession(transport, server: server)
            let hookValues = Collected<TransferProgress>()
            let streamedPart = Collected<Int64>()
            let request = session.request("big").onDownloadProgress(queue: testCallbackQueue) { hookValues.append($0) }
            let opener = Task {
                let partSeen = await eventually {
                    hookValues.all.contains { $0.completedUnitCount > 0 } && !streamedPart.all.isEmpty
                }
                #expect(partSeen, "the hook and the stream see progress before the body's second half")
                gate.open()
            }
            var streamed: [TransferProgress] = []
            for await value in request.downloadProgress {
                streamed.append(value)
                if value.completedUnitCount > 0, value.completedUnitCount < 2_000_000 { streamedPart.append(value.completedUnitCount) }
            }
            await opener.value
            _ = try await request.serializingData().value
            await withCheckedContinuation { continuation in testCallbackQueue.async { continuation.resume() } }
            for values in [hookValues.all, streamed] {
                #expect(values.count >= 2)
                #expect(values.map(\.completedUnitCount) == values.map(\.completedUnitCount).sorted())
                #expect(values.allSatisfy { $0.fractionCompleted <= 1.0 })
                #expect(values.last?.fractionCompleted == 1.0)
                #expect(values.last?.completedUnitCount == 2_000_000)
                if chunked {
                    #expect(values.dropLast().allSatisfy { $0.totalUnitCount == -1 })
                } else {
                    #expect(values.dropLast().allSatisfy { $0.totalUnitCount == 2_000_000 })
                }
            }
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func aLateSubscriberGetsTheCurrentValueFirst(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(.ok("small"))
            let session = makeSession(transport, server: server)
            let request = session.request("small")
            _ = try await request.serializingString().value
            var values: [TransferProgress] = []
            for await value in request.downloadProgress { values.append(value) }
            #expect(values == [.finished(5)])
        }
    }

    @Test(arguments: TransportUnderTest.available)
    func failedRequestsDoNotReachOne(transport: TransportUnderTest) async throws {
        try await withServer { server async throws in
            server.enqueue(MockResponse(status: 200).body(.pattern(count: 100_000, seed: 1)).truncated(afterBytes: 10_000))
            let session = makeSession(transport, server: server)
            let request = session.request("cut")
            var values: [TransferProgress] = []
            for await value in request.downloadProgress { values.append(value) }
            #expect(values.allSatisfy { $0.fractionCompleted < 1.0 })
        }
    }
}
