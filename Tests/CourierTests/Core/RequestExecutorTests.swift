import Testing
import CourierTestSupport
import Foundation
@_spi(Transport) @testable import Courier
import CourierLocking

/// The request executor under contention: one item at a time, in order per submitter, isolation
/// checks that hold, and Swift jobs mixed in.
@Suite struct RequestExecutorTests {
    actor Probe {
        nonisolated let executor = RequestExecutor()
        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
        var sequences: [Int: [Int]] = [:]
        var running = false

        func record(_ submitter: Int, _ index: Int) {
            precondition(!running, "two items ran at once")
            running = true
            sequences[submitter, default: []].append(index)
            running = false
        }
    }

    /// Submits from plain threads, like a transport delivering events, each followed by a short,
    /// varying pause, so the FIFO empties again and again and the next submit keeps landing around the
    /// moment a drain finishes: exactly when a new drain may claim the executor.
    @Test func drainsNeverOverlapWhenSubmittersRaceTheirEnd() async {
        let probe = Probe()
        let threads = 2
        let perThread = 40_000
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Locked(threads)
            for submitter in 0..<threads {
                Thread {
                    var pause = UInt64(submitter + 1)
                    for index in 0..<perThread {
                        probe.executor.execute(inline: index % 7 == 0) {
                            probe.assumeIsolated { $0.record(submitter, index) }
                        }
                        // A busy pause of 0–~20 µs, varied with a cheap xorshift (no sleeping, no syscalls).
                        pause ^= pause << 13; pause ^= pause >> 7; pause ^= pause << 17
                        let spins = Int(pause % 2_000)
                        var sink = 0
                        for spin in 0..<spins { sink &+= spin }
                        if sink == -1 { print(sink) }
                    }
                    if remaining.withLock({
                        $0 -= 1; return $0
                    }) == 0 {
                        done.resume()
                    }
                }.start()
            }
        }
        await withCheckedContinuation { continuation in
            probe.executor.execute(inline: false) { continuation.resume() }
        }
        let sequences = await probe.sequences
        for submitter in 0..<threads {
            #expect(sequences[submitter]?.count == perThread)
            #expect(sequences[submitter] == Array(0..<perThread))
        }
    }

    @Test func itemsRunOneAtATimeInOrderUnderContention() async {
        let probe = Probe()
        let submitters = 8
        let perSubmitter = 2_500
        await withTaskGroup(of: Void.self) { group in
            for submitter in 0..<submitters {
                group.addTask {
                    for index in 0..<perSubmitter {
                        // Mixed: inline and handed-off closures, entered with assumeIsolated (which calls checkIsolated).
                        probe.executor.execute(inline: index % 3 != 0) {
                            probe.assumeIsolated { $0.record(submitter, index) }
                        }
                        if index % 250 == 0 { await Task.yield() }
                    }
                }
            }
            // Swift jobs on the same executor at the same time.
            group.addTask {
                for _ in 0..<500 { _ = await probe.sequences.count }
            }
        }
        // Everything submitted has run once the executor has processed one more item.
        await withCheckedContinuation { continuation in
            probe.executor.execute(inline: false) { continuation.resume() }
        }
        let sequences = await probe.sequences
        #expect(sequences.count == submitters)
        for submitter in 0..<submitters {
            #expect(sequences[submitter] == Array(0..<perSubmitter), "submitter \(submitter) out of order or incomplete")
        }
    }

    /// The drain host's slot: a host whose response is already done never parks, and only one task
    /// hosts at a time; the other learns it at once.
    @Test(.hangLimit(.seconds(300))) func aHostParksOnlyWhileItsResponseIsPendingAndOnlyOneTaskHosts() async {
        let executor = RequestExecutor()
        #expect(await executor.awaitWork(unlessDone: { true }) == .recheck)

        let results = Locked<[RequestExecutor.HostWake]>([])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<2 {
                group.addTask {
                    let wake = await executor.awaitWork(unlessDone: { false })
                    results.withLock { $0.append(wake) }
                }
            }
            // Whichever task came second returns at once; then the one that parked is woken.
            await group.next()
            #expect(results.withLock { $0 } == [.unavailable])
            executor.wakeHost()
            await group.next()
        }
        #expect(results.withLock { $0 } == [.unavailable, .recheck])
    }

    /// Two responses of one request (say `serializingData()` and `serializingString()`, awaited in
    /// two tasks) both complete in a drain elsewhere while neither host is parked yet. Their two
    /// wake-ups find no one; each host must still return, whichever order they try to park in. A
    /// single stored wake-up, taken by the first host, once left the second parked for ever.
    @Test(.hangLimit(.seconds(300)), arguments: [false, true])
    func wakeUpsThatFindNoHostDoNotStrandEitherHost(secondParksFirst: Bool) async {
        let executor = RequestExecutor()
        let done = Locked([false, false])
        for index in 0..<2 {
            done.withLock { $0[index] = true }
            executor.wakeHost()
        }
        let order = secondParksFirst ? [1, 0] : [0, 1]
        for index in order {
            #expect(await executor.awaitWork(unlessDone: { done.withLock { $0[index] } }) == .recheck)
        }
    }

    /// Work that has run is released at once, even while the FIFO never runs empty: transport
    /// events carry body chunks, and a download that outpaces its drain must not keep every chunk
    /// it already wrote (a 1 GiB download once peaked at 200 MiB this way on a busy machine).
    @Test func workThatHasRunIsReleasedWhileTheQueueIsStillBusy() async {
        final class Chunk: Sendable {
            let released: Locked<Int>
            init(_ released: Locked<Int>) { self.released = released }
            deinit { released.withLock { $0 += 1 } }
        }
        let executor = RequestExecutor()
        let released = Locked(0)
        let blocker = DispatchSemaphore(value: 0)
        let chunks = 1_000
        // The first item holds the drain so that everything below queues up behind it.
        executor.execute(inline: false) { blocker.wait() }
        for _ in 0..<chunks {
            let chunk = Chunk(released)
            executor.execute(inline: false) { withExtendedLifetime(chunk) {} }
        }
        let seen = Locked(-1)
        executor.execute(inline: false) { seen.withLock { $0 = released.withLock { $0 } } }
        await withCheckedContinuation { continuation in
            // Still queued when the count above is taken, so the FIFO has not run empty by then.
            executor.execute(inline: false) { continuation.resume() }
            blocker.signal()
        }
        #expect(seen.withLock { $0 } == chunks)
    }
}
