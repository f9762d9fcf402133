#if canImport(Glibc)
import Glibc
#endif

/// How the kernel schedules a curl loop's thread: as a batch thread while its transport carries
/// more than one transfer, as an ordinary thread otherwise (Linux with glibc only).
///
/// A loop thread that is woken (a response arrived, a request was queued) normally preempts the
/// thread that woke it when both want the same CPU. Under concurrent load the waker is usually a
/// thread doing a request's work (a drain writing the HTTP cache, a task sending its next
/// request), which then resumes only after the loop sleeps again: two thread switches per
/// wake-up, and the loop handles its events one wake-up at a time. A batch thread
/// (`SCHED_BATCH`) does not preempt on wake-up: it runs at once on an idle CPU, otherwise once its
/// waker sleeps or uses up its time slice, and then finds several events and commands waiting.
/// Workload M (the HTTP cache, 8 in flight) ran at 1.14× the rate with about a third fewer
/// context switches in interleaved runs, 1.29× in a full run (Benchmarks/PROFILES.md, issue 43).
///
/// With one transfer at a time nothing waits behind the loop and every wake-up is that transfer's
/// latency (the HTTP cache one at a time ran at 0.95× with a batch thread), so the thread stays
/// ordinary then. The count is the whole transport's (two loops may share a few transfers
/// unevenly), looked at when the loop is about to sleep; the policy changes only when the count
/// crosses ``yieldingFrom``. A speed trick behind ``FastPaths`` (`loopyield`).
struct CurlLoopScheduling {
    /// The fewest transfers in flight on the transport at which its loop threads stop preempting
    /// their wakers.
    static let yieldingFrom = 2

    /// What the transport's transfer count asks of a loop thread's policy.
    enum Action: Equatable {
        /// The policy stays.
        case none
        /// Become a batch thread (no preemption on wake-up).
        case yieldOnWake
        /// Become an ordinary thread again.
        case preemptOnWake
    }

    /// Whether the loop's thread was made a batch thread (and not made ordinary since).
    private(set) var yielding = false
    /// Whether the trick is on and the platform has the policy.
    private let enabled: Bool

    init(enabled: Bool) {
        #if canImport(Glibc)
        self.enabled = enabled
        #else
        self.enabled = false
        #endif
    }

    /// The transition for a loop thread that is `yielding` while the transport carries `transfers`.
    static func action(yielding: Bool, transfers: Int) -> Action {
        let wanted = transfers >= yieldingFrom
        if wanted == yielding { return .none }
        return wanted ? .yieldOnWake : .preemptOnWake
    }

    /// Called by the loop thread before it sleeps: moves its own policy to what `transfers` asks
    /// for; returns whether it asked the kernel for a change.
    mutating func update(transfers: Int) -> Bool {
        guard enabled else { return false }
        switch Self.action(yielding: yielding, transfers: transfers) {
        case .none:
            return false
        case .yieldOnWake:
            yielding = true
        case .preemptOnWake:
            yielding = false
        }
        Self.setCallingThreadPolicy(batch: yielding)
        return true
    }

    #if canImport(Glibc)
    // From <linux/sched.h>; Glibc declares SCHED_BATCH only under _GNU_SOURCE, which Swift's
    // overlay does not define. Neither policy needs a privilege.
    private static let batchPolicy: Int32 = 3
    private static let ordinaryPolicy: Int32 = 0
    #endif

    /// Sets the calling thread's policy. Best effort: a kernel or sandbox that refuses leaves the
    /// thread as it was, which only costs the speed above.
    private static func setCallingThreadPolicy(batch: Bool) {
        #if canImport(Glibc)
        var parameters = sched_param()
        parameters.sched_priority = 0
        _ = pthread_setschedparam(pthread_self(), batch ? batchPolicy : ordinaryPolicy, &parameters)
        #endif
    }

    /// Whether the kernel schedules the calling thread as a batch thread (false outside Linux).
    static var callingThreadIsBatch: Bool {
        #if canImport(Glibc)
        var policy: Int32 = 0
        var parameters = sched_param()
        return pthread_getschedparam(pthread_self(), &policy, &parameters) == 0 && policy == batchPolicy
        #else
        return false
        #endif
    }
}
