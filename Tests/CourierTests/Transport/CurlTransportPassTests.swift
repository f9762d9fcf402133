@_spi(Transport) @testable import Courier
import CourierSupport
import CourierTestServer
import Foundation
import Testing
import CourierTestSupport
import CourierLocking

/// Passes of a curl event loop that run away from the loop's own thread: a transfer started while
/// the transport is idle goes out from the caller's thread, and the loop thread wakes only for its
/// response.
@Suite(
    "Curl transport passes on the caller's thread", .hangLimit(.seconds(300)),
    .enabled(if: FastPaths.isOnOrSaySo(.callerpass), "the caller-thread passes are off (COURIER_FAST_PATHS=0)"))
struct CurlTransportPassTests {
    /// Calls `action` on `.completed`, on whatever thread delivers it, and records that thread.
    final class CompletionSink: TransportEventSink {
        private let action: @Sendable () -> Void
        private let record = Locked<(completions: Int, error: CourierError?, onThread: UInt?)>((0, nil, nil))

        init(_ action: @escaping @Sendable () -> Void = {}) { self.action = action }

        func receive(_ event: TransportEvent) {
            guard case .completed(let error, _) = event else { return }
            record.withLock { $0 = ($0.completions + 1, error, UInt(bitPattern: Int(bitPattern: pthread_self()))) }
            action()
        }

        var completions: Int { record.withLock { $0.completions } }
        var error: CourierError? { record.withLock { $0.error } }
        var thread: UInt? { record.withLock { $0.onThread } }
    }

    private static var passesRunOnCallers: Bool { CurlMailbox.sendersMayRunPasses }

    /// The sink is called inside the pass on the thread that started the transfer, with the loop's
    /// lock held: a shutdown from there must not wait for the loop thread, which waits for that lock.
    @Test("a sink may shut the transport down from a pass on the caller's thread")
    func shutdownFromAPassOnTheCallersThread() async throws {
        let transport = try CurlTestSupport.transport()
        #expect(await eventually { transport.loopsSleepIdle })
        let missing = URL(fileURLWithPath: "/nonexistent/courier-\(UUID().uuidString)")
        let sink = CompletionSink { transport.shutdown() }
        let returned = CountdownLatch(target: 1)
        let caller = Locked<UInt?>(nil)
        // A thread of its own, so a deadlock fails this test instead of stalling the test pool.
        Thread.detachNewThread {
            caller.withLock { $0 = UInt(bitPattern: Int(bitPattern: pthread_self())) }
            // The body cannot be opened: the transfer fails while it is set up, inside the pass.
            _ = transport.startTransfer(
                TransportRequest(
                    url: URL(string: "http://127.0.0.1:9/upload")!, method: .post,
                    body: .file(missing, length: 10)), sink: sink)
            returned.arrive()
        }
        #expect(await returned.wait(), "startTransfer did not return: the shutdown inside its pass deadlocked")
        if Self.passesRunOnCallers {
            // Delivered before startTransfer returned, on its thread.
            #expect(sink.completions == 1)
            #expect(sink.thread == caller.withLock { $0 }, "the transfer was not set up on the caller's thread")
        } else {
            #expect(await eventually { sink.completions == 1 })
        }
        #expect(sink.error?.kind == .fileSystem)
        let late = CompletionSink()
        _ = transport.startTransfer(TransportRequest(url: URL(string: "http://127.0.0.1:9/late")!), sink: late)
        #expect(late.error?.kind == .sessionInvalidated)
    }

    @Test("a sink may shut the transport down from the loop's thread")
    func shutdownFromTheLoopThread() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.enqueue(MockResponse.ok("held").waiting(for: gate))
        let transport = try CurlTestSupport.transport()
        let done = CountdownLatch(target: 1)
        let sink = CompletionSink {
            transport.shutdown()
            done.arrive()
        }
        _ = transport.startTransfer(TransportRequest(url: server.url("/held")), sink: sink)
        // Held until the request is out, so the response, and the completion, arrive on the loop thread.
        #expect(await gate.waitUntilWaiting(count: 1))
        gate.open()
        #expect(await done.wait(), "the shutdown inside the loop's pass deadlocked")
        #expect(sink.error == nil)
        #expect(sink.completions == 1)
    }

    /// The loop thread sleeps with a deadline it chose before the transfer existed (up to a
    /// minute); a pass on the caller's thread that adds a sooner one must wake it.
    @Test("a short idle timeout fires on time for a transfer started while the loop slept")
    func aSoonerDeadlineWakesTheSleepingLoop() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        let gate = Gate()
        server.enqueue(MockResponse.ok("first"))
        server.enqueue(MockResponse.ok("never").waiting(for: gate))
        // The system clock: this is about the loop thread waking on time for a real deadline.
        let transport = try CurlTestSupport.transport(clock: .system)
        defer { transport.shutdown() }
        // The first transfer leaves a connection to reuse: the next request then goes out from
        // the caller's thread with nothing (no connect) to wake the loop, which sleeps idle with a
        // deadline about a minute away (the first transfer's idle timeout).
        let window = IdleWindow()
        #expect(try await CurlTestSupport.run(TransportRequest(url: server.url("/first")), on: transport).error == nil)
        #expect(await eventually { transport.loopsSleepIdle })
        let started = ContinuousClock.now
        let result = try await CurlTestSupport.run(
            TransportRequest(url: server.url("/stall"), idleTimeout: .milliseconds(200)),
            on: transport)
        #expect(result.error?.kind == .timedOut)
        // Far below the minute the loop would otherwise sleep, far above 200 ms on a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(30))
        if window.provesReuse("the loop wakes for a reused connection's deadline") { #expect(server.connectionCount == 1) }
        gate.open()
    }

    /// A server that answers fast is answered on the thread that sent the request: the pass there
    /// waits for the answer (bounded by ``CurlResponseWait``) and the loop thread never wakes for it.
    @Test("a fast server's answer is handled in the caller's pass, without waking the loop", arguments: [true, false])
    func fastAnswersAreHandledOnTheCallersThread(waits: Bool) async throws {
        guard Self.passesRunOnCallers else { return }
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        // Answered after 5 ms: never before the pass that sent the request has returned, unless it waits.
        server.dispatcher = { _ in MockResponse.ok("quick").headersDelay(.milliseconds(5)) }
        // A generous limit: the wait still ends as soon as the answer is there. Zero: never waits.
        let transport = try CurlTestSupport.transport(responseWaitLimit: waits ? .seconds(2) : .zero)
        defer { transport.shutdown() }
        // Warm up: a connection to reuse, and a measured time to first byte.
        for _ in 0..<3 {
            #expect(try await CurlTestSupport.run(TransportRequest(url: server.url("/warm")), on: transport).error == nil)
        }
        var inline = 0
        for _ in 0..<20 {
            #expect(await eventually { transport.loopsSleepIdle })
            let sink = CompletionSink()
            _ = transport.startTransfer(TransportRequest(url: server.url("/quick")), sink: sink)
            if sink.completions == 1 { inline += 1 }
            #expect(await eventually { sink.completions == 1 })
            #expect(sink.error == nil)
        }
        if waits {
            // Not necessarily all 20: an answer may come later than twice the recent average.
            #expect(inline >= 12, "only \(inline) of 20 answers were handled on the caller's thread")
            #expect(transport.answeredOnCallers >= 12)
        } else {
            // (`inline` may still be non-zero on a slow machine: a pass can outlast the 5 ms.)
            #expect(transport.answeredOnCallers == 0)
        }
    }

    /// A reused connection stays in the loop's wait set between transfers. When the server closes
    /// it while idle, the end of stream must take it out of the set: left in, it would be ready for
    /// ever and wake the loop in a busy spin.
    @Test("a kept-alive connection the server closes while idle does not keep waking the loop")
    func anIdleConnectionClosedByTheServerLeavesTheWaitSet() async throws {
        let server = try TestServer()
        defer { expectClean(server.shutdown()) }
        // No `Connection: close`: the client keeps the connection, then reads its end while idle.
        server.enqueue(MockResponse.ok("first").effect(.close, at: .responseEnd))
        server.enqueue(MockResponse.ok("second"))
        let transport = try CurlTestSupport.transport()
        defer { transport.shutdown() }
        // The transport's first answer is never waited for on the caller's thread (there is no
        // measured time to first byte yet): the loop thread reads it, from its own wait set.
        let first = try await CurlTestSupport.run(TransportRequest(url: server.url("/first")), on: transport)
        #expect(first.error == nil)
        #expect(String(decoding: first.body, as: UTF8.self) == "first")
        #expect(await eventually { transport.loopsSleepIdle })
        // The server has closed the idle connection by now or does so in a moment; over this
        // interval a loop spinning on it would wake thousands of times.
        let before = transport.loopWakeUps
        try await Task.sleep(for: .milliseconds(300))
        let wakeUps = transport.loopWakeUps - before
        #expect(wakeUps < 20, "the loop woke \(wakeUps) times in 300 ms with nothing to do")
        let second = try await CurlTestSupport.run(TransportRequest(url: server.url("/second")), on: transport)
        #expect(second.error == nil)
        #expect(String(decoding: second.body, as: UTF8.self) == "second")
    }
}
