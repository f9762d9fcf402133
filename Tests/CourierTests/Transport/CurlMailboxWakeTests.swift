import CCurl
import CourierLocking
import Foundation
import Testing

@testable import Courier

/// The curl mailbox writes a loop's wake-up after releasing its lock (the woken loop thread takes
/// that lock first); the reactor the write goes to must then outlive every write claimed before the
/// loop closes the mailbox.
@Suite("Curl mailbox wake-ups")
struct CurlMailboxWakeTests {
    /// A multi handle with a reactor; throws when libcurl is not loadable.
    private static func makeReactor() throws -> (multi: OpaquePointer, reactor: OpaquePointer) {
        try CurlTestSupport.requireLibcurl()
        let multi = try #require(ccurl_multi_init())
        let reactor = try #require(ccurl_reactor_create(multi))
        return (multi, reactor)
    }

    @Test("a command sent while the loop waits wakes its sleep")
    func aSendWakesTheWaitingLoop() throws {
        let (multi, reactor) = try Self.makeReactor()
        defer {
            ccurl_multi_cleanup(multi)
            ccurl_reactor_destroy(reactor)
        }
        let mailbox = CurlMailbox(reactor: reactor, transportTransfers: CurlTransferGauge())
        #expect(mailbox.prepareToWait(idle: false))
        let sender = Thread { _ = mailbox.send(.clockAdvanced(done: {})) }
        sender.start()
        // Without the wake-up this sleeps the whole minute: a margin only a lost wake-up exceeds.
        let started = ContinuousClock.now
        ccurl_reactor_poll(reactor, 60_000)
        #expect(ContinuousClock.now - started < .seconds(60), "the loop's sleep was not woken")
        var commands: [CurlCommand] = []
        mailbox.takeCommands(into: &commands)
        #expect(commands.count == 1)
        mailbox.close()
    }

    /// Senders race a loop that keeps waiting and taking the queue, then closes and destroys its
    /// reactor at once: no wake-up may be written after that (ThreadSanitizer, which `.ci/run` runs
    /// this under, reports a write to the freed reactor), and every send after the close is refused.
    @Test("closing waits for wake-ups already claimed, so the reactor can be destroyed right after")
    func closeWaitsForClaimedWakeUps() throws {
        for _ in 0..<20 {
            let (multi, reactor) = try Self.makeReactor()
            let mailbox = CurlMailbox(reactor: reactor, transportTransfers: CurlTransferGauge())
            let closed = Locked(false)
            let acceptedAfterClose = Locked(0)
            let sent = Locked(0)
            let senders = DispatchGroup()
            for _ in 0..<4 {
                senders.enter()
                Thread {
                    for _ in 0..<500 {
                        let wasClosed = closed.withLock { $0 }
                        let accepted = mailbox.send(.clockAdvanced(done: {}))
                        sent.withLock { $0 += 1 }
                        if wasClosed, accepted { acceptedAfterClose.withLock { $0 += 1 } }
                    }
                    senders.leave()
                }.start()
            }
            var commands: [CurlCommand] = []
            // The loop keeps waiting and taking the queue while the senders are well under way.
            while sent.withLock({ $0 }) < 400 {
                mailbox.takeCommands(into: &commands)
                commands.removeAll()
                _ = mailbox.prepareToWait(idle: true)
            }
            mailbox.close()
            closed.withLock { $0 = true }
            ccurl_multi_cleanup(multi)
            ccurl_reactor_destroy(reactor)
            #expect(senders.wait(timeout: .now() + 120) == .success, "a sender did not finish")
            #expect(acceptedAfterClose.withLock { $0 } == 0)
        }
    }
}
