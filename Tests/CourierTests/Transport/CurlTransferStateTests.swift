@_spi(Transport) @testable import Courier
import Testing

/// The curl transfer state machine as event → action tables, without any I/O.
@Suite("Curl transfer state machine")
struct CurlTransferStateTests {
    typealias State = CurlTransferState
    typealias Event = CurlTransferState.Event
    typealias Action = CurlTransferState.Action

    /// Feeds `events` to a fresh state machine and returns each action and the final state.
    private func run(_ events: [Event]) -> ([Action], State) {
        var state = State()
        let actions = events.map { state.handle($0) }
        return (actions, state)
    }

    /// A failure the loop reports itself.
    private static let failure = CurlLoopFailure(error: CourierError(.transportFailed, "libcurl refused CURLOPT_URL"))

    private func running(_ reasons: CurlPauseReasons = [], applied: CurlPauseMask = []) -> State.Phase {
        .running(reasons: reasons, applied: applied)
    }

    @Test("start attaches; a transfer suspended before start waits for resume")
    func start() {
        var (actions, state) = run([.start(suspended: false)])
        #expect(actions == [.attach])
        #expect(state.phase == running())
        #expect(state.idleClockRuns)

        (actions, state) = run([.start(suspended: true), .pauseRequested(suspended: true), .pauseRequested(suspended: false)])
        #expect(actions == [.none, .none, .attach])
        #expect(state.phase == running())
    }

    @Test("cancel, timeout and shutdown before attaching finish without detaching")
    func endsBeforeAttach() {
        #expect(run([.cancel]).0 == [.finish(.cancelled, detach: false)])
        #expect(run([.start(suspended: true), .cancel]).0 == [.none, .finish(.cancelled, detach: false)])
        #expect(
            run([.start(suspended: true), .timedOut(.deadline(after: .seconds(1)))]).0
                == [.none, .finish(.timedOut(.deadline(after: .seconds(1))), detach: false)])
        #expect(run([.shutdown]).0 == [.finish(.invalidated, detach: false)])
        #expect(run([.start(suspended: true), .shutdown]).0 == [.none, .finish(.invalidated, detach: false)])
    }

    @Test("running transfers end once, detaching from the multi handle")
    func endsWhileRunning() {
        let cases: [(Event, Action)] = [
            (.cancel, .finish(.cancelled, detach: true)),
            (.timedOut(.idle(.milliseconds(100))), .finish(.timedOut(.idle(.milliseconds(100))), detach: true)),
            (.curlDone(0), .finish(.curl(0), detach: true)),
            (.curlDone(7), .finish(.curl(7), detach: true)),
            (.shutdown, .finish(.shutDown, detach: true)),
            (.attachFailed(Self.failure), .finish(.setupFailed(Self.failure), detach: false)),
            (.failed(Self.failure), .finish(.failed(Self.failure), detach: true)),
        ]
        for (event, expected) in cases {
            let (actions, state) = run([.start(suspended: false), event])
            #expect(actions == [.attach, expected], "\(event)")
            #expect(state.isFinished)
        }
    }

    @Test("after finishing, every event is ignored (exactly one completion)")
    func finishedIgnoresEverything() {
        let later: [Event] = [
            .cancel, .curlDone(0), .timedOut(.idle(.seconds(1))), .shutdown, .start(suspended: false),
            .pauseRequested(suspended: true), .pauseRequested(suspended: false), .windowFull,
            .windowReopened, .chunkDeferred, .attachFailed(Self.failure), .failed(Self.failure),
        ]
        for first in [Event.cancel, .curlDone(0), .shutdown] {
            let (actions, state) = run([.start(suspended: false), first] + later)
            #expect(actions.dropFirst(2).allSatisfy { $0 == .none }, "\(first)")
            #expect(state.isFinished)
        }
    }

    @Test("suspend pauses both directions; resume continues")
    func suspendResume() {
        let (actions, state) = run([
            .start(suspended: false), .pauseRequested(suspended: true), .pauseRequested(suspended: true),
            .pauseRequested(suspended: false), .pauseRequested(suspended: false),
        ])
        #expect(actions == [.attach, .applyPause(.all), .none, .applyPause([]), .none])
        #expect(state.phase == running())
    }

    @Test("backpressure pauses receiving in the callback and unpauses when the window reopens")
    func backpressure() {
        var (actions, state) = run([.start(suspended: false), .windowFull])
        #expect(actions == [.attach, .none])
        #expect(state.phase == running(.backpressure, applied: .receive))
        #expect(!state.idleClockRuns)

        (actions, state) = run([.start(suspended: false), .windowFull, .windowReopened, .windowReopened])
        #expect(actions == [.attach, .none, .applyPause([]), .none])
        #expect(state.idleClockRuns)
    }

    @Test("suspend and backpressure are independent reasons")
    func independentReasons() {
        // Suspended, then the window fills (on re-delivery), then the window reopens: still suspended.
        var (actions, state) = run([.start(suspended: false), .pauseRequested(suspended: true), .windowFull, .windowReopened])
        #expect(actions == [.attach, .applyPause(.all), .none, .none])
        #expect(state.phase == running(.suspended, applied: .all))

        // Backpressured, then suspended and resumed: receiving stays paused until the window reopens.
        (actions, state) = run([
            .start(suspended: false), .windowFull, .pauseRequested(suspended: true),
            .pauseRequested(suspended: false), .windowReopened,
        ])
        #expect(actions == [.attach, .none, .applyPause(.all), .applyPause(.receive), .applyPause([])])
        #expect(state.phase == running())
    }

    @Test(
        "full duplex: a starved request body and a full response window pause one direction each",
        arguments: [
            // The body runs dry, then the window fills; the body comes back first: sending resumes
            // while receiving stays paused, then the window reopens.
            (
                [Event.bodyStarved, .windowFull, .bodyAvailable, .windowReopened],
                [Action.none, .none, .applyPause(.receive), .applyPause([])],
                [true, false, false, true]
            ),
            // The window fills, then the body runs dry; the window reopens first: receiving
            // resumes while sending waits for the body.
            (
                [.windowFull, .bodyStarved, .windowReopened, .bodyAvailable],
                [.none, .none, .applyPause(.send), .applyPause([])],
                [false, false, true, true]
            ),
            // Suspended while the body is dry: everything pauses; resumed: sending still waits for the body.
            (
                [.bodyStarved, .pauseRequested(suspended: true), .pauseRequested(suspended: false), .bodyAvailable],
                [.none, .applyPause(.all), .applyPause(.send), .applyPause([])],
                [true, false, true, true]
            ),
            // More body or a reopened window than was waited for changes nothing.
            (
                [.bodyAvailable, .windowReopened, .bodyStarved, .bodyAvailable, .bodyAvailable],
                [.none, .none, .none, .applyPause([]), .none],
                [true, true, true, true, true]
            ),
        ])
    func duplexDemand(events: [Event], actions expected: [Action], idleClock: [Bool]) {
        var state = State()
        #expect(state.handle(.start(suspended: false)) == .attach)
        var actions: [Action] = []
        var clock: [Bool] = []
        for event in events {
            actions.append(state.handle(event))
            clock.append(state.idleClockRuns)
        }
        #expect(actions == expected)
        // A stalled body counts as idle (the idle timeout runs); a consumer that is behind does not.
        #expect(clock == idleClock)
    }

    @Test("a chunk refused for a pending suspend is undone even when resume wins the race")
    func deferredChunk() {
        // suspend() and resume() both happened before the loop saw either: the write callback
        // refused a chunk, so libcurl is paused although the wanted state is "running".
        let (actions, state) = run([
            .start(suspended: false), .chunkDeferred, .pauseRequested(suspended: false),
            .pauseRequested(suspended: false),
        ])
        #expect(actions == [.attach, .none, .applyPause([]), .none])
        #expect(state.phase == running())
    }

    @Test("pause masks follow the reasons")
    func masks() {
        #expect(CurlPauseMask(for: []) == [])
        #expect(CurlPauseMask(for: .backpressure) == .receive)
        #expect(CurlPauseMask(for: .suspended) == .all)
        #expect(CurlPauseMask(for: [.suspended, .backpressure]) == .all)
        #expect(CurlPauseMask.all.rawValue == 5)
    }

    @Test("timeout explanations name the timeout and its value")
    func timeoutText() {
        #expect(CurlTimeout.idle(.milliseconds(100)).explanation.contains("0.1 s (idle timeout)"))
        #expect(CurlTimeout.deadline(after: .milliseconds(2500)).explanation.contains("2.5 s"))
        #expect(CurlTimeout.deadline(after: .seconds(90)).explanation.contains("90 s"))
    }
}
