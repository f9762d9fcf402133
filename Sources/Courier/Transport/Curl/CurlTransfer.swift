/// Why a running transfer is paused; the transfer moves bytes only when the set is empty.
struct CurlPauseReasons: OptionSet, Sendable, Hashable {
    let rawValue: UInt8
    /// The caller called `suspend()`.
    static let suspended = CurlPauseReasons(rawValue: 1)
    /// The sink has not acknowledged enough body bytes (flow-control window full).
    static let backpressure = CurlPauseReasons(rawValue: 2)
    /// A stream body has no bytes ready (the read callback paused sending).
    static let awaitingBody = CurlPauseReasons(rawValue: 4)
}

/// The directions libcurl has paused for a transfer (`CURLPAUSE_*` bits).
struct CurlPauseMask: OptionSet, Sendable, Hashable {
    let rawValue: Int32
    /// Receiving is paused.
    static let receive = CurlPauseMask(rawValue: 1)  // CURLPAUSE_RECV
    /// Sending is paused.
    static let send = CurlPauseMask(rawValue: 4)  // CURLPAUSE_SEND
    /// Both directions.
    static let all: CurlPauseMask = [.receive, .send]

    /// What libcurl must pause for these reasons: everything while suspended, receiving under
    /// backpressure, sending while a stream body has no bytes.
    init(for reasons: CurlPauseReasons) {
        if reasons.contains(.suspended) {
            self = .all
        } else {
            self = []
            if reasons.contains(.backpressure) { insert(.receive) }
            if reasons.contains(.awaitingBody) { insert(.send) }
        }
    }

    init(rawValue: Int32) { self.rawValue = rawValue }
}

/// Which Courier timeout ended a transfer.
enum CurlTimeout: Sendable, Hashable {
    /// Nothing was sent or received for this long (time paused does not count).
    case idle(Duration)
    /// The request's deadline passed; `after` is how long after submission that was.
    case deadline(after: Duration)

    /// `"no byte was sent or received for 0.1 s (idle timeout)"`.
    var explanation: String {
        switch self {
        case .idle(let limit): "no byte was sent or received for \(Self.seconds(limit)) (idle timeout)"
        case .deadline(let after): "its deadline passed \(Self.seconds(after)) after it started (resource timeout)"
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let value = Double(seconds) + Double(attoseconds) / 1e18
        return value < 10 ? "\(Double((value * 1000).rounded()) / 1000) s" : "\(Int(value.rounded())) s"
    }
}

/// A failure the event loop found itself (an option libcurl refused, a broken multi handle, a
/// socket that cannot be watched), carried by the event that reports it and by the end it causes.
/// Compared by kind and message only, so the state machine's tables stay comparable.
struct CurlLoopFailure: Sendable, Hashable {
    /// The error the transfer completes with (the loop adds the request's URL).
    let error: CourierError

    /// Same kind and message.
    static func == (lhs: CurlLoopFailure, rhs: CurlLoopFailure) -> Bool {
        lhs.error.kind == rhs.error.kind && lhs.error.message == rhs.error.message
    }

    /// Hashes the kind and message.
    func hash(into hasher: inout Hasher) {
        hasher.combine(error.kind)
        hasher.combine(error.message)
    }
}

/// How a transfer ended, before it is turned into a ``CourierError``.
enum CurlTransferEnd: Sendable, Hashable {
    /// libcurl finished it with this `CURLcode` (0 = success).
    case curl(Int32)
    /// `cancel()` was called.
    case cancelled
    /// A Courier timeout fired.
    case timedOut(CurlTimeout)
    /// The easy handle could not be set up, for this reason.
    case setupFailed(CurlLoopFailure)
    /// The loop failed the running transfer, for this reason.
    case failed(CurlLoopFailure)
    /// The transport shut down while the transfer was in flight.
    case shutDown
    /// The transport shut down before the transfer reached the network.
    case invalidated
}

/// One transfer's state machine: every transition of a curl transfer happens in ``handle(_:)``,
/// which returns the single side effect the event loop must perform. No I/O happens here, so the
/// table of events and actions is unit-tested directly.
///
/// Lives in the loop's passes, like everything else about a running transfer.
struct CurlTransferState: Equatable {
    /// Where the transfer is in its life.
    enum Phase: Equatable {
        /// Handed to the loop; not on the multi handle yet.
        case submitted
        /// Suspended before it reached the multi handle; it starts on `resume`.
        case held
        /// On the multi handle. `reasons` is why Courier wants it paused, `applied` what libcurl has paused.
        case running(reasons: CurlPauseReasons, applied: CurlPauseMask)
        /// `completed` was delivered; every later event is ignored.
        case finished
    }

    /// Something that happened to the transfer.
    enum Event: Equatable {
        /// The loop picked the transfer up; `suspended` is whether `suspend()` was already called.
        case start(suspended: Bool)
        /// `suspend()`/`resume()` changed the wanted state; `suspended` is the latest value.
        case pauseRequested(suspended: Bool)
        /// The write callback refused a chunk (returned `CURL_WRITEFUNC_PAUSE`) because the window is full.
        case windowFull
        /// The write callback refused a chunk because a suspend or cancel is on its way to the loop.
        case chunkDeferred
        /// Acknowledgements brought the backlog down to half the window.
        case windowReopened
        /// The read callback found a stream body empty and paused sending (`CURL_READFUNC_PAUSE`).
        case bodyStarved
        /// The stream body has bytes (or its end, or a failure) again.
        case bodyAvailable
        /// `cancel()` was called.
        case cancel
        /// A Courier timeout fired.
        case timedOut(CurlTimeout)
        /// The easy handle could not be configured or added, for this reason.
        case attachFailed(CurlLoopFailure)
        /// The loop cannot go on with the running transfer: libcurl's multi handle failed, or the
        /// socket libcurl gave the transfer cannot be watched.
        case failed(CurlLoopFailure)
        /// libcurl reported the transfer done with this `CURLcode`.
        case curlDone(Int32)
        /// The transport is shutting down.
        case shutdown
    }

    /// The side effect the loop performs after a transition.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// Configure an easy handle and add it to the multi handle.
        case attach
        /// Call `curl_easy_pause` with this mask.
        case applyPause(CurlPauseMask)
        /// Deliver `completed`; first remove the easy handle from the multi handle when `detach`.
        case finish(CurlTransferEnd, detach: Bool)
    }

    /// The current phase.
    private(set) var phase: Phase = .submitted

    /// Whether the idle timeout is counting: running and not paused for any reason but a stream
    /// body that has no bytes (a stalled stream is as idle as a stalled server).
    var idleClockRuns: Bool {
        if case .running(let reasons, _) = phase { reasons.subtracting(.awaitingBody).isEmpty } else { false }
    }

    /// Whether the transfer is on the multi handle.
    var isRunning: Bool {
        if case .running = phase { true } else { false }
    }

    /// Whether `completed` has been delivered (or is being delivered).
    var isFinished: Bool { phase == .finished }

    /// Applies `event` and returns what the loop must do.
    mutating func handle(_ event: Event) -> Action {
        switch (phase, event) {
        case (.finished, _):
            return .none

        case (.submitted, .start(let suspended)):
            if suspended {
                phase = .held
                return .none
            }
            phase = .running(reasons: [], applied: [])
            return .attach
        case (.held, .pauseRequested(suspended: false)):
            phase = .running(reasons: [], applied: [])
            return .attach
        case (.submitted, .cancel), (.held, .cancel):
            phase = .finished
            return .finish(.cancelled, detach: false)
        case (.submitted, .timedOut(let timeout)), (.held, .timedOut(let timeout)):
            phase = .finished
            return .finish(.timedOut(timeout), detach: false)
        case (.submitted, .shutdown), (.held, .shutdown):
            phase = .finished
            return .finish(.invalidated, detach: false)
        case (.submitted, _), (.held, _):
            return .none

        case (.running(var reasons, let applied), .pauseRequested(let suspended)):
            if suspended { reasons.insert(.suspended) } else { reasons.remove(.suspended) }
            return reconcile(reasons: reasons, applied: applied)
        case (.running(var reasons, let applied), .windowReopened):
            reasons.remove(.backpressure)
            return reconcile(reasons: reasons, applied: applied)
        case (.running(var reasons, var applied), .bodyStarved):
            // libcurl paused sending itself when the read callback returned CURL_READFUNC_PAUSE.
            reasons.insert(.awaitingBody)
            applied.insert(.send)
            phase = .running(reasons: reasons, applied: applied)
            return .none
        case (.running(var reasons, let applied), .bodyAvailable):
            reasons.remove(.awaitingBody)
            return reconcile(reasons: reasons, applied: applied)
        case (.running(var reasons, var applied), .windowFull):
            // libcurl paused receiving itself when the callback returned CURL_WRITEFUNC_PAUSE.
            reasons.insert(.backpressure)
            applied.insert(.receive)
            phase = .running(reasons: reasons, applied: applied)
            return .none
        case (.running(let reasons, var applied), .chunkDeferred):
            applied.insert(.receive)
            phase = .running(reasons: reasons, applied: applied)
            return .none
        case (.running, .cancel):
            phase = .finished
            return .finish(.cancelled, detach: true)
        case (.running, .timedOut(let timeout)):
            phase = .finished
            return .finish(.timedOut(timeout), detach: true)
        case (.running, .attachFailed(let failure)):
            phase = .finished
            return .finish(.setupFailed(failure), detach: false)
        case (.running, .failed(let failure)):
            phase = .finished
            return .finish(.failed(failure), detach: true)
        case (.running, .curlDone(let code)):
            phase = .finished
            return .finish(.curl(code), detach: true)
        case (.running, .shutdown):
            phase = .finished
            return .finish(.shutDown, detach: true)
        case (.running, .start):
            return .none
        }
    }

    /// Moves to `reasons` and asks libcurl to pause or unpause when what it has applied differs.
    private mutating func reconcile(reasons: CurlPauseReasons, applied: CurlPauseMask) -> Action {
        let wanted = CurlPauseMask(for: reasons)
        phase = .running(reasons: reasons, applied: wanted)
        return wanted == applied ? .none : .applyPause(wanted)
    }
}
